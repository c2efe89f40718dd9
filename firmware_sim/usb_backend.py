"""A pyusb backend (usb.backend.IBackend) that presents simulated devices on a virtual bus.

Pass it to pyusb explicitly, never as a global default:

    with SimUsbBackend(device) as backend:
        dev = usb.core.find(idVendor=0x1209, idProduct=0x0001, backend=backend)
        dev.serial_number           # the profile's serial number, via string descriptors
        dev.write(0x01, frames); dev.read(0x81, 64)

Everything above the backend is pyusb's real core, so descriptors, string
lookups, configuration and claiming take the same path as with libusb.
The device has one vendor-specific interface with a bulk OUT and a bulk IN
endpoint (docs/protocol.md, "Carriage"); the pipes carry the same byte
stream as a serial line, through an in-process attachment per open.

A simulated HID card reader (firmware_sim/hid_reader.py) is a boot
keyboard instead: one HID interface with an interrupt IN endpoint carrying
8-byte key reports, bound to the kernel's keyboard driver until the host
detaches it (claiming it before then fails with EBUSY, as with libusb).

Unplugging removes the device from enumerate_devices and makes every
transfer on an open handle fail with ENODEV, as libusb does; after the
re-plug the host finds and opens the device again.
"""

from __future__ import annotations

import errno
import logging
import select
import socket
import struct
from array import array
from collections.abc import Iterator
from dataclasses import dataclass

import usb.util
from usb.backend import IBackend
from usb.core import USBError, USBTimeoutError

from cardshoe.drivers.protocol.link_constants import (
    USB_BULK_IN_ENDPOINT,
    USB_BULK_OUT_ENDPOINT,
    USB_INTERFACE_CLASS,
    USB_MAX_PACKET_SIZE,
)
from cardshoe.drivers.text_input import whole_number
from cardshoe.firmware_sim.attach_local import LocalAttachment, attach_in_process
from cardshoe.firmware_sim.core import FirmwareCore
from cardshoe.firmware_sim.hid_reader import REPORT_SIZE, HidReader

log = logging.getLogger(__name__)

BUS_NUMBER = 1
CONFIGURATION_VALUE = 1
INTERFACE_NUMBER = 0
LANGID_US_ENGLISH = 0x0409
STRING_MANUFACTURER, STRING_PRODUCT, STRING_SERIAL_NUMBER = 1, 2, 3
GET_DESCRIPTOR = 0x06
USB_VERSION = 0x0200
LIBUSB_ERROR_NO_DEVICE = -4
LIBUSB_ERROR_TIMEOUT = -7
LIBUSB_ERROR_PIPE = -9
LIBUSB_ERROR_NOT_FOUND = -5
LIBUSB_ERROR_BUSY = -6
HID_CLASS, BOOT_SUBCLASS, KEYBOARD_PROTOCOL = 0x03, 0x01, 0x01
HID_IN_ENDPOINT = 0x81
HID_POLL_INTERVAL_MS = 10


@dataclass(frozen=True)
class DeviceDescriptor:
    """The standard device descriptor plus where the device sits on the bus."""

    idVendor: int
    idProduct: int
    bcdDevice: int
    bus: int
    address: int
    port_number: int
    bLength: int = 18
    bDescriptorType: int = usb.util.DESC_TYPE_DEVICE
    bcdUSB: int = USB_VERSION
    bDeviceClass: int = 0x00
    """0: each interface names its own class."""
    bDeviceSubClass: int = 0x00
    bDeviceProtocol: int = 0x00
    bMaxPacketSize0: int = 64
    iManufacturer: int = STRING_MANUFACTURER
    iProduct: int = STRING_PRODUCT
    iSerialNumber: int = STRING_SERIAL_NUMBER
    bNumConfigurations: int = 1
    port_numbers: tuple[int, ...] = ()
    speed: int = usb.util.SPEED_FULL

    def pack(self) -> bytes:
        return struct.pack(
            "<BBHBBBBHHHBBBB",
            self.bLength,
            self.bDescriptorType,
            self.bcdUSB,
            self.bDeviceClass,
            self.bDeviceSubClass,
            self.bDeviceProtocol,
            self.bMaxPacketSize0,
            self.idVendor,
            self.idProduct,
            self.bcdDevice,
            self.iManufacturer,
            self.iProduct,
            self.iSerialNumber,
            self.bNumConfigurations,
        )


