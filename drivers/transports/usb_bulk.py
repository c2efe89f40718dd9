"""The USB transport: the protocol's byte stream over a vendor interface's bulk pipes.

A device is named usb://VID:PID[/SERIAL] (hex IDs). The pyusb backend comes
through the constructor, never a global patch, so tests run pyusb's real
code against the simulator's backend and production uses libusb. Bulk
packets are not aligned to frames (docs/protocol.md), so reads return raw
bytes for the same frame decoder the serial transport feeds.
"""

from __future__ import annotations

import contextlib
import errno
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import usb.core
import usb.util

from cardshoe.drivers.errors import AccessDenied, DeviceGone, DeviceNotFound, InvalidUrl
from cardshoe.drivers.protocol.link_constants import (
    USB_BULK_IN_ENDPOINT,
    USB_BULK_OUT_ENDPOINT,
    USB_INTERFACE_CLASS,
    USB_MAX_PACKET_SIZE,
)
from cardshoe.drivers.transports.base import READ_POLL_S, USB_URL_SCHEME, WRITE_TIMEOUT_S, Transport

_URL = re.compile(r"^usb://([0-9a-fA-F]{4}):([0-9a-fA-F]{4})(?:/(.+))?$")
_DENIED = {errno.EACCES, errno.EPERM}
Claimed = TypeVar("Claimed")
NO_BACKEND_HINT = "no USB backend: install libusb-1.0-0 (apt-get install libusb-1.0-0)"


@dataclass(frozen=True)
class UsbAddress:
    vendor_id: int
    product_id: int
    serial_number: str | None = None
    """None matches the first device with this VID:PID."""

    @property
    def url(self) -> str:
        serial = f"/{self.serial_number}" if self.serial_number else ""
        return f"{USB_URL_SCHEME}{self.vendor_id:04x}:{self.product_id:04x}{serial}"


def parse_usb_url(url: str) -> UsbAddress:
    match = _URL.match(url)
    if match is None:
        raise InvalidUrl(f"{url!r} is not a USB device URL: write usb://VID:PID[/SERIAL] in hex")
    vendor, product, serial = match.groups()
    return UsbAddress(int(vendor, 16), int(product, 16), serial)


def usb_failure(what: str, exc: usb.core.USBError) -> AccessDenied | DeviceGone:
    """A USB error as the drivers' exception: permission problems apart from the rest."""
    if exc.errno in _DENIED:
        return AccessDenied(what)
    return DeviceGone(f"{what}: {exc}")


def read_string(device: usb.core.Device, index: int) -> str | None:
    """A string descriptor, which needs the device opened (and so, permission).

    pyusb's own properties turn a refused open into "no langid", a
    ValueError; asking for the LANGIDs directly keeps the errno.
    """
    if not index:
        return None
    try:
        langids = usb.util.get_langids(device)
        return usb.util.get_string(device, index, langids[0]) if langids else None
    except usb.core.USBError as exc:
        raise usb_failure(f"USB device {device.idVendor:04x}:{device.idProduct:04x}", exc) from exc


def read_serial_number(device: usb.core.Device) -> str | None:
    return read_string(device, device.iSerialNumber)


def find_usb_device(url: str, backend: Any = None) -> usb.core.Device:
    """The device a usb://VID:PID[/SERIAL] URL names; DeviceNotFound when none is plugged in."""
    address = parse_usb_url(url)

    def wanted(device: usb.core.Device) -> bool:
        if address.serial_number in (None, read_serial_number(device)):
            return True
        usb.util.dispose_resources(device)
        return False

    try:
        device = usb.core.find(
            idVendor=address.vendor_id,
            idProduct=address.product_id,
            backend=backend,
            custom_match=wanted,
        )
    except usb.core.NoBackendError as exc:
        raise DeviceNotFound(f"cannot open {url}: {NO_BACKEND_HINT}") from exc
    except usb.core.USBError as exc:
        raise usb_failure(url, exc) from exc
    if device is None:
        raise DeviceNotFound(f"no USB device {url}: check the cable and the serial number")
    return device


def claim_usb_device(
    url: str,
    backend: Any,
    claim: Callable[[usb.core.Device], Claimed | None],
    missing: str,
) -> tuple[usb.core.Device, Claimed]:
    """Find the device and claim(device) its interface; DeviceNotFound(missing) when claim
    finds none. Whatever fails, the device is released, never left half open."""
    device = find_usb_device(url, backend)
    try:
        claimed = claim(device)
    except usb.core.USBError as exc:
        usb.util.dispose_resources(device)
        raise usb_failure(url, exc) from exc
    if claimed is None:
        usb.util.dispose_resources(device)
        raise DeviceNotFound(missing)
    return device, claimed


def active_configuration(device: usb.core.Device) -> Any:
    """The device's configuration, setting the first one if it has none yet."""
    try:
        configuration = device.get_active_configuration()
    except usb.core.USBError:
        configuration = None
    if configuration is None:
        device.set_configuration()
        configuration = device.get_active_configuration()
    return configuration


class UsbTransport(Transport):
    def __init__(self, device: usb.core.Device, interface_number: int, url: str) -> None:
        self._device = device
        self._interface_number = interface_number
        self._closed = False
        self.url = url

    @classmethod
    def open(cls, url: str, *, backend: Any = None) -> UsbTransport:
        device, interface_number = claim_usb_device(
            url,
            backend,
            _claim_vendor_interface,
            f"{url} has no vendor-specific interface: not a cardshoe device",
        )
        return cls(device, interface_number, url)

    def read(self) -> bytes:
        self._check_open()
        try:
            data = self._device.read(
                USB_BULK_IN_ENDPOINT, USB_MAX_PACKET_SIZE, timeout=round(READ_POLL_S * 1000)
            )
        except usb.core.USBTimeoutError:
            return b""
        except usb.core.USBError as exc:
            if exc.errno == errno.ETIMEDOUT:
                return b""
            raise DeviceGone(f"{self.url}: {exc}") from exc
        return bytes(data)

    def write(self, data: bytes) -> None:
        self._check_open()
        try:
            self._device.write(USB_BULK_OUT_ENDPOINT, data, timeout=round(WRITE_TIMEOUT_S * 1000))
        except usb.core.USBError as exc:
            raise DeviceGone(f"{self.url}: {exc}") from exc

    def close(self) -> None:
        self._closed = True
        with contextlib.suppress(usb.core.USBError):
            usb.util.release_interface(self._device, self._interface_number)
        usb.util.dispose_resources(self._device)

    def _check_open(self) -> None:
        """pyusb would quietly reopen a disposed device; a closed transport stays closed."""
        if self._closed:
            raise DeviceGone(f"{self.url} is closed")


def _claim_vendor_interface(device: usb.core.Device) -> int | None:
    """Configure the device if needed and claim its vendor-specific interface, if it has one."""
    configuration = active_configuration(device)
    interface = usb.util.find_descriptor(configuration, bInterfaceClass=USB_INTERFACE_CLASS)
    if interface is None:
        return None
    number: int = interface.bInterfaceNumber
    usb.util.claim_interface(device, number)
    return number
