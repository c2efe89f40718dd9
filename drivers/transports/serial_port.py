"""The serial transport: whatever pyserial's serial_for_url can open.

/dev/ttyUSB0, /dev/serial/by-id/..., socket://host:port, loop://, spy:// and
the simulator's sim:// all come through here, set to the protocol's 8N1 at
115200 with no flow control and no use of the modem lines. Every port is
opened with exclusive=True (an advisory flock), so two processes never read
the same shoe; when the lock is taken, the error names the holder.
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path
from urllib.parse import urlsplit

import serial

from cardshoe.drivers.errors import (
    AccessDenied,
    DeviceGone,
    DeviceNotFound,
    DriverError,
    InvalidUrl,
    PortBusy,
)
from cardshoe.drivers.protocol.link_constants import SERIAL_BAUDRATE
from cardshoe.drivers.transports.base import READ_POLL_S, WRITE_TIMEOUT_S, Transport

_ABSENT = {errno.ENOENT, errno.ENODEV, errno.ENXIO}
_DENIED = {errno.EACCES, errno.EPERM}
_LOCKED = {errno.EWOULDBLOCK, errno.EAGAIN, errno.EBUSY}
READ_CHUNK = 4096


class SerialTransport(Transport):
    def __init__(self, port: serial.Serial, url: str) -> None:
        self._port = port
        self.url = url

    @classmethod
    def open(cls, url: str) -> SerialTransport:
        _check_network_address(url)
        try:
            port = serial.serial_for_url(
                url,
                baudrate=SERIAL_BAUDRATE,
                bytesize=serial.EIGHTBITS,
                parity=serial.PARITY_NONE,
                stopbits=serial.STOPBITS_ONE,
                xonxoff=False,
                rtscts=False,
                dsrdtr=False,
                timeout=READ_POLL_S,
                write_timeout=WRITE_TIMEOUT_S,
                exclusive=True,
            )
        except serial.SerialException as exc:
            raise open_error(url, exc) from exc
        except ValueError as exc:
            raise InvalidUrl(f"{url}: {exc}") from exc
        return cls(port, url)

    def read(self) -> bytes:
        """Wait for one byte, then take whatever else has arrived.

        Some handlers (socket://, sim://) can only say that bytes are
        waiting, not how many, so this asks again until nothing is left.
        """
        try:
            data = bytearray(self._port.read(1))
            while data and len(data) < READ_CHUNK and (waiting := self._port.in_waiting):
                data += self._port.read(min(waiting, READ_CHUNK - len(data)))
        except (serial.SerialException, OSError) as exc:
            raise DeviceGone(f"{self.url}: {exc}") from exc
        return bytes(data)

    def write(self, data: bytes) -> None:
        try:
            self._port.write(data)
        except (serial.SerialException, OSError) as exc:
            raise DeviceGone(f"{self.url}: {exc}") from exc

    def set_baudrate(self, baudrate: int) -> None:
        try:
            self._port.baudrate = baudrate
        except (serial.SerialException, OSError, ValueError) as exc:
            raise InvalidUrl(f"{self.url}: cannot set {baudrate} baud: {exc}") from exc

    def close(self) -> None:
        with contextlib.suppress(serial.SerialException, OSError):
            self._port.close()


NETWORK_SCHEMES = frozenset({"socket", "rfc2217"})
"""pyserial's network URLs: each needs HOST:PORT, which pyserial itself does not check."""


def _check_network_address(url: str) -> None:
    """Refuse a socket:// or rfc2217:// URL without a host and a port 1..65535.

    pyserial fails on a missing port with a TypeError deep inside ('<=' not
    supported between int and None), which says nothing to a technician.
    """
    parts = urlsplit(url)
    if parts.scheme not in NETWORK_SCHEMES:
        return
    try:
        port = parts.port
    except ValueError:
        port = None
    if not parts.hostname or port is None or port == 0:
        raise InvalidUrl(
            f"{url}: a {parts.scheme}:// URL names a host and a port 1..65535, "
            f"for example {parts.scheme}://192.168.1.20:7000"
        )


def open_error(url: str, exc: serial.SerialException) -> DriverError:
    """The drivers' exception for a port that would not open."""
    code = exc.errno
    if code in _DENIED:
        return AccessDenied(url)
    if code in _LOCKED:
        holder = port_holder(url) or "another program (which one cannot be told from here)"
        return PortBusy(f"{url} is in use by {holder}: close that program or pick another port")
    if code in _ABSENT:
        return DeviceNotFound(f"no device at {url}: check the cable and the path")
    # pyserial opens any file, then fails to set it up as a terminal (termios) and says so
    # in its own words: /dev/null, a regular file or a disk is simply not a serial port.
    cause = exc.__context__  # termios.error(errno, text), not an OSError
    if cause is not None and cause.args[:1] == (errno.ENOTTY,):
        return InvalidUrl(
            f"{url} is not a serial port: give the shoe's port, such as /dev/ttyUSB0 or "
            "/dev/cardshoe/shoe-SERIAL ('shoectl list' shows the shoes attached)"
        )
    return DeviceNotFound(f"cannot open {url}: {exc}")


def port_holder(path: str) -> str | None:
    """Which process holds the port's exclusive lock, as "name (pid N)"; None if none can be told.

    Every opener takes the port's flock (exclusive=True), so the kernel's lock
    table names the holder. Merely having the node open is no sign: the
    simulator keeps the far end of its pty open, and that once made every
    "in use" name the simulator, whoever held the port.
    """
    try:
        node = os.stat(Path(path).resolve(strict=True))
        locks = Path("/proc/locks").read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError):
        return None
    wanted = f"{os.major(node.st_dev):02x}:{os.minor(node.st_dev):02x}:{node.st_ino}"
    for line in locks.splitlines():
        # "1: FLOCK  ADVISORY  WRITE 26770 00:1a:4 0 EOF"; a waiter has "->" before FLOCK.
        fields = line.split()
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == wanted:
            pid = fields[4]
            try:
                name = Path("/proc", pid, "comm").read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError):
                name = "a process"
            return f"{name} (pid {pid})"
    return None
