"""Tell systemd how the service is doing: ready, alive, busy with what, stopping.

A Type=notify unit is "started" only when the service says READY=1, so units ordered
after it wait for a controller that really answers. With WatchdogSec= set, systemd
kills and restarts the service when WATCHDOG=1 pings stop, which turns a hung event
loop into a restart. The protocol is one AF_UNIX datagram per message, so a few lines
of socket code replace a dependency. Outside systemd (NOTIFY_SOCKET unset) every call
does nothing, so the same code runs under a terminal or pytest.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass

from cardshoe.drivers.text_input import whole_number


@dataclass(frozen=True)
class Notifier:
    """Where to send notifications and what watchdog timeout systemd set.

    `address` is the socket path as the kernel wants it (a leading NUL for an
    abstract-namespace socket), or None when there is no service manager to tell.
    """

    address: str | None
    watchdog_usec: int | None = None

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> Notifier:
        """Read NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID as systemd sets them."""
        env = os.environ if environ is None else environ
        return cls(
            address=_socket_address(env.get("NOTIFY_SOCKET", "")),
            watchdog_usec=_watchdog_usec_for_this_process(env),
        )

    @property
    def enabled(self) -> bool:
        """True when a service manager listens, so the calls below send something."""
        return self.address is not None

    def ready(self) -> None:
        """Startup is complete: the journal is replayed and the devices answer."""
        self._send("READY=1")

    def status(self, text: str) -> None:
        """One line shown by `systemctl status`, e.g. which round is being dealt."""
        self._send("STATUS=" + " ".join(text.split()))

    def watchdog(self) -> None:
        """The event loop is alive; call at least every watchdog_interval() seconds."""
        self._send("WATCHDOG=1")

    def stopping(self) -> None:
        """Shutdown has begun, so a slow stop is not mistaken for a hang."""
        self._send("STOPPING=1")

    def watchdog_interval(self) -> float | None:
        """Seconds between watchdog pings, or None when no watchdog is set for us.

        Half the timeout, as systemd recommends, so one late ping is not fatal.
        """
        if self.watchdog_usec is None:
            return None
        return self.watchdog_usec / 2_000_000

    def _send(self, message: str) -> None:
        if self.address is None:
            return
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            sock.sendto(message.encode(), self.address)


def _socket_address(notify_socket: str) -> str | None:
    if not notify_socket:
        return None
    if notify_socket.startswith("@"):
        return "\0" + notify_socket[1:]
    if notify_socket.startswith("/"):
        return notify_socket
    raise ValueError(
        f"NOTIFY_SOCKET={notify_socket!r} is neither a path nor an abstract socket (@name)"
    )


def _watchdog_usec_for_this_process(env: Mapping[str, str]) -> int | None:
    usec_text = env.get("WATCHDOG_USEC", "")
    if not usec_text:
        return None
    pid_text = env.get("WATCHDOG_PID", "")
    if pid_text and _positive_int("WATCHDOG_PID", pid_text) != os.getpid():
        return None
    return _positive_int("WATCHDOG_USEC", usec_text)


def _positive_int(name: str, text: str) -> int:
    number = whole_number(text)
    if not number:
        raise ValueError(f"{name}={text!r} is not a positive integer")
    return number
