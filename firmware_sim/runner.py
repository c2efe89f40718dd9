"""The background thread that moves bytes between a device and its attachment.

Every attach mode (pty, TCP, in-process socket pairs for sim:// and the USB
backend) is a DeviceThread around one SimulatedDevice and one Endpoint. The
thread waits in select() on the endpoint's descriptors and on a wake-up
pipe that the core pokes when it has output (an event queued from the test
thread, a plug change), and ticks the core at least every POLL_INTERVAL_S
so retransmissions and timers run on time.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import select
import socket
import threading
import time
from collections.abc import Callable
from typing import Protocol

from cardshoe.firmware_sim.timing import Timing

log = logging.getLogger(__name__)

POLL_INTERVAL_S = 0.01
"""The longest the thread sleeps between two ticks: well inside the 200 ms retransmit time."""
READ_SIZE = 4096


class SimulatedDevice(Protocol):
    """What the thread drives: a FirmwareCore, or a reader personality (line_reader.py)."""

    timing: Timing
    plugged: bool

    @property
    def serial_number(self) -> str: ...

    def feed(self, data: bytes) -> None: ...

    def take_output(self) -> bytes: ...

    def tick(self) -> None: ...

    def link_opened(self) -> None: ...

    def add_listener(self, listener: Callable[[], None]) -> None: ...

    def remove_listener(self, listener: Callable[[], None]) -> None: ...


class Endpoint(Protocol):
    """The host's end of the byte stream, as the device thread sees it."""

    def fds(self) -> list[int]:
        """Descriptors to wait on for host bytes (or connections)."""
        ...

    def read(self, fd: int) -> bytes:
        """Host bytes from a readable descriptor; b"" when there were none."""
        ...

    def write(self, data: bytes) -> None:
        """Device bytes for the host; dropped when no host is there to take them."""
        ...

    def plug_changed(self, plugged: bool) -> None:
        """The cable was pulled or put back: drop or restore the host's connection."""
        ...

    def close(self) -> None: ...


class DeviceThread:
    """Runs a core against an endpoint until close(); one per attachment."""

    def __init__(self, core: SimulatedDevice, endpoint: Endpoint, name: str) -> None:
        self.core = core
        self.endpoint = endpoint
        self._stop = threading.Event()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        core.add_listener(self.wake)

    def start(self) -> None:
        self._thread.start()

    def wake(self) -> None:
        """Make the thread look at the core now (safe from any thread)."""
        # A full pipe wakes the thread anyway; a closed one means it has stopped.
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"\x01")

    def close(self) -> None:
        """Stop the thread and release the endpoint; the core itself lives on."""
        if self._stop.is_set():
            return
        self._stop.set()
        self.wake()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join()
        self.core.remove_listener(self.wake)
        self.endpoint.close()
        os.close(self._wake_r)
        os.close(self._wake_w)

    def _run(self) -> None:
        plugged = self.core.plugged
        while not self._stop.is_set():
            try:
                readable, _, _ = select.select(
                    [self._wake_r, *self.endpoint.fds()], [], [], POLL_INTERVAL_S
                )
            except OSError as exc:
                if exc.errno != errno.EBADF:
                    raise
                # Another thread replaced or dropped the host's connection between fds()
                # and select(); ask the endpoint again.
                continue
            for fd in readable:
                if fd == self._wake_r:
                    self._drain_wake_pipe()
                else:
                    data = self.endpoint.read(fd)
                    if data:
                        self.core.feed(data)
            self.core.tick()
            if self.core.plugged != plugged:
                plugged = self.core.plugged
                self.endpoint.plug_changed(plugged)
            self._flush()

    def _flush(self) -> None:
        output = self.core.take_output()
        if output:
            self.endpoint.write(output)
            wire_time = self.core.timing.wire_time_s(len(output))
            if wire_time:
                time.sleep(wire_time)

    def _drain_wake_pipe(self) -> None:
        try:
            while os.read(self._wake_r, READ_SIZE):
                pass
        except BlockingIOError:
            pass


class SocketEndpoint:
    """One host connection at a time over a stream socket; a newer one replaces it.

    The base of the TCP and in-process attachments: `adopt` takes a freshly
    connected socket, starts it with the 0x00 of a newly opened link, and
    drops the previous connection, as a serial port has one user at a time.
    """

    def __init__(self, core: SimulatedDevice) -> None:
        self.core = core
        self._lock = threading.Lock()
        self._host: socket.socket | None = None

    def adopt(self, connection: socket.socket) -> None:
        connection.settimeout(1.0)
        with self._lock:
            previous, self._host = self._host, connection
        if previous is not None:
            previous.close()
        self.core.link_opened()

    def fds(self) -> list[int]:
        with self._lock:
            return [] if self._host is None else [self._host.fileno()]

    def read(self, fd: int) -> bytes:
        with self._lock:
            host = self._host
        if host is None or host.fileno() != fd:
            return b""
        try:
            data = host.recv(READ_SIZE)
        except OSError as exc:
            log.info("simulator: host connection failed: %s", exc)
            data = b""
        if not data:
            self._drop(host)
        return data

    def write(self, data: bytes) -> None:
        with self._lock:
            host = self._host
        if host is None:
            return
        try:
            host.sendall(data)
        except OSError as exc:
            log.info("simulator: host connection lost while sending: %s", exc)
            self._drop(host)

    def plug_changed(self, plugged: bool) -> None:
        if not plugged:
            with self._lock:
                host = self._host
            if host is not None:
                self._drop(host)

    def close(self) -> None:
        with self._lock:
            host, self._host = self._host, None
        if host is not None:
            host.close()

    def _drop(self, host: socket.socket) -> None:
        with self._lock:
            if self._host is host:
                self._host = None
        host.close()
