"""shoectl pair: give a device a new random pairing key and keep it in the host's key store."""

from __future__ import annotations

import json
from pathlib import Path

import click
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from cardshoe.controller.cli.completion import complete_device_url
from cardshoe.controller.cli.options import DEVICE_TIMEOUT_OPTION
from cardshoe.controller.config import DeviceConfig, ServiceConfig, load_config
from cardshoe.controller.errors import EXIT_CHECK_FAILED, EXIT_DEVICE_UNAVAILABLE, UserError
from cardshoe.controller.service.device_access import opened_device
from cardshoe.controller.service.firmware_update import load_house_key
from cardshoe.controller.service.pairing import KeyStore, staged_key_file
from cardshoe.drivers.errors import CommandRefused
from cardshoe.drivers.protocol.auth import LinkKey, key_id, new_pairing_key
from cardshoe.drivers.protocol.error_codes import ErrorCode
from cardshoe.drivers.protocol.firmware_image import public_key_id
from cardshoe.drivers.protocol.link_constants import FIRMWARE_UPDATE_FROM_1_3, PROTOCOL_MAJOR


@click.command()
@click.argument("url", shell_complete=complete_device_url)
@click.option(
    "--key-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where to keep the key (default: <service.key_dir>/<serial>.key).",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The table configuration whose service.key_dir holds the keys.",
)
@click.option(
    "--house-key",
    "house_key_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The house's firmware signing public key to give the device (default: the "
    "--config's device.house_public_key).",
)
@DEVICE_TIMEOUT_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def pair(
    url: str,
    key_file: Path | None,
    config_path: Path | None,
    house_key_path: Path | None,
    timeout: float,
    as_json: bool,
) -> None:
    """Pair the device at URL: a new random key on the device and in the key store.

    Turn the device's pairing switch on first (the simulator: `shoectl sim --pairing-mode`):
    the device takes a key only then, and only one. The key crosses the cable in clear this
    once, so pair over the direct cable at the table. The key file also pins the protocol
    version the device speaks now: a host refuses it below that version from then on. The
    key file gets mode 0640 and the group of its folder; the service reads it from
    service.key_dir. Pairing again replaces the key and the pinned version on both sides.
    A device speaking protocol 1.3 also gets the house's public key (--house-key, or the
    --config's device.house_public_key), with which it checks every firmware image itself.
    Exit 3 when the device is absent or not in pairing mode, or the key file cannot be written.
    """
    config = load_config(config_path) if config_path else None
    service = config.service if config else ServiceConfig()
    house_key_path = (
        house_key_path or (config.device if config else DeviceConfig()).house_public_key
    )
    house_key = None if house_key_path is None else load_house_key(house_key_path)
    serial_number, key, target = _give_key(url, timeout, key_file, service, house_key)
    with opened_device(url, timeout=timeout, keys={serial_number: key}.get) as device:
        authenticated = device.info.authenticated
    if not authenticated:
        raise UserError(
            f"device {serial_number} took the key but does not authenticate with it: "
            "check that it speaks protocol 1.1, then pair again",
            EXIT_CHECK_FAILED,
        )
    record = {
        "serial_number": serial_number,
        "key_file": str(target),
        "key_id": key_id(key.secret),
        "authenticated": authenticated,
        "min_protocol": f"{PROTOCOL_MAJOR}.{key.min_minor}",
        "house_key_id": (
            public_key_id(house_key)
            if house_key is not None and key.min_minor >= FIRMWARE_UPDATE_FROM_1_3
            else None
        ),
    }
    if as_json:
        click.echo(json.dumps(record))
    else:
        click.echo(
            f"paired {serial_number}: key {record['key_id']} in {target}, protocol "
            f"{record['min_protocol']} or later; the link authenticates"
        )


def _give_key(
    url: str,
    timeout: float,
    key_file: Path | None,
    service: ServiceConfig,
    house_key: Ed25519PublicKey | None,
) -> tuple[str, LinkKey, Path]:
    """Give the device at url a new key (and the house's public key), kept in its key file
    only once the device took it; the device's serial number, the key and the key file."""
    house_raw = (
        None if house_key is None else house_key.public_bytes(Encoding.Raw, PublicFormat.Raw)
    )
    with opened_device(url, timeout=timeout) as device:
        serial_number = device.info.serial_number
        key = LinkKey(new_pairing_key(), device.protocol_minor)
        target = key_file or KeyStore(service.key_dir).path_for(serial_number)
        with staged_key_file(target, key) as commit:
            try:
                device.pair(key.secret, house_raw)
            except CommandRefused as exc:
                if exc.code is not ErrorCode.NOT_PAIRING:
                    raise
                raise UserError(
                    f"device {serial_number} at {url} is not in pairing mode: turn its pairing "
                    "switch on (simulator: shoectl sim --pairing-mode), then pair again",
                    EXIT_DEVICE_UNAVAILABLE,
                ) from exc
            commit()
    return serial_number, key, target
