"""One small interface for every way bytes reach a device, and the URL that picks it.

The link layer above sees only a byte stream: serial ports, TCP, the
simulator's sim:// and USB bulk pipes all carry the same frames, so a
transport only moves bytes and turns its library's failures into the
drivers' exceptions (errors.py). A URL string chooses the transport, so test,
debugging and production differ by that string alone.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

READ_POLL_S = 0.05
"""A read returns after this long without data, so the reader thread can stop promptly."""
WRITE_TIMEOUT_S = 1.0
"""A write that cannot finish in this long means the peer stopped reading: the link is down."""
USB_URL_SCHEME = "usb://"


class Transport(ABC):
    """An open, exclusive byte stream to one device.

    read() is called from one reader thread and write() from any thread
    (the link layer serialises writes); both raise DeviceGone when the
    device is unplugged or the stream closed.
    """

    url: str

    @abstractmethod
    def read(self) -> bytes:
        """The bytes that arrived, or b"" after READ_POLL_S without any."""

    @abstractmethod
    def write(self, data: bytes) -> None:
        """Send all of data, or raise DeviceGone."""

    @abstractmethod
    def close(self) -> None:
        """Release the port or interface; never raises."""


def open_transport(url: str, *, usb_backend: Any = None) -> Transport:
    """Open the transport a URL names: usb://VID:PID[/SERIAL] or any pyserial URL.

    usb_backend is a pyusb IBackend; tests pass the simulator's so the real
    pyusb code runs without libusb. Serial URLs ignore it.
    """
    if url.startswith(USB_URL_SCHEME):
        from cardshoe.drivers.transports.usb_bulk import UsbTransport

        return UsbTransport.open(url, backend=usb_backend)
    from cardshoe.drivers.transports.serial_port import SerialTransport

    return SerialTransport.open(url)
