"""Signed firmware images: the house's Ed25519 signature over an image's version and hash.

Field exploits of shufflers came through firmware updates nobody verified, or verified
with one key shared by every unit (CVE-2025-34500). A cardshoe firmware image travels as
one signed file, and whoever installs it (the host before it sends it, the device before it
switches to it) checks the signature against the house's public key:

    signed file = MAGIC ‖ header (canonical JSON, one line) ‖ "\\n" ‖ image bytes
    header      = {"key_id", "sha256", "signature", "size", "version"}
    signature   = Ed25519(house key, DOMAIN ‖ version (u32 big-endian) ‖ SHA-256(image))

The version is signed with the image, so an old image cannot be relabelled as new to get
past a device's anti-rollback check. The private key never leaves the house's signing
machine; devices and hosts hold only the public key. Shared by the host and the simulated
device, like the rest of the protocol codec: no I/O.
"""

from __future__ import annotations

import hashlib
import json
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cardshoe.drivers.text_input import json_value

if TYPE_CHECKING:
    # Types only: cryptography's bindings cost ~7 MB resident, and a driver (device.py) needs
    # this module for SignedImage whether or not it ever updates firmware.
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (
        Ed25519PrivateKey,
        Ed25519PublicKey,
    )

MAGIC = b"CARDSHOE-FIRMWARE-1\n"
DOMAIN = b"cardshoe-firmware-v1\0"
"""Keeps a firmware signature from ever being valid for anything else the key might sign."""
VERSION_MAX = 0xFFFFFFFF


class FirmwareImageError(ValueError):
    """A signed file that is not one, or whose signature or hash does not hold."""


@dataclass(frozen=True)
class SignedImage:
    version: int
    image: bytes
    key_id: str
    signature: bytes

    @property
    def sha256(self) -> bytes:
        return hashlib.sha256(self.image).digest()

    def encode(self) -> bytes:
        header = {
            "key_id": self.key_id,
            "sha256": self.sha256.hex(),
            "signature": self.signature.hex(),
            "size": len(self.image),
            "version": self.version,
        }
        line = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
        return MAGIC + line + b"\n" + self.image

    @classmethod
    def decode(cls, data: bytes) -> SignedImage:
        """The signed file taken apart; FirmwareImageError when it is not one or does not
        hold together (its size or hash differs from what its header says)."""
        if not data.startswith(MAGIC):
            raise FirmwareImageError("not a signed cardshoe firmware file (no header)")
        line, newline, image = data[len(MAGIC) :].partition(b"\n")
        try:
            header = json_value(line) if newline else None
        except ValueError:
            header = None
        if not isinstance(header, dict):
            raise FirmwareImageError("the signed file's header is not one JSON line")
        try:
            version, size = int(header["version"]), int(header["size"])
            key_id, digest = str(header["key_id"]), bytes.fromhex(header["sha256"])
            signature = bytes.fromhex(header["signature"])
        except (KeyError, TypeError, ValueError) as exc:
            raise FirmwareImageError(f"the signed file's header lacks a field: {exc}") from None
        if size != len(image) or hashlib.sha256(image).digest() != digest:
            raise FirmwareImageError(
                "the image differs from its header (size or SHA-256): the file was altered "
                "or cut short"
            )
        return cls(version, image, key_id, signature)


def public_key_id(public_key: Ed25519PublicKey) -> str:
    """A short name for a public key (a hash prefix), printed and kept in the header."""
    # Late: cryptography's bindings cost ~7 MB resident; only signing and checking need them.
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    raw = public_key.public_bytes(Encoding.Raw, PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def signed_message(version: int, image_sha256: bytes) -> bytes:
    if not 0 <= version <= VERSION_MAX:
        raise FirmwareImageError(f"version {version} is not a u32 (0-{VERSION_MAX})")
    return DOMAIN + struct.pack(">I", version) + image_sha256


def sign_image(image: bytes, version: int, private_key: Ed25519PrivateKey) -> SignedImage:
    digest = hashlib.sha256(image).digest()
    signature = private_key.sign(signed_message(version, digest))
    return SignedImage(version, image, public_key_id(private_key.public_key()), signature)


def verify_signature(signed: SignedImage, public_key: Ed25519PublicKey) -> None:
    """Raise FirmwareImageError unless the house key signed this version of this image."""
    # Late: cryptography's bindings cost ~7 MB resident; only signing and checking need them.
    from cryptography.exceptions import InvalidSignature

    try:
        public_key.verify(signed.signature, signed_message(signed.version, signed.sha256))
    except InvalidSignature:
        raise FirmwareImageError(
            f"the signature is not the house key's (signed by key {signed.key_id}, the house "
            f"key is {public_key_id(public_key)}), or the image or its version was altered"
        ) from None
