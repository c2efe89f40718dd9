"""The result codes a device puts in a REPLY or an OPERATION_DONE event.

They live apart from the messages so that the decode exceptions can name the
code a device answers with, without importing the whole message table.
"""

from __future__ import annotations

from enum import IntEnum


class ErrorCode(IntEnum):
    """Why a device refused or could not finish a command (0 means it did)."""

    OK = 0
    UNKNOWN_MESSAGE = 1
    """The message type is not one this device knows."""
    MALFORMED = 2
    """The body has the wrong length or a field holds an undefined value."""
    UNSUPPORTED = 3
    """The device lacks the capability, or a header flag it does not implement is set."""
    VERSION_MISMATCH = 4
    """The protocol major version in the header is not the device's."""
    BUSY = 5
    """Another operation (shuffle, return, self-test) is still running."""
    NOT_READY = 6
    """Nothing to act on yet: no shoe loaded, or the device is still starting."""
    SELF_TEST_FAILED = 7
    """The last self-test failed, so the device refuses to deal."""
    DOOR_OPEN = 8
    SHOE_EMPTY = 9
    FAULT_ACTIVE = 10
    """An uncleared fault (jam, sensor failure, ...) blocks the command."""
    EVENT_BACKLOG = 11
    """Too many events await acknowledgement; the device will not deal more cards."""
    INTERNAL = 12
    """The firmware hit an error of its own; the detail is in a FAULT event."""
    AUTH_REQUIRED = 13
    """Protocol 1.1: the device is paired and the command came outside an authenticated session."""
    NOT_PAIRING = 14
    """Protocol 1.1: PAIR while the device is not in pairing mode (its key switch is off)."""
    FIRMWARE_NO_HOUSE_KEY = 15
    """Protocol 1.3: the device holds no house public key to check an image with (pair it
    again with the house key)."""
    FIRMWARE_BAD_SIGNATURE = 16
    """Protocol 1.3: FIRMWARE_BEGIN's signature is not the house key's over its version and
    hash; nothing was written."""
    FIRMWARE_ROLLBACK = 17
    """Protocol 1.3: the image's version is lower than the version the device runs."""
    FIRMWARE_OUT_OF_ORDER = 18
    """Protocol 1.3: a chunk or COMMIT with no transfer under way, a chunk at another offset
    than the next byte, or past the announced size."""
    FIRMWARE_HASH_MISMATCH = 19
    """Protocol 1.3: at COMMIT the bytes received are not the announced size or SHA-256; the
    inactive slot is discarded and the device stays on its firmware."""
