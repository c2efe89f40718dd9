"""shoectl status: the running service's table, device and last alarm, over its socket."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from cardshoe.controller.cli.options import CONFIG_OPTION, SOCKET_OPTION
from cardshoe.controller.cli.service_access import service_socket
from cardshoe.controller.display.columns import aligned_lines
from cardshoe.controller.service.control_client import request
from cardshoe.drivers.api.events import firmware_text


@click.command()
@SOCKET_OPTION
@CONFIG_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def status(socket_path: Path | None, config_path: Path | None, as_json: bool) -> None:
    """State, shoe, round, device and last alarm of the running `shoectl run`.

    Asks the service over its control socket, so the device stays with the
    service. It answers from the start: before its device is up, the state is
    starting or waiting for device, with the reason. Exit 3 with one line when
    no service answers.
    """

    record = request(service_socket(socket_path, config_path), "status")
    click.echo(json.dumps(record) if as_json else status_text(record))


def status_text(record: dict[str, Any]) -> str:
    """The status as aligned "name  value" rows, for a person."""
    device = record["device"]
    options = record["options"]
    approved = ", ".join(
        f"{name} {value}" for name, value in options.items() if name not in ("format", "game")
    )
    rows = [
        ("table", f"{record['table_id']} ({record['game']}, {record['decks']} decks)"),
        ("options", f"{record['fingerprint'][:12]} ({approved})"),
        ("service", f"pid {record['pid']}, started {record['started_at']}"),
    ]
    if device is None:  # the table is not up yet
        rows += [("state", f"{record['state']}: {record['reason']}")]
        rows += alarm_rows(record)
        return "\n".join(aligned_lines(rows))
    state = record["state"]
    if record["held_state"] is not None:
        state = f"held in {record['held_state']} ({', '.join(record['holds'])})"
    rows += [("state", state)]
    clearable = record.get("clearable_holds") or ()
    if clearable:
        rows += [("a supervisor clears", f"{', '.join(clearable)} (shoectl control clear-hold)")]
    rows += [
        ("dealer", record["dealer"] or "none signed in"),
        ("shoe", record["shoe_id"] or "none open"),
    ]
    if record["shoe_id"] is not None:
        rows += [
            ("round", "none yet" if record["round_no"] is None else str(record["round_no"])),
            ("player", " ".join(record["player"]) or "-"),
            ("banker", " ".join(record["banker"]) or "-"),
            ("next card", record["card_due"] or "none due"),
            ("relief burn", relief_burn_text(record)),
            (
                "cards",
                f"{record['dealt']} dealt, {record['burned']} burned, "
                f"{record['rounds_finished']} rounds finished",
            ),
        ]
    connected = "connected" if device["connected"] else "LINK DOWN"
    if device["authenticated"]:
        connected += ", authenticated"
    rows += [
        (
            "device",
            f"{device['model']} {device['kind']} serial {device['serial_number']} "
            f"at {device['url']} ({connected})",
        ),
        ("firmware", firmware_text(device["firmware_version"], device["firmware_hash"])),
        ("protocol", f"{device['protocol']} {device['protocol_version']}"),
        ("capabilities", ", ".join(device["capabilities"]) or "none (the table only judges)"),
    ]
    return "\n".join(aligned_lines(rows + alarm_rows(record)))


def alarm_rows(record: dict[str, Any]) -> list[tuple[str, str]]:
    """The last alarm, the refused commands and the journal: shown whether or not the table
    is up, since a refusal at start-up is an alarm too."""
    alarm = record["last_alarm"]
    return [
        (
            "last alarm",
            "none since start"
            if alarm is None
            else f"{alarm['time']} {alarm['kind']}: {alarm['detail']}",
        ),
        ("refused", f"{record['refused_commands']} operator command(s) since start"),
        ("journal", record["journal"]),
    ]


def relief_burn_text(record: dict[str, Any]) -> str:
    """Whether a dealer's relief makes the house burn before the next deal (game.relief_burn)."""
    cards = record["options"]["relief_burn"]
    if not cards:
        return "off (game.relief_burn = 0)"
    due = "due after the next no more bets" if record["relief_burn_due"] else "none due"
    return f"{cards} card(s) when a dealer is relieved: {due}"
