"""The USB transport through pyusb's real core, with the simulator's backend for libusb."""

from __future__ import annotations

import errno

import pytest
from usb.core import USBError

from cardshoe.drivers.errors import AccessDenied, DeviceNotFound, InvalidUrl
from cardshoe.drivers.transports.registry import open_transport
from cardshoe.drivers.transports.usb_bulk import UsbAddress, parse_usb_url
from cardshoe.firmware_sim.devices import create_device
from cardshoe.firmware_sim.usb_backend import SimUsbBackend, SimUsbDevice, SimUsbHandle


class PermissionDeniedBackend(SimUsbBackend):
    """The device node without the udev group's permission, which root never meets."""

    def open_device(self, dev: SimUsbDevice) -> SimUsbHandle:
        raise USBError("Access denied (insufficient permissions)", -3, errno.EACCES)


@pytest.mark.parametrize(
    ("url", "address"),
    [
        ("usb://1209:0001", UsbAddress(0x1209, 0x0001)),
        ("usb://1209:00A1/SN-7", UsbAddress(0x1209, 0x00A1, "SN-7")),
    ],
)
def test_usb_urls_name_vid_pid_and_serial(url: str, address: UsbAddress) -> None:
    assert parse_usb_url(url) == address
    assert parse_usb_url(address.url) == address


@pytest.mark.parametrize("url", ["usb://1209", "usb://12g9:0001", "usb://1209:0001/"])
def test_a_malformed_usb_url_is_refused(url: str) -> None:
    with pytest.raises(InvalidUrl, match="usb://VID:PID"):
        parse_usb_url(url)


def test_the_serial_number_picks_the_device() -> None:
    first = create_device("cs-1", serial_number="SHOE-1")
    second = create_device("cs-1", serial_number="SHOE-2")
    with SimUsbBackend(first, second) as backend:
        with pytest.raises(DeviceNotFound, match="SHOE-3"):
            open_transport("usb://1209:0001/SHOE-3", usb_backend=backend)
        transport = open_transport("usb://1209:0001/SHOE-2", usb_backend=backend)
        transport.close()


def test_access_denied_names_the_udev_group() -> None:
    core = create_device("cs-1", serial_number="SHOE-1")
    with PermissionDeniedBackend(core) as backend, pytest.raises(AccessDenied) as denied:
        open_transport("usb://1209:0001/SHOE-1", usb_backend=backend)
    assert "group 'cardshoe'" in str(denied.value)
