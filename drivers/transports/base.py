"""One small interface for every way bytes reach a device.

The link layer above sees only a byte stream: serial ports, TCP, the
simulator's sim:// and USB bulk pipes all carry the same frames, so a
transport only moves bytes and turns its library's failures into the
drivers' exceptions (drivers/errors.py). registry.py maps a URL's scheme to
the transport that opens it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

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

    def set_baudrate(self, baudrate: int) -> None:  # noqa: B027 (a hook few transports use)
        """Serial lines only (a line reader's profile names its rate); others have none."""

    @abstractmethod
    def close(self) -> None:
        """Release the port or interface; never raises."""
