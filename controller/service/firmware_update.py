"""Installing a signed firmware image on the device, and the journal record of every attempt.

The host checks an image before a byte goes to the device: the signature must be
the house key's and the image's SHA-256 must be in device.allowed_firmware_hashes,
so a table never sends firmware it would then refuse to deal with. The device
checks the signature again itself, refuses an older version and switches slots
only once the whole image has arrived (docs/protocol.md, firmware update). Every
attempt, installed, refused or cut short, is journaled (SOFTWARE_FIRMWARE_UPDATE) with the
image's hash and version and the uid that ran it, so the journal says who put which
firmware on the device.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cardshoe.controller.config import DeviceConfig
from cardshoe.controller.errors import EXIT_CHECK_FAILED, EXIT_DEVICE_UNAVAILABLE, UserError
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.record_kinds import SOFTWARE_FIRMWARE_UPDATE
from cardshoe.drivers.api.device_link import DeviceLink
from cardshoe.drivers.device import Device
from cardshoe.drivers.errors import CommandRefused, DriverError
from cardshoe.drivers.protocol.firmware_image import (
    FirmwareImageError,
    SignedImage,
    verify_signature,
)

if TYPE_CHECKING:
    # Types only: cryptography's bindings cost ~7 MB resident (bench/bench_service.py); the
    # table service imports them only when a firmware update runs (load_house_key).
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

COMMAND = "firmware-update"
"""The control-socket command, and the name a role check gives it (a technician's)."""


class Outcome(StrEnum):
    INSTALLED = "installed"
    """The device switched to the image and its new HELLO reports its hash."""
    REFUSED = "refused"
    """The host or the device refused the image; the device runs what it ran."""
    FAILED = "failed"
    """The transfer did not finish (the device went away): it stays on its old firmware."""


EXIT_CODES = {
    Outcome.INSTALLED: 0,
    Outcome.REFUSED: EXIT_CHECK_FAILED,
    Outcome.FAILED: EXIT_DEVICE_UNAVAILABLE,
}


@dataclass(frozen=True)
class FirmwareAttempt:
    """What the journal keeps of one attempt."""

    image_sha256: str
    version: int | None
    """None when the file was not a signed image at all."""
    outcome: Outcome
    reason: str
    serial_number: str | None = None
    before: Mapping[str, str] | None = None
    """The device's firmware hash and version before the attempt, when it was reached."""
    after: Mapping[str, str] | None = None

    def payload(self, operator: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "image_sha256": self.image_sha256,
            "version": self.version,
            "outcome": str(self.outcome),
            "reason": self.reason,
            "operator": dict(operator),
            "before": dict(self.before) if self.before else None,
            "after": dict(self.after) if self.after else None,
        }

    @property
    def exit_code(self) -> int:
        """0 installed, 1 refused, 3 the device went away before the switch."""
        return EXIT_CODES[self.outcome]


def load_house_key(path: Path | None) -> Ed25519PublicKey:
    """The house's public key named by device.house_public_key, or one line saying why not."""
    if path is None:
        raise UserError(
            "the configuration names no device.house_public_key: set it to the house's "
            "public key file (shoectl firmware keygen's .pub)"
        )
    # Late: cryptography's bindings cost ~7 MB resident, which the service pays only here.
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    try:
        key = load_pem_public_key(path.read_bytes())
    except OSError as exc:
        raise UserError(f"cannot read the house's public key {path}: {exc.strerror}") from None
    except ValueError:
        key = None
    if not isinstance(key, Ed25519PublicKey):
        raise UserError(f"{path} is not an Ed25519 public key in PEM: give keygen's .pub file")
    return key


def read_signed_image(data: bytes) -> SignedImage | FirmwareAttempt:
    """The signed image in a file's bytes, or the refused attempt to journal for it."""
    try:
        return SignedImage.decode(data)
    except FirmwareImageError as exc:
        digest = hashlib.sha256(data).hexdigest()
        return FirmwareAttempt(digest, None, Outcome.REFUSED, f"by the host: {exc}")


def host_refusal(
    signed: SignedImage, house_key: Ed25519PublicKey, device: DeviceConfig
) -> str | None:
    """Why the host will not send this image, or None: the house's signature, the allow-list."""
    try:
        verify_signature(signed, house_key)
    except FirmwareImageError as exc:
        return str(exc)
    if not signed.image:
        return "the image is empty"
    if not device.firmware_check_enforced or not device.firmware_approved(signed.sha256):
        return (
            f"sha256 {signed.sha256.hex()} is not in device.allowed_firmware_hashes: add it "
            "once the image is approved"
        )
    return None


def install(
    device: DeviceLink,
    signed: SignedImage,
    house_key: Ed25519PublicKey,
    config: DeviceConfig,
) -> FirmwareAttempt:
    """Check the image, send it, and see the device come back on it; never raises for the
    device's refusal or its loss, which are outcomes to journal."""
    info = device.identity
    wire = device.family_extras()
    before = {"firmware_hash": info.firmware_hash.hex(), "firmware_version": info.firmware_version}

    def attempt(
        outcome: Outcome, reason: str, after: Mapping[str, str] | None = None
    ) -> FirmwareAttempt:
        return FirmwareAttempt(
            signed.sha256.hex(),
            signed.version,
            outcome,
            reason,
            info.serial_number,
            before,
            after,
        )

    refusal = host_refusal(signed, house_key, config)
    if refusal is not None:
        return attempt(Outcome.REFUSED, f"by the host: {refusal}")
    if not isinstance(wire, Device) or not wire.updatable:
        return attempt(
            Outcome.REFUSED,
            f"device {info.serial_number} cannot be updated over the link (it speaks protocol "
            f"{info.protocol_version} without FIRMWARE_UPDATE): update it as its maker says",
        )
    try:
        hello = wire.update_firmware(signed)
    except CommandRefused as exc:
        return attempt(Outcome.REFUSED, f"by the device: {exc.code.name}")
    except DriverError as exc:
        return attempt(Outcome.FAILED, f"the transfer did not finish: {exc}")
    after = {"firmware_hash": hello.firmware_hash.hex(), "firmware_version": hello.firmware_version}
    if hello.firmware_hash != signed.sha256:
        return attempt(
            Outcome.FAILED, "the device came back reporting another firmware hash", after
        )
    return attempt(Outcome.INSTALLED, "the device switched to the image", after)


def attempt_at_table(
    device: DeviceLink,
    data: bytes,
    house_key: Ed25519PublicKey,
    config: DeviceConfig,
    open_shoe: str | None,
) -> FirmwareAttempt:
    """The attempt a running table makes with a file's bytes: refused while a shoe is open
    (open_shoe), otherwise installed as install() does; the caller journals it."""
    read = read_signed_image(data)
    if isinstance(read, FirmwareAttempt):
        return read
    if open_shoe is not None:
        return FirmwareAttempt(
            read.sha256.hex(),
            read.version,
            Outcome.REFUSED,
            f"shoe {open_shoe} is open: end or abandon it first",
        )
    return install(device, read, house_key, config)


def journal_attempt(
    journal: Journal, attempt: FirmwareAttempt, operator: Mapping[str, Any], shoe_id: str | None
) -> None:
    with journal.transaction() as transaction:
        transaction.append(
            SOFTWARE_FIRMWARE_UPDATE,
            attempt.payload(operator),
            shoe_id=shoe_id,
            round_no=None,
            device_serial=attempt.serial_number,
        )


def describe(attempt: FirmwareAttempt) -> str:
    """The one line a technician reads."""
    image = f"firmware version {attempt.version} (sha256 {attempt.image_sha256})"
    if attempt.outcome is Outcome.INSTALLED:
        return f"device {attempt.serial_number} now runs {image}"
    still = ""
    if attempt.before is not None:
        still = f"; device {attempt.serial_number} still runs {attempt.before['firmware_hash']}"
    return f"{image} {attempt.outcome}: {attempt.reason}{still}"
