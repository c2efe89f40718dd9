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

    def close(self) -> None:
        with contextlib.suppress(serial.SerialException, OSError):
            self._port.close()


def open_error(url: str, exc: serial.SerialException) -> DriverError:
    """The drivers' exception for a port that would not open."""
    code = exc.errno
    if code in _DENIED:
        return AccessDenied(url)
    if code in _LOCKED:
        holder = port_holder(url)
        held_by = f" by {holder}" if holder else ""
        return PortBusy(f"{url} is in use{held_by}: close that program or pick another port")
    if code in _ABSENT:
        return DeviceNotFound(f"no device at {url}: check the cable and the path")
    return DeviceNotFound(f"cannot open {url}: {exc}")


def port_holder(path: str) -> str | None:
    """Which process has the device node open, as "name (pid N)", if we may look."""
    try:
        target = Path(path).resolve(strict=True)
    except OSError:
        return None
    for process in Path("/proc").iterdir():
        if not process.name.isdigit():
            continue
        try:
            for fd in (process / "fd").iterdir():
                if Path(os.readlink(fd)) == target:
                    name = (process / "comm").read_text().strip()
                    return f"{name} (pid {process.name})"
        except OSError:
            continue
    return None
