"""The simulated device's two firmware slots and the transfer into the inactive one.

A device that wrote a new image over the one it runs would be left with half
of each by a power cut mid-transfer. So it keeps two slots (A/B): it runs
the active one, writes the transfer into the other, and switches only at
FIRMWARE_COMMIT, once the whole image is there, its SHA-256 is the one the
house signed and the signature is the house key's (the public key the host
gave in PAIR). Until then the active slot is untouched, and a restart
discards a half-written inactive slot. It refuses an image whose version
is lower than the one it runs (anti-rollback).

No I/O and no clock: the core (core.py) calls it from its command handler.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from cardshoe.drivers.protocol.error_codes import ErrorCode
from cardshoe.drivers.protocol.firmware_image import FirmwareImageError, signed_message
from cardshoe.drivers.protocol.link_constants import FIRMWARE_MAX_SIZE
from cardshoe.drivers.protocol.messages import FirmwareBegin, FirmwareChunk

FACTORY_VERSION = 1
"""The version number of the image a simulated device leaves the factory with."""


@dataclass(frozen=True)
class FirmwareSlot:
    """An installed image and the version it was signed as."""

    image: bytes
    version: int
    label: str
    """What HELLO's firmware_version says: the profile's for the factory image, the signed
    version number in decimal for an installed one."""

    @property
    def sha256(self) -> bytes:
        return hashlib.sha256(self.image).digest()


@dataclass
class Transfer:
    """An image being written into the inactive slot (lost at every restart)."""

    begin: FirmwareBegin
    received: bytearray

    @property
    def complete(self) -> bool:
        return len(self.received) == self.begin.size


class FirmwareSlots:
    """Slot A and slot B, which one runs, and the transfer into the other."""

    def __init__(self, factory: FirmwareSlot) -> None:
        # Non-volatile: both slots and the active index survive power cuts.
        self.slots: list[FirmwareSlot | None] = [factory, None]
        self.active_index = 0
        # Volatile: a restart abandons the transfer.
        self.transfer: Transfer | None = None

    @property
    def active(self) -> FirmwareSlot:
        slot = self.slots[self.active_index]
        assert slot is not None, "the active slot always holds an image"
        return slot

    def abandon(self) -> None:
        """A restart: whatever was half-written into the inactive slot is discarded."""
        self.transfer = None
        self.slots[1 - self.active_index] = None

    def begin(self, command: FirmwareBegin, house_key: bytes | None) -> ErrorCode:
        """Check the signature and the version before a byte is written."""
        self.abandon()
        if house_key is None:
            return ErrorCode.FIRMWARE_NO_HOUSE_KEY
        if command.size > FIRMWARE_MAX_SIZE:
            return ErrorCode.FIRMWARE_OUT_OF_ORDER
        if not _signed_by(house_key, command.version, command.image_sha256, command.signature):
            return ErrorCode.FIRMWARE_BAD_SIGNATURE
        if command.version < self.active.version:
            return ErrorCode.FIRMWARE_ROLLBACK
        self.transfer = Transfer(command, bytearray())
        return ErrorCode.OK

    def write(self, chunk: FirmwareChunk) -> ErrorCode:
        """Append a chunk at the next offset; anything else leaves the transfer as it was."""
        transfer = self.transfer
        if transfer is None or chunk.offset != len(transfer.received):
            return ErrorCode.FIRMWARE_OUT_OF_ORDER
        if len(transfer.received) + len(chunk.data) > transfer.begin.size:
            return ErrorCode.FIRMWARE_OUT_OF_ORDER
        transfer.received += chunk.data
        return ErrorCode.OK

    def commit(self, house_key: bytes | None) -> ErrorCode:
        """Switch to the inactive slot if the image is whole, the house's and not older."""
        transfer, self.transfer = self.transfer, None
        if transfer is None:
            return ErrorCode.FIRMWARE_OUT_OF_ORDER
        begin, image = transfer.begin, bytes(transfer.received)
        if not transfer.complete or hashlib.sha256(image).digest() != begin.image_sha256:
            return ErrorCode.FIRMWARE_HASH_MISMATCH
        if house_key is None or not _signed_by(
            house_key, begin.version, begin.image_sha256, begin.signature
        ):
            return ErrorCode.FIRMWARE_BAD_SIGNATURE
        if begin.version < self.active.version:
            return ErrorCode.FIRMWARE_ROLLBACK
        inactive = 1 - self.active_index
        self.slots[inactive] = FirmwareSlot(image, begin.version, str(begin.version))
        self.active_index = inactive
        return ErrorCode.OK


def _signed_by(house_key: bytes, version: int, image_sha256: bytes, signature: bytes) -> bool:
    try:
        Ed25519PublicKey.from_public_bytes(house_key).verify(
            signature, signed_message(version, image_sha256)
        )
    except (InvalidSignature, ValueError, FirmwareImageError):
        return False
    return True