@dataclass(frozen=True)
class EndpointDescriptor:
    bEndpointAddress: int
    bLength: int = 7
    bDescriptorType: int = usb.util.DESC_TYPE_ENDPOINT
    bmAttributes: int = usb.util.ENDPOINT_TYPE_BULK
    wMaxPacketSize: int = USB_MAX_PACKET_SIZE
    bInterval: int = 0
    bRefresh: int = 0
    bSynchAddress: int = 0
    extra_descriptors: bytes = b""

    def pack(self) -> bytes:
        return struct.pack(
            "<BBBBHB",
            self.bLength,
            self.bDescriptorType,
            self.bEndpointAddress,
            self.bmAttributes,
            self.wMaxPacketSize,
            self.bInterval,
        )


VENDOR_ENDPOINTS = (
    EndpointDescriptor(USB_BULK_OUT_ENDPOINT),
    EndpointDescriptor(USB_BULK_IN_ENDPOINT),
)
HID_ENDPOINTS = (
    EndpointDescriptor(
        HID_IN_ENDPOINT,
        bmAttributes=usb.util.ENDPOINT_TYPE_INTR,
        wMaxPacketSize=REPORT_SIZE,
        bInterval=HID_POLL_INTERVAL_MS,
    ),
)


@dataclass(frozen=True)
class InterfaceDescriptor:
    bLength: int = 9
    bDescriptorType: int = usb.util.DESC_TYPE_INTERFACE
    bInterfaceNumber: int = INTERFACE_NUMBER
    bAlternateSetting: int = 0
    bNumEndpoints: int = len(VENDOR_ENDPOINTS)
    bInterfaceClass: int = USB_INTERFACE_CLASS
    bInterfaceSubClass: int = 0x00
    bInterfaceProtocol: int = 0x00
    iInterface: int = 0
    extra_descriptors: bytes = b""

    def pack(self) -> bytes:
        return struct.pack(
            "<BBBBBBBBB",
            self.bLength,
            self.bDescriptorType,
            self.bInterfaceNumber,
            self.bAlternateSetting,
            self.bNumEndpoints,
            self.bInterfaceClass,
            self.bInterfaceSubClass,
            self.bInterfaceProtocol,
            self.iInterface,
        )


@dataclass(frozen=True)
class UsbFunction:
    """What a device offers on its one interface: its descriptor and its endpoints."""

    interface: InterfaceDescriptor
    endpoints: tuple[EndpointDescriptor, ...]
    kernel_driver: bool
    """Whether the kernel binds a driver of its own (usbhid does, for a keyboard)."""


VENDOR_FUNCTION = UsbFunction(InterfaceDescriptor(), VENDOR_ENDPOINTS, kernel_driver=False)
HID_KEYBOARD_FUNCTION = UsbFunction(
    InterfaceDescriptor(
        bNumEndpoints=len(HID_ENDPOINTS),
        bInterfaceClass=HID_CLASS,
        bInterfaceSubClass=BOOT_SUBCLASS,
        bInterfaceProtocol=KEYBOARD_PROTOCOL,
    ),
    HID_ENDPOINTS,
    kernel_driver=True,
)


@dataclass(frozen=True)
class ConfigurationDescriptor:
    function: UsbFunction
    bLength: int = 9
    bDescriptorType: int = usb.util.DESC_TYPE_CONFIG
    bNumInterfaces: int = 1
    bConfigurationValue: int = CONFIGURATION_VALUE
    iConfiguration: int = 0
    bmAttributes: int = 0x80
    """Bus-powered: unplugging is a power cycle."""
    bMaxPower: int = 50
    """In 2 mA units: 100 mA."""
    extra_descriptors: bytes = b""

    @property
    def wTotalLength(self) -> int:
        return 9 + 9 + 7 * len(self.function.endpoints)

    def pack(self) -> bytes:
        header = struct.pack(
            "<BBHBBBBB",
            self.bLength,
            self.bDescriptorType,
            self.wTotalLength,
            self.bNumInterfaces,
            self.bConfigurationValue,
            self.iConfiguration,
            self.bmAttributes,
            self.bMaxPower,
        )
        endpoints = b"".join(endpoint.pack() for endpoint in self.function.endpoints)
        return header + self.function.interface.pack() + endpoints


