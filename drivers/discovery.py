"""Find the shoes and shuffler-dealers a technician could open, without opening them.

Serial candidates are the USB-serial ports pyserial lists (a plain
motherboard port cannot say what is behind it, so it is named explicitly
instead) and any port a cardshoe udev link points at. USB candidates are
devices with a known cardshoe VID:PID. Each comes with what tells it apart
at the table, serial number, USB port and udev links, and with the URL
that `shoectl info` and the table configuration take.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import usb.core
import usb.util
from serial.tools import list_ports

from cardshoe.drivers.errors import DriverError
from cardshoe.drivers.protocol.link_constants import SIMULATOR_USB_PID, SIMULATOR_USB_VID
from cardshoe.drivers.transports.usb_bulk import NO_BACKEND_HINT, UsbAddress, read_string

KNOWN_USB_IDS: Mapping[tuple[int, int], str] = {
    (SIMULATOR_USB_VID, SIMULATOR_USB_PID): "cardshoe device (pid.codes test ID)",
}
"""USB IDs that speak the shoe link on a vendor interface."""
CARDSHOE_LINK_DIR = Path("/dev/cardshoe")
"""Where udev/70-cardshoe.rules puts its stable links (<role>-<serial>)."""
SERIAL_LINK_DIRS: tuple[Path, ...] = (Path("/dev/serial/by-id"), Path("/dev/serial/by-path"))
"""udev's own stable names for serial ports."""


@dataclass(frozen=True)
class Candidate:
    """One device that may be a shoe or a shuffler-dealer."""

    url: str
    """What to open: the most stable name for it."""
    transport: str
    """"serial" or "usb"."""
    device_path: str
    vendor_id: int | None = None
    product_id: int | None = None
    serial_number: str | None = None
    manufacturer: str | None = None
    product: str | None = None
    location: str | None = None
    """The USB port it sits in (bus-port.port), which stays the same across re-plugs."""
    symlinks: tuple[str, ...] = ()
    problem: str | None = None
    """Why some details are missing, for example no permission to read them."""

    def to_json(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "transport": self.transport,
            "device_path": self.device_path,
            "usb_id": _usb_id(self.vendor_id, self.product_id),
            "serial_number": self.serial_number,
            "manufacturer": self.manufacturer,
            "product": self.product,
            "location": self.location,
            "symlinks": list(self.symlinks),
            "problem": self.problem,
        }


@dataclass(frozen=True)
class Discovery:
    candidates: tuple[Candidate, ...]
    notes: tuple[str, ...] = field(default=())
    """What could not be searched, and why (no libusb, say)."""


def discover(
    *,
    usb_backend: Any = None,
    cardshoe_link_dir: Path = CARDSHOE_LINK_DIR,
    serial_link_dirs: Iterable[Path] = SERIAL_LINK_DIRS,
) -> Discovery:
    """Serial and USB candidates; a missing USB backend is a note, not an error."""
    serial = serial_candidates(cardshoe_link_dir, tuple(serial_link_dirs))
    usb, notes = usb_candidates(usb_backend)
    return Discovery((*serial, *usb), notes)


def serial_candidates(
    cardshoe_link_dir: Path = CARDSHOE_LINK_DIR,
    serial_link_dirs: tuple[Path, ...] = SERIAL_LINK_DIRS,
) -> list[Candidate]:
    """USB-serial ports, and any port a cardshoe udev link names; the cardshoe link first."""

    cardshoe_links = _links_by_target((cardshoe_link_dir,))
    other_links = _links_by_target(serial_link_dirs)
    candidates = []
    for port in sorted(list_ports.comports(), key=lambda port: port.device):
        node = _resolve(port.device)
        port_links = cardshoe_links.get(node, []) + other_links.get(node, [])
        if port.vid is None and node not in cardshoe_links:
            continue
        candidates.append(
            Candidate(
                url=port_links[0] if port_links else port.device,
                transport="serial",
                device_path=port.device,
                vendor_id=port.vid,
                product_id=port.pid,
                serial_number=port.serial_number,
                manufacturer=port.manufacturer,
                product=port.product,
                location=port.location,
                symlinks=tuple(port_links),
            )
        )
    return candidates


def usb_candidates(backend: Any) -> tuple[list[Candidate], tuple[str, ...]]:
    try:
        devices = list(
            usb.core.find(
                find_all=True,
                backend=backend,
                custom_match=lambda device: (device.idVendor, device.idProduct) in KNOWN_USB_IDS,
            )
        )
    except usb.core.NoBackendError:
        return [], (f"USB devices not searched: {NO_BACKEND_HINT}",)
    return [_usb_candidate(device) for device in devices], ()


def _usb_candidate(device: Any) -> Candidate:
    """Reading the strings opens the device; it is closed again at once."""

    indexes = {
        "serial_number": device.iSerialNumber,
        "manufacturer": device.iManufacturer,
        "product": device.iProduct,
    }
    strings: dict[str, str | None] = dict.fromkeys(indexes)
    problem = None
    try:
        for name, index in indexes.items():
            strings[name] = read_string(device, index)
    except DriverError as exc:
        problem = str(exc)
    finally:
        usb.util.dispose_resources(device)
    address = UsbAddress(device.idVendor, device.idProduct, strings["serial_number"])
    return Candidate(
        url=address.url,
        transport="usb",
        device_path=_usb_node(device),
        vendor_id=device.idVendor,
        product_id=device.idProduct,
        serial_number=strings["serial_number"],
        manufacturer=strings["manufacturer"],
        product=strings["product"],
        location=_usb_location(device),
        problem=problem,
    )


def _usb_location(device: Any) -> str | None:
    """bus-port.port, as the kernel names the USB port (the backend may not know it)."""
    ports = getattr(device, "port_numbers", None)
    if device.bus is None or not ports:
        return None
    return f"{device.bus}-{'.'.join(str(port) for port in ports)}"


def _usb_node(device: Any) -> str:
    if device.bus is None or device.address is None:
        return f"USB device {device.idVendor:04x}:{device.idProduct:04x}"
    return f"/dev/bus/usb/{device.bus:03d}/{device.address:03d}"


def _links_by_target(symlink_dirs: tuple[Path, ...]) -> dict[Path, list[str]]:
    """Every symlink in the udev link folders, grouped by the device node it points at."""
    links: dict[Path, list[str]] = {}
    for folder in symlink_dirs:
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            continue
        for entry in entries:
            if entry.is_symlink():
                links.setdefault(_resolve(str(entry)), []).append(str(entry))
    return links


def _resolve(path: str) -> Path:
    try:
        return Path(path).resolve(strict=True)
    except OSError:
        return Path(path)


def _usb_id(vendor_id: int | None, product_id: int | None) -> str | None:
    if vendor_id is None or product_id is None:
        return None
    return f"{vendor_id:04x}:{product_id:04x}"
