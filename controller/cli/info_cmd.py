"""shoectl info: who the device at a URL is, what it can do and how its link fares."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from cardshoe.controller.cli.completion import complete_device_url
from cardshoe.controller.cli.options import DEVICE_TIMEOUT_OPTION, KEY_DIR_OPTION
from cardshoe.controller.cli.service_access import pairing_keys
from cardshoe.controller.config import load_config
from cardshoe.controller.display.columns import aligned_lines
from cardshoe.controller.service.device_access import device_user_error, opened_device
from cardshoe.drivers.errors import DriverError
from cardshoe.drivers.protocol.message_codec import message_to_json


@click.command()
@click.argument("url", shell_complete=complete_device_url)
@DEVICE_TIMEOUT_OPTION
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="A table configuration: check the firmware against its allow-list, and "
    "authenticate a paired device with the keys in its service.key_dir.",
)
@KEY_DIR_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def info(
    url: str, timeout: float, config_path: Path | None, key_dir: Path | None, as_json: bool
) -> None:
    """Model, kind, serial number, firmware, protocol, capabilities and counters.

    URL is a serial port (/dev/ttyUSB0, /dev/cardshoe/shoe-SERIAL), socket://HOST:PORT,
    sim://PROFILE for a simulated device, or usb://VID:PID[/SERIAL]; `shoectl list`
    shows what is attached. Exit 3 when the device is absent, busy or not permitted.
    """

    config = load_config(config_path) if config_path else None
    keys = pairing_keys(config_path, key_dir)
    with opened_device(url, timeout=timeout, keys=keys) as device:
        try:
            status = device.get_status()
        except DriverError as exc:
            raise device_user_error(exc) from exc
        record = device.info.to_json()
        status_fields = message_to_json(status)["fields"]
        del status_fields["request_id"]
        record["status"] = status_fields
        if config is not None:
            device_config = config.device
            record["firmware_allowed"] = (
                device_config.firmware_approved(device.info.firmware_hash)
                if device_config.firmware_check_enforced
                else None
            )
    click.echo(json.dumps(record) if as_json else _text(record))


def _text(record: dict[str, Any]) -> str:
    status = record["status"]
    remaining = status["cards_remaining"]
    rows = [
        ("model", record["model"]),
        ("kind", record["kind"]),
        ("serial number", record["serial_number"]),
        ("firmware", f"{record['firmware_version']} (sha256 {record['firmware_hash']})"),
        *(
            [("firmware check", _firmware_check(record["firmware_allowed"]))]
            if "firmware_allowed" in record
            else []
        ),
        ("protocol", record["protocol_version"]),
        ("link", "authenticated" if record["authenticated"] else "not authenticated"),
        ("capabilities", ", ".join(record["capabilities"]) or "none"),
        ("status", ", ".join(status["flags"]) or "none"),
        ("gate", status["gate"]),
        ("cards dealt", str(status["cards_dealt"])),
        ("cards remaining", "unknown" if remaining is None else str(remaining)),
        ("active faults", ", ".join(status["active_faults"]) or "none"),
        *((name.replace("_", " "), str(value)) for name, value in record["counters"].items()),
    ]
    return "\n".join(aligned_lines(rows))


def _firmware_check(allowed: bool | None) -> str:
    if allowed is None:
        return "not enforced (device.allowed_firmware_hashes is empty)"
    return "allowed" if allowed else "NOT ALLOWED (not in device.allowed_firmware_hashes)"