def string_descriptor(text: str) -> bytes:
    encoded = text.encode("utf-16-le")
    return bytes([2 + len(encoded), usb.util.DESC_TYPE_STRING]) + encoded


def bcd_version(version: str) -> int:
    """bcdDevice from "1.2.3": major and minor as two BCD bytes (0x0102)."""
    read = [whole_number(part, 9) for part in version.split(".")[:2]]
    numbers = [number for number in read if number is not None] + [0, 0]
    return int(f"{numbers[0] % 100:02d}{numbers[1] % 100:02d}", 16)


SimulatedUsbDevice = FirmwareCore | HidReader


@dataclass(eq=False)
class SimUsbDevice:
    """One simulated device on the virtual bus (pyusb's opaque `dev`)."""

    attachment: LocalAttachment[FirmwareCore] | LocalAttachment[HidReader]
    descriptor: DeviceDescriptor
    function: UsbFunction
    kernel_driver_bound: bool = False
    """The kernel's own driver holds the interface (until the host detaches it)."""
    _seen_plugged: bool = True

    def __post_init__(self) -> None:
        self.kernel_driver_bound = self.function.kernel_driver
        self.configuration = ConfigurationDescriptor(self.function)

    @property
    def core(self) -> SimulatedUsbDevice:
        return self.attachment.core

    @property
    def plugged(self) -> bool:
        """Whether the cable is in; a re-plug binds the kernel's driver again."""
        plugged = self.core.plugged
        if plugged and not self._seen_plugged:
            self.kernel_driver_bound = self.function.kernel_driver
        self._seen_plugged = plugged
        return plugged

    def strings(self) -> dict[int, str]:
        core = self.core
        if isinstance(core, HidReader):
            identity = core.identity
            return {
                STRING_MANUFACTURER: identity.manufacturer,
                STRING_PRODUCT: identity.product,
                STRING_SERIAL_NUMBER: identity.serial_number,
            }
        profile = core.profile
        return {
            STRING_MANUFACTURER: profile.manufacturer,
            STRING_PRODUCT: profile.product,
            STRING_SERIAL_NUMBER: profile.serial_number,
        }


def _bus_device(core: SimulatedUsbDevice, index: int) -> SimUsbDevice:
    where = {
        "bus": BUS_NUMBER,
        "address": index + 2,
        "port_number": index + 1,
        "port_numbers": (index + 1,),
    }
    if isinstance(core, HidReader):
        descriptor = DeviceDescriptor(
            idVendor=core.identity.usb_vid,
            idProduct=core.identity.usb_pid,
            bcdDevice=bcd_version("1.0"),
            **where,  # type: ignore[arg-type]
        )
        return SimUsbDevice(attach_in_process(core), descriptor, HID_KEYBOARD_FUNCTION)
    descriptor = DeviceDescriptor(
        idVendor=core.profile.usb_vid,
        idProduct=core.profile.usb_pid,
        bcdDevice=bcd_version(core.profile.firmware_version),
        **where,  # type: ignore[arg-type]
    )
    return SimUsbDevice(attach_in_process(core), descriptor, VENDOR_FUNCTION)


@dataclass(eq=False)
class SimUsbHandle:
    """An open device: the host end of its byte stream, and what the host has set."""

    device: SimUsbDevice
    stream: socket.socket
    configuration: int = CONFIGURATION_VALUE


def _no_device(what: str) -> USBError:
    return USBError(
        f"{what}: no such device (it may have been disconnected)",
        LIBUSB_ERROR_NO_DEVICE,
        errno.ENODEV,
    )


