"""A USB HID boot keyboard read directly through pyusb: the reports, nothing else.

A barcode reader in keyboard mode is bound to the kernel's keyboard driver,
which would type every card into whatever has the focus. So the host
detaches that driver, claims the interface and reads the interrupt IN
endpoint itself. The driver is not re-attached on close: a card reader of
the table must never type into a console.
"""

from __future__ import annotations

import contextlib
import errno
from typing import Any

import usb.core
import usb.util

from cardshoe.drivers.errors import DeviceGone
from cardshoe.drivers.hid.boot_keyboard import REPORT_SIZE
from cardshoe.drivers.transports.base import READ_POLL_S
from cardshoe.drivers.transports.usb_bulk import (
    active_configuration,
    claim_usb_device,
    read_string,
)

HID_CLASS, BOOT_SUBCLASS, KEYBOARD_PROTOCOL = 0x03, 0x01, 0x01


class KeyboardReports:
    """The open keyboard interface of one reader."""

    def __init__(self, device: usb.core.Device, interface: int, endpoint: int, url: str) -> None:
        self._device = device
        self._interface = interface
        self._endpoint = endpoint
        self._closed = False
        self.url = url

    @classmethod
    def open(cls, url: str, *, backend: Any = None) -> KeyboardReports:
        device, (interface, endpoint) = claim_usb_device(
            url,
            backend,
            _claim_keyboard,
            f"{url} has no boot keyboard interface: set the reader to USB keyboard mode",
        )
        return cls(device, interface, endpoint, url)

    @property
    def product(self) -> str:
        return read_string(self._device, self._device.iProduct) or "HID card reader"

    @property
    def serial_number(self) -> str | None:
        return read_string(self._device, self._device.iSerialNumber)

    def read(self) -> bytes | None:
        """The next report, or None after READ_POLL_S without one; DeviceGone if unplugged."""
        if self._closed:
            raise DeviceGone(f"{self.url} is closed")
        try:
            data = self._device.read(self._endpoint, REPORT_SIZE, timeout=round(READ_POLL_S * 1000))
        except usb.core.USBTimeoutError:
            return None
        except usb.core.USBError as exc:
            if exc.errno == errno.ETIMEDOUT:
                return None
            raise DeviceGone(f"{self.url}: {exc}") from exc
        return bytes(data)

    def close(self) -> None:
        self._closed = True
        with contextlib.suppress(usb.core.USBError):
            usb.util.release_interface(self._device, self._interface)
        usb.util.dispose_resources(self._device)


def _claim_keyboard(device: usb.core.Device) -> tuple[int, int] | None:
    """Claim the boot keyboard interface: (its number, its interrupt IN endpoint), or None."""
    configuration = active_configuration(device)
    interface = usb.util.find_descriptor(
        configuration,
        bInterfaceClass=HID_CLASS,
        bInterfaceSubClass=BOOT_SUBCLASS,
        bInterfaceProtocol=KEYBOARD_PROTOCOL,
    )
    if interface is None:
        return None
    endpoint = usb.util.find_descriptor(
        interface,
        custom_match=lambda found: (
            usb.util.endpoint_direction(found.bEndpointAddress) == usb.util.ENDPOINT_IN
            and usb.util.endpoint_type(found.bmAttributes) == usb.util.ENDPOINT_TYPE_INTR
        ),
    )
    if endpoint is None:
        return None
    number = interface.bInterfaceNumber
    if device.is_kernel_driver_active(number):
        device.detach_kernel_driver(number)
    usb.util.claim_interface(device, number)
    return number, endpoint.bEndpointAddress
