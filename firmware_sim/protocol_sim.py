"""pyserial's handler for sim:// URLs (see sim_url.py; register it explicitly first).

pyserial imports `<package>.protocol_<scheme>` and uses its Serial class,
so this module holds only that class: a SerialBase whose byte stream is a
socket pair to a simulated device running in this process. Line settings
are accepted and ignored, and there are no modem lines, as on a bare
three-wire RS-232 cable.
"""

from __future__ import annotations

import select
import socket
from typing import Any

from serial.serialutil import PortNotOpenError, SerialBase, SerialException, Timeout

from cardshoe.firmware_sim.attach_local import DeviceUnplugged, LocalAttachment
from cardshoe.firmware_sim.core import FirmwareCore
from cardshoe.firmware_sim.errors import SimConfigError
from cardshoe.firmware_sim.sim_url import open_sim_url


class Serial(SerialBase):
    """A serial port onto a simulated device; `device` is that device, for tests and demos."""

    _attachment: LocalAttachment[FirmwareCore] | None = None
    _owns_attachment = False
    _socket: socket.socket | None = None

    @property
    def device(self) -> FirmwareCore:
        if self._attachment is None:
            raise PortNotOpenError()
        return self._attachment.core

    def open(self) -> None:
        url = self.port
        if url is None:
            raise SerialException("Port must be configured before it can be used.")
        if self.is_open:
            raise SerialException("Port is already open.")
        try:
            self._attachment, self._owns_attachment = open_sim_url(url)
            self._socket = self._attachment.connect()
        except SimConfigError:
            # A ValueError, as pyserial's own handlers raise for a malformed URL.
            self._release()
            raise
        except DeviceUnplugged as exc:
            self._release()
            raise SerialException(f"could not open port {self.portstr}: {exc}") from None
        self._socket.setblocking(False)
        self.is_open = True

    def close(self) -> None:
        if self.is_open:
            self.is_open = False
            self._release()

    def _release(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None
        if self._owns_attachment and self._attachment is not None:
            self._attachment.close()
        self._attachment = None

    def _reconfigure_port(self) -> None:
        """Line settings mean nothing to an in-process byte stream."""

    def _update_rts_state(self) -> None:
        """No modem lines: the protocol never depends on them."""

    def _update_dtr_state(self) -> None:
        """No modem lines: the protocol never depends on them."""

    def _update_break_state(self) -> None:
        """No break condition on an in-process stream."""

    @property
    def cts(self) -> bool:
        return False

    @property
    def dsr(self) -> bool:
        return False

    @property
    def ri(self) -> bool:
        return False

    @property
    def cd(self) -> bool:
        return False

    @property
    def in_waiting(self) -> int:
        sock = self._open_socket()
        readable, _, _ = select.select([sock], [], [], 0)
        return len(readable)

    @property
    def out_waiting(self) -> int:
        self._open_socket()
        return 0

    def read(self, size: int = 1) -> bytes:
        sock = self._open_socket()
        data = bytearray()
        # None (wait for ever) is a timeout pyserial's Timeout takes, though its stub says float.
        timeout = Timeout(self.timeout)  # type: ignore[arg-type]
        while len(data) < size:
            readable, _, _ = select.select([sock], [], [], timeout.time_left())
            if not readable:
                break
            chunk = sock.recv(size - len(data))
            if not chunk:
                raise SerialException("the simulated device was unplugged")
            data += chunk
            if timeout.expired():
                break
        return bytes(data)

    def write(self, data: Any) -> int:
        """Send data (any bytes-like object, as SerialBase.write takes) to the device."""
        sock = self._open_socket()
        try:
            sock.setblocking(True)
            sock.sendall(bytes(data))
        except OSError as exc:
            raise SerialException(f"write failed: the simulated device is gone ({exc})") from None
        finally:
            sock.setblocking(False)
        return len(data)

    def reset_input_buffer(self) -> None:
        sock = self._open_socket()
        while select.select([sock], [], [], 0)[0]:
            if not sock.recv(4096):
                return

    def reset_output_buffer(self) -> None:
        self._open_socket()

    def _open_socket(self) -> socket.socket:
        if not self.is_open or self._socket is None:
            raise PortNotOpenError()
        return self._socket