class SimUsbBackend(IBackend):
    """pyusb backend for simulated devices; close() (or `with`) stops their threads."""

    def __init__(self, *devices: SimulatedUsbDevice) -> None:
        self.devices = [_bus_device(core, index) for index, core in enumerate(devices)]

    def close(self) -> None:
        for device in self.devices:
            device.attachment.close()

    def __enter__(self) -> SimUsbBackend:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- enumeration and descriptors ------------------------------------------------

    def enumerate_devices(self) -> Iterator[SimUsbDevice]:
        return iter([device for device in self.devices if device.plugged])

    def get_device_descriptor(self, dev: SimUsbDevice) -> DeviceDescriptor:
        return dev.descriptor

    def get_configuration_descriptor(
        self, dev: SimUsbDevice, config: int
    ) -> ConfigurationDescriptor:
        self._check_index("configuration", config)
        return dev.configuration

    def get_interface_descriptor(
        self, dev: SimUsbDevice, intf: int, alt: int, config: int
    ) -> InterfaceDescriptor:
        for name, index in (("configuration", config), ("interface", intf), ("setting", alt)):
            self._check_index(name, index)
        return dev.function.interface

    def get_endpoint_descriptor(
        self, dev: SimUsbDevice, ep: int, intf: int, alt: int, config: int
    ) -> EndpointDescriptor:
        for name, index in (("configuration", config), ("interface", intf), ("setting", alt)):
            self._check_index(name, index)
        endpoints = dev.function.endpoints
        if not 0 <= ep < len(endpoints):
            raise IndexError(f"endpoint index {ep} out of range")
        return endpoints[ep]

    @staticmethod
    def _check_index(name: str, index: int) -> None:
        if index != 0:
            raise IndexError(f"the simulated device has one {name}, not index {index}")

    # --- opening and configuring ----------------------------------------------------

    def open_device(self, dev: SimUsbDevice) -> SimUsbHandle:
        if not dev.plugged:
            raise _no_device("open")
        return SimUsbHandle(dev, dev.attachment.connect())

    def close_device(self, dev_handle: SimUsbHandle) -> None:
        dev_handle.stream.close()

    def set_configuration(self, dev_handle: SimUsbHandle, config_value: int) -> None:
        """Configuring starts a fresh link: the device sends its 0x00 (protocol: Framing)."""
        self._check_alive(dev_handle, "set configuration")
        if config_value != CONFIGURATION_VALUE:
            raise USBError(f"no configuration {config_value}", LIBUSB_ERROR_NOT_FOUND, errno.ENOENT)
        dev_handle.configuration = config_value
        dev_handle.device.core.link_opened()

    def get_configuration(self, dev_handle: SimUsbHandle) -> int:
        self._check_alive(dev_handle, "get configuration")
        return dev_handle.configuration

    def set_interface_altsetting(
        self, dev_handle: SimUsbHandle, intf: int, altsetting: int
    ) -> None:
        self._check_alive(dev_handle, "set interface")
        if (intf, altsetting) != (INTERFACE_NUMBER, 0):
            raise USBError(
                f"no interface {intf} setting {altsetting}", LIBUSB_ERROR_NOT_FOUND, errno.ENOENT
            )

    def claim_interface(self, dev_handle: SimUsbHandle, intf: int) -> None:
        self._check_alive(dev_handle, "claim interface")
        if intf != INTERFACE_NUMBER:
            raise USBError(f"no interface {intf}", LIBUSB_ERROR_NOT_FOUND, errno.ENOENT)
        if dev_handle.device.kernel_driver_bound:
            raise USBError("Resource busy", LIBUSB_ERROR_BUSY, errno.EBUSY)

    def release_interface(self, dev_handle: SimUsbHandle, intf: int) -> None:
        """Nothing to undo: claiming only checked the interface exists."""

    def is_kernel_driver_active(self, dev_handle: SimUsbHandle, intf: int) -> bool:
        """No kernel driver binds a vendor-specific interface; usbhid binds a keyboard."""
        self._check_alive(dev_handle, "kernel driver query")
        return dev_handle.device.kernel_driver_bound

    def detach_kernel_driver(self, dev_handle: SimUsbHandle, intf: int) -> None:
        self._check_alive(dev_handle, "detach kernel driver")
        if not dev_handle.device.kernel_driver_bound:
            raise USBError("Entity not found", LIBUSB_ERROR_NOT_FOUND, errno.ENOENT)
        dev_handle.device.kernel_driver_bound = False

    def attach_kernel_driver(self, dev_handle: SimUsbHandle, intf: int) -> None:
        self._check_alive(dev_handle, "attach kernel driver")
        dev_handle.device.kernel_driver_bound = dev_handle.device.function.kernel_driver

    # --- transfers ------------------------------------------------------------------

    def bulk_write(
        self, dev_handle: SimUsbHandle, ep: int, intf: int, data: array, timeout: int
    ) -> int:
        self._check_endpoint(ep, USB_BULK_OUT_ENDPOINT)
        self._check_alive(dev_handle, "bulk write")
        try:
            dev_handle.stream.sendall(bytes(data))
        except OSError:
            raise _no_device("bulk write") from None
        return len(data)

    def bulk_read(
        self, dev_handle: SimUsbHandle, ep: int, intf: int, buff: array, timeout: int
    ) -> int:
        """Whatever the device has sent, up to len(buff); USBTimeoutError if nothing came."""
        self._check_endpoint(ep, USB_BULK_IN_ENDPOINT)
        self._check_alive(dev_handle, "bulk read")
        wait_s = None if timeout == 0 else timeout / 1000
        readable, _, _ = select.select([dev_handle.stream], [], [], wait_s)
        if not readable:
            raise USBTimeoutError("Operation timed out", LIBUSB_ERROR_TIMEOUT, errno.ETIMEDOUT)
        try:
            data = dev_handle.stream.recv(len(buff))
        except OSError:
            data = b""
        if not data:
            raise _no_device("bulk read")
        buff[: len(data)] = array("B", data)
        return len(data)

    def intr_read(
        self, dev_handle: SimUsbHandle, ep: int, intf: int, buff: array, timeout: int
    ) -> int:
        """The next key report (8 bytes); USBTimeoutError if the reader typed nothing."""
        self._check_endpoint(ep, HID_IN_ENDPOINT)
        self._check_alive(dev_handle, "interrupt read")
        wait_s = None if timeout == 0 else timeout / 1000
        readable, _, _ = select.select([dev_handle.stream], [], [], wait_s)
        if not readable:
            raise USBTimeoutError("Operation timed out", LIBUSB_ERROR_TIMEOUT, errno.ETIMEDOUT)
        report = bytearray()
        while len(report) < REPORT_SIZE:
            # The reader writes whole reports, so the rest of one is already on its way.
            try:
                data = dev_handle.stream.recv(REPORT_SIZE - len(report))
            except OSError:
                data = b""
            if not data:
                raise _no_device("interrupt read")
            report += data
        size = min(len(buff), REPORT_SIZE)
        buff[:size] = array("B", report[:size])
        return size

    def ctrl_transfer(
        self,
        dev_handle: SimUsbHandle,
        bmRequestType: int,
        bRequest: int,
        wValue: int,
        wIndex: int,
        data: array,
        timeout: int,
    ) -> int:
        """Standard GET_DESCRIPTOR only; anything else stalls, as a minimal firmware would."""
        self._check_alive(dev_handle, "control transfer")
        if usb.util.ctrl_direction(bmRequestType) != usb.util.CTRL_IN or bRequest != GET_DESCRIPTOR:
            raise USBError("Pipe error", LIBUSB_ERROR_PIPE, errno.EPIPE)
        descriptor = self._descriptor(dev_handle.device, wValue >> 8, wValue & 0xFF, wIndex)
        reply = descriptor[: len(data)]
        data[: len(reply)] = array("B", reply)
        return len(reply)

    def _descriptor(self, dev: SimUsbDevice, kind: int, index: int, langid: int) -> bytes:
        if kind == usb.util.DESC_TYPE_DEVICE:
            return dev.descriptor.pack()
        if kind == usb.util.DESC_TYPE_CONFIG and index == 0:
            return dev.configuration.pack()
        if kind == usb.util.DESC_TYPE_STRING:
            if index == 0:
                return bytes([4, usb.util.DESC_TYPE_STRING]) + struct.pack("<H", LANGID_US_ENGLISH)
            text = dev.strings().get(index)
            if text is not None and langid == LANGID_US_ENGLISH:
                return string_descriptor(text)
        raise USBError("Pipe error", LIBUSB_ERROR_PIPE, errno.EPIPE)

    @staticmethod
    def _check_endpoint(ep: int, expected: int) -> None:
        if ep != expected:
            raise USBError(
                f"no endpoint 0x{ep:02x} for this transfer", LIBUSB_ERROR_NOT_FOUND, errno.ENOENT
            )

    @staticmethod
    def _check_alive(dev_handle: SimUsbHandle, what: str) -> None:
        if not dev_handle.device.plugged or dev_handle.stream.fileno() < 0:
            raise _no_device(what)
