"""The checksums a line reader may append to each line, as pure functions on bytes.

NMEA's is the common one: the line is BODY*HH, HH being the XOR of every byte
of BODY in two hexadecimal digits. It catches any single flipped bit and most
garbled characters, which is what a serial line at 9600 baud gets wrong.
"""

from __future__ import annotations

from enum import StrEnum
from functools import reduce

NMEA_SEPARATOR = b"*"
NMEA_DIGITS = 2


class Checksum(StrEnum):
    """How a profile's lines are checked: `checksum = "none" | "nmea"`."""

    NONE = "none"
    NMEA = "nmea"


def nmea_checksum(body: bytes) -> int:
    """The XOR of all of `body`'s bytes."""
    return reduce(lambda total, byte: total ^ byte, body, 0)


def with_checksum(body: bytes, checksum: Checksum) -> bytes:
    """The line a device writes for `body` (without its terminator)."""
    if checksum is Checksum.NONE:
        return body
    return body + NMEA_SEPARATOR + f"{nmea_checksum(body):02X}".encode("ascii")


def checked_body(line: bytes, checksum: Checksum) -> bytes | None:
    """The body of a line whose checksum holds; None when it is missing or wrong.

    The hex digits are read in either case, as devices differ on it.
    """
    if checksum is Checksum.NONE:
        return line
    body, separator, digits = line.rpartition(NMEA_SEPARATOR)
    if not separator or len(digits) != NMEA_DIGITS:
        return None
    try:
        expected = int(digits.decode("ascii"), 16)
    except (UnicodeDecodeError, ValueError):
        return None
    return body if nmea_checksum(body) == expected else None
