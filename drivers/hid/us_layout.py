"""The US keyboard layout as data: HID usage code -> (unshifted, shifted) character.

Usage codes are those of the USB HID Usage Tables, Keyboard/Keypad page
(0x07). A barcode reader in keyboard mode types what it read with these
keys, so this table is the whole alphabet a line can carry over HID.
"""

from __future__ import annotations

from types import MappingProxyType

ENTER_KEYS = frozenset({0x28, 0x58})
"""Keyboard Return and Keypad Enter: either ends a line."""

LEFT_SHIFT, RIGHT_SHIFT = 0x02, 0x20
SHIFT_BITS = LEFT_SHIFT | RIGHT_SHIFT
"""Modifier byte bits for the two shift keys."""


def _table() -> dict[int, tuple[str, str]]:
    keys: dict[int, tuple[str, str]] = {}
    for offset, letter in enumerate("abcdefghijklmnopqrstuvwxyz"):
        keys[0x04 + offset] = (letter, letter.upper())
    for offset, (digit, shifted) in enumerate(zip("1234567890", "!@#$%^&*()", strict=True)):
        keys[0x1E + offset] = (digit, shifted)
    for code, pair in {
        0x2C: (" ", " "),
        0x2D: ("-", "_"),
        0x2E: ("=", "+"),
        0x2F: ("[", "{"),
        0x30: ("]", "}"),
        0x31: ("\\", "|"),
        0x33: (";", ":"),
        0x34: ("'", '"'),
        0x35: ("`", "~"),
        0x36: (",", "<"),
        0x37: (".", ">"),
        0x38: ("/", "?"),
        0x2B: ("\t", "\t"),
    }.items():
        keys[code] = pair
    for offset, digit in enumerate("123456789"):
        keys[0x59 + offset] = (digit, digit)
    keys[0x62] = ("0", "0")
    keys[0x54], keys[0x55], keys[0x56], keys[0x57] = ("/", "/"), ("*", "*"), ("-", "-"), ("+", "+")
    return keys


US_KEYS = MappingProxyType(_table())
