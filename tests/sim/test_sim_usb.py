"""The simulator's pyusb backend under pyusb's real core (libusb is absent here)."""

from __future__ import annotations

import errno

import pytest
import usb.core
import usb.util
from support.service_support import wait_until
from support.sim_support import StreamHost

from cardshoe.drivers.protocol.link_constants import (
    SIMULATOR_USB_PID,
    SIMULATOR_USB_VID,
    USB_BULK_IN_ENDPOINT,
    USB_BULK_OUT_ENDPOINT,
)
from cardshoe.drivers.protocol.messages import Ack, GetInfo, Hello, SelfTestResult
from cardshoe.firmware_sim.devices import create_device
from cardshoe.firmware_sim.usb_backend import SimUsbBackend


def find(backend: SimUsbBackend, **match: object) -> usb.core.Device:
    device = usb.core.find(
        idVendor=SIMULATOR_USB_VID, idProduct=SIMULATOR_USB_PID, backend=backend, **match
    )
    assert device is not None
    return device


def usb_host(device: usb.core.Device) -> StreamHost:
    def read() -> bytes:
        try:
            return bytes(device.read(USB_BULK_IN_ENDPOINT, 64, timeout=50))
        except usb.core.USBTimeoutError:
            return b""

    return StreamHost(lambda data: device.write(USB_BULK_OUT_ENDPOINT, data), read)


def test_pyusb_finds_the_device_and_reads_its_descriptors_and_strings() -> None:
    with SimUsbBackend(create_device("cs-1"), create_device("cs-auto")) as backend:
        device = find(backend, serial_number="SIM-CSAUTO-0001")
        assert device.product == "CS-AUTO simulated shuffler-dealer"
        assert device.manufacturer == "cardshoe project"
        assert device.langids == (0x0409,)
        assert (device.bus, device.address, device.port_number) == (1, 3, 2)
        assert device.speed == usb.util.SPEED_FULL
        assert device.bcdDevice == 0x0100
        interface = device.get_active_configuration()[(0, 0)]
        assert interface.bInterfaceClass == 0xFF
        addresses = [endpoint.bEndpointAddress for endpoint in interface]
        assert addresses == [USB_BULK_OUT_ENDPOINT, USB_BULK_IN_ENDPOINT]
        assert all(endpoint.wMaxPacketSize == 64 for endpoint in interface)
        assert len(list(usb.core.find(find_all=True, backend=backend))) == 2
        usb.util.dispose_resources(device)


def test_frames_cross_the_bulk_pipes_split_over_64_byte_packets() -> None:
    with SimUsbBackend(create_device("cs-1")) as backend:
        device = find(backend)
        device.set_configuration()
        host = usb_host(device)
        host.send(GetInfo(1, 0))
        hello = host.wait_for(lambda m: isinstance(m, Hello) and m.request_id == 1)
        assert hello.serial_number == device.serial_number == "SIM-CS1-0001"
        result = host.wait_for(lambda m: isinstance(m, SelfTestResult))
        host.send(Ack(result.seq))
        usb.util.dispose_resources(device)


def test_unplug_fails_transfers_with_enodev_and_hides_the_device_until_replug() -> None:
    core = create_device("cs-1")
    with SimUsbBackend(core) as backend:
        device = find(backend)
        host = usb_host(device)
        host.send(GetInfo(1, 0))
        host.wait_for(lambda m: isinstance(m, Hello) and m.request_id == 1)
        core.unplug()
        with pytest.raises(usb.core.USBError) as failure:
            device.read(USB_BULK_IN_ENDPOINT, 64, timeout=50)
        assert failure.value.errno == errno.ENODEV
        assert usb.core.find(backend=backend) is None
        usb.util.dispose_resources(device)
        core.replug()
        # The re-plugged firmware queues its own self-test result (seq 2) when the test ends;
        # asked before that, HELLO rightly names 2 as the next. Ask once it has.
        wait_until(lambda: core.self_test_passed is not None, "the re-plug self-test")
        again = find(backend)
        host = usb_host(again)
        host.send(GetInfo(2, 0))
        hello = host.wait_for(lambda m: isinstance(m, Hello) and m.request_id == 2)
        assert hello.next_seq == 3, "the first self-test result is still unacknowledged"
        assert host.wait_for(lambda m: isinstance(m, SelfTestResult)).seq == 1
        usb.util.dispose_resources(again)
