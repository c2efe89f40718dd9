"""shoectl info: who the device at a URL is, what it can do and how its link fares."""

from __future__ import annotations

import json
from typing import Any

import click

DEFAULT_TIMEOUT_S = 2.0


@click.command()
@click.argument("url")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1),
    default=DEFAULT_TIMEOUT_S,
    show_default=True,
    help="Seconds to wait for the device to answer.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def info(url: str, timeout: float, as_json: bool) -> None:
    """Model, kind, serial number, firmware, protocol, capabilities and counters.

    URL is a serial port (/dev/ttyUSB0, /dev/cardshoe/shoe-SERIAL), socket://HOST:PORT,
    sim://PROFILE for a simulated device, or usb://VID:PID[/SERIAL]; `shoectl list`
    shows what is attached. Exit 3 when the device is absent, busy or not permitted.
    """
    from cardshoe.controller.cli.device_access import device_user_error, opened_device
    from cardshoe.drivers.errors import DriverError
    from cardshoe.drivers.messages import message_to_json

    with opened_device(url, timeout=timeout) as device:
        try:
            status = device.get_status()
        except DriverError as exc:
            raise device_user_error(exc) from exc
        record = device.info.to_json()
        status_fields = message_to_json(status)["fields"]
        del status_fields["request_id"]
        record["status"] = status_fields
    click.echo(json.dumps(record) if as_json else _text(record))


def _text(record: dict[str, Any]) -> str:
    status = record["status"]
    remaining = status["cards_remaining"]
    rows = [
        ("model", record["model"]),
        ("kind", record["kind"]),
        ("serial number", record["serial_number"]),
        ("firmware", f"{record['firmware_version']} (sha256 {record['firmware_hash']})"),
        ("protocol", record["protocol_version"]),
        ("capabilities", ", ".join(record["capabilities"]) or "none"),
        ("status", ", ".join(status["flags"]) or "none"),
        ("gate", status["gate"]),
        ("cards dealt", str(status["cards_dealt"])),
        ("cards remaining", "unknown" if remaining is None else str(remaining)),
        ("active faults", ", ".join(status["active_faults"]) or "none"),
        *((name.replace("_", " "), str(value)) for name, value in record["counters"].items()),
    ]
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name:<{width}}  {value}" for name, value in rows)
