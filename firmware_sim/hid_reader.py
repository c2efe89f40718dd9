"""A simulated barcode reader in keyboard mode: it types each line, then Enter.

The same reader as line_reader.py, but what leaves it is USB HID boot
keyboard reports (8 bytes: modifiers, reserved, six key slots) on an
interrupt IN endpoint, served by the pyusb backend (usb_backend.py): each
character is a key press report (with left shift for capitals and shifted
symbols) followed by an all-zero release report, and the line ends with
Enter. A character the US layout cannot type is a bug in the profile used
for the simulation, so it is refused when the line is written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType

from cardshoe.drivers.hid.us_layout import LEFT_SHIFT, US_KEYS
from cardshoe.firmware_sim.errors import SimConfigError
from cardshoe.firmware_sim.line_reader import LineReader, ReaderIdentity

REPORT_SIZE = 8
RELEASE = bytes(REPORT_SIZE)
ENTER = 0x28
HID_READER_PID = 0x0004
HID_IDENTITY = ReaderIdentity(
    serial_number="HR-000001", product="HID card reader", usb_pid=HID_READER_PID
)


def _keys_for_characters() -> dict[str, tuple[int, int]]:
    """character -> (modifiers, usage code), the unshifted key winning over the keypad."""
    keys: dict[str, tuple[int, int]] = {}
    for code, (plain, shifted) in sorted(US_KEYS.items(), reverse=True):
        keys[plain] = (0, code)
        if shifted != plain:
            keys[shifted] = (LEFT_SHIFT, code)
    return keys


TYPING = MappingProxyType(_keys_for_characters())


def press(modifiers: int, code: int) -> bytes:
    return bytes([modifiers, 0, code, 0, 0, 0, 0, 0])


def type_line(line: bytes) -> bytes:
    """The reports that type `line` and press Enter."""
    reports = bytearray()
    for character in line.decode("ascii"):
        key = TYPING.get(character)
        if key is None:
            raise SimConfigError(f"a US keyboard cannot type {character!r} (in line {line!r})")
        reports += press(*key) + RELEASE
    return bytes(reports + press(0, ENTER) + RELEASE)


@dataclass(eq=False)
class HidReader(LineReader):
    """A keyboard-mode reader: the lines of LineReader, typed as key reports."""

    identity: ReaderIdentity = field(default_factory=lambda: HID_IDENTITY)

    def encode(self, line: bytes) -> bytes:
        return type_line(line)
