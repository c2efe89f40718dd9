"""shoectl firmware: the house's firmware signing key, signed images, their check, and
installing one on a device."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import click
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
    load_pem_private_key,
    load_pem_public_key,
)

from cardshoe.controller.cli.options import DEVICE_TIMEOUT_OPTION
from cardshoe.controller.config import load_config
from cardshoe.controller.errors import EXIT_CHECK_FAILED, EXIT_DEVICE_UNAVAILABLE, UserError
from cardshoe.controller.journal.errors import JournalBusy
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.record_kinds import check_payload
from cardshoe.drivers.protocol.firmware_image import (
    FirmwareImageError,
    SignedImage,
    public_key_id,
    sign_image,
    verify_signature,
)

if TYPE_CHECKING:
    from cardshoe.controller.config import TableConfig
    from cardshoe.controller.service.firmware_update import FirmwareAttempt

FILE = click.Path(dir_okay=False, path_type=Path)


@click.group()
def firmware() -> None:
    """Sign device firmware with the house's Ed25519 key, and check a signed image.

    The private key stays on the house's signing machine; tables and devices hold only
    the public key (docs/security.md). Exit codes: 0 ok, 1 a check failed, 2 bad input.
    """


@firmware.command()
@click.option(
    "--out",
    "stem",
    type=FILE,
    default=Path("house"),
    show_default=True,
    help="Writes STEM.key (private, mode 0600) and STEM.pub (public).",
)
def keygen(stem: Path) -> None:
    """Make a new house signing key pair; refuses to replace existing files."""

    private_path, public_path = stem.with_suffix(".key"), stem.with_suffix(".pub")
    for path in (private_path, public_path):
        if path.exists():
            raise UserError(f"{path} exists: choose another --out, or move the old key away")
    key = Ed25519PrivateKey.generate()
    private_pem = key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
    public_pem = key.public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)
    try:
        descriptor = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as private_file:
            private_file.write(private_pem)
        public_path.write_bytes(public_pem)
    except OSError as exc:
        raise UserError(f"cannot write the key: {exc}: choose a folder you may write") from None
    click.echo(f"house key {public_key_id(key.public_key())}: {private_path}, {public_path}")


@firmware.command()
@click.argument("image", type=FILE)
@click.option("--key", "key_path", type=FILE, required=True, help="The house's private key.")
@click.option(
    "--version",
    "image_version",
    type=click.IntRange(0, 0xFFFFFFFF),
    required=True,
    help="The image's version number, higher for every release (anti-rollback).",
)
@click.option("--output", type=FILE, default=None, help="Default: IMAGE.signed.")
def sign(image: Path, key_path: Path, image_version: int, output: Path | None) -> None:
    """Sign IMAGE as firmware version --version with the house's key."""

    try:
        key = load_pem_private_key(_read(key_path, "the house's private key"), password=None)
    except (ValueError, TypeError):
        key = None
    if not isinstance(key, Ed25519PrivateKey):
        raise UserError(f"{key_path} is not an Ed25519 private key: make one with keygen")
    signed = sign_image(_read(image, "the firmware image"), image_version, key)
    target = output or image.with_name(image.name + ".signed")
    try:
        target.write_bytes(signed.encode())
    except OSError as exc:
        raise UserError(f"cannot write {target}: {exc.strerror or exc}") from None
    click.echo(
        f"{target}: version {signed.version}, sha256 {signed.sha256.hex()}, key {signed.key_id}"
    )


@firmware.command()
@click.argument("signed_path", metavar="IMAGE.signed", type=FILE)
@click.option("--public-key", type=FILE, required=True, help="The house's public key.")
@click.option(
    "--config",
    "config_path",
    type=FILE,
    default=None,
    help="Also require the image's hash in this table's device.allowed_firmware_hashes.",
)
def verify(signed_path: Path, public_key: Path, config_path: Path | None) -> None:
    """Check a signed image as the host does before an update: the house's signature, and
    with --config the table's allow-list. Exit 1 when either fails."""

    signed = _decode(signed_path)
    try:
        verify_signature(signed, _public_key(public_key))
    except FirmwareImageError as exc:
        raise UserError(f"{signed_path}: {exc}", EXIT_CHECK_FAILED) from None
    digest = signed.sha256.hex()
    if config_path is not None and not load_config(config_path).device.firmware_approved(
        signed.sha256
    ):
        raise UserError(
            f"{signed_path}: sha256 {digest} is not in {config_path}'s "
            "device.allowed_firmware_hashes: add it once the image is approved",
            EXIT_CHECK_FAILED,
        )
    click.echo(f"{signed_path}: ok, version {signed.version}, sha256 {digest}, key {signed.key_id}")


def _install(
    url: str,
    timeout: float,
    signed: SignedImage,
    house_key: Ed25519PublicKey,
    config: TableConfig,
) -> FirmwareAttempt:
    """Open the device and install; a device that cannot be opened is a failed attempt too."""
    # Late: only update talks to a device (firmware_update, ~110 ms); keygen, sign, verify do not.
    from cardshoe.controller.service import firmware_update
    from cardshoe.controller.service.device_access import opened_device
    from cardshoe.controller.service.pairing import KeyStore
    from cardshoe.drivers.cardshoe_family import CardshoeLink

    keys = KeyStore(config.service.key_dir).lookup
    try:
        with opened_device(url, timeout=timeout, keys=keys) as device:
            return firmware_update.install(CardshoeLink(device), signed, house_key, config.device)
    except UserError as exc:
        return firmware_update.FirmwareAttempt(
            signed.sha256.hex(),
            signed.version,
            firmware_update.Outcome.FAILED,
            f"the device could not be opened: {exc}",
        )


def _read(path: Path, what: str) -> bytes:

    try:
        return path.read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read {what} {path}: {exc.strerror or exc}") from None


def _decode(path: Path) -> SignedImage:

    try:
        return SignedImage.decode(_read(path, "the signed image"))
    except FirmwareImageError as exc:
        raise UserError(f"{path}: {exc}", EXIT_CHECK_FAILED) from None


def _public_key(path: Path) -> Ed25519PublicKey:

    try:
        key = load_pem_public_key(_read(path, "the house's public key"))
    except ValueError:
        key = None
    if not isinstance(key, Ed25519PublicKey):
        raise UserError(f"{path} is not an Ed25519 public key in PEM: give keygen's .pub file")
    return key


@firmware.command()
@click.argument("url")
@click.argument("signed_path", metavar="IMAGE.signed", type=FILE)
@click.option(
    "--config",
    "config_path",
    type=FILE,
    required=True,
    help="The table configuration: its journal, pairing keys, device.house_public_key and "
    "device.allowed_firmware_hashes.",
)
@DEVICE_TIMEOUT_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print the journaled attempt as JSON.")
def update(url: str, signed_path: Path, config_path: Path, timeout: float, as_json: bool) -> None:
    """Install a signed image on the device at URL (a technician's, service stopped).

    The host sends it only if the house key signed it and its hash is in
    device.allowed_firmware_hashes; the device checks the signature itself,
    refuses an older version and switches only once the whole image arrived.
    Every attempt is journaled with the image's hash and version and your uid.
    While the service runs, use `shoectl control firmware-update` instead.
    Exit 0 installed, 1 refused (the device runs its old firmware), 2 bad input, 3 the
    device absent or lost before the switch (it runs its old firmware), the journal held by
    the service, or not a technician.
    """
    # Late: only update talks to a device (firmware_update, ~110 ms); keygen, sign, verify do not.
    from cardshoe.controller.service import firmware_update
    from cardshoe.controller.service.control_socket import Peer
    from cardshoe.controller.service.roles import check_permitted, operator_of

    config = load_config(config_path)
    house_key = firmware_update.load_house_key(config.device.house_public_key)
    read = firmware_update.read_signed_image(_read(signed_path, "the signed image"))
    operator = operator_of(Peer(os.getpid(), os.getuid(), os.getgid()), config.roles)
    try:
        journal = Journal.open(
            config.service.journal_path, table_id=config.table_id, check_record=check_payload
        )
    except JournalBusy as exc:
        raise UserError(
            f"cannot journal the update: {exc}; while the service runs, use "
            "`shoectl control firmware-update`",
            EXIT_DEVICE_UNAVAILABLE,
        ) from None
    with journal:
        if isinstance(read, firmware_update.FirmwareAttempt):
            attempt = read
        else:
            try:
                check_permitted(firmware_update.COMMAND, operator)
            except UserError as exc:
                denied = firmware_update.FirmwareAttempt(
                    read.sha256.hex(), read.version, firmware_update.Outcome.REFUSED, str(exc)
                )
                firmware_update.journal_attempt(journal, denied, operator.as_json(), None)
                raise
            attempt = _install(url, timeout, read, house_key, config)
        firmware_update.journal_attempt(journal, attempt, operator.as_json(), None)
    if as_json:
        click.echo(json.dumps(attempt.payload(operator.as_json())))
    elif attempt.exit_code == 0:
        click.echo(firmware_update.describe(attempt))
    if attempt.exit_code != 0:
        raise UserError(f"{signed_path}: {firmware_update.describe(attempt)}", attempt.exit_code)
