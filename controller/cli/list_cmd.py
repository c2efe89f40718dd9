"""shoectl list: the shoes and shuffler-dealers this computer can see, without opening them."""

from __future__ import annotations

import json

import click

from cardshoe.controller.one_line import escape_line_breaks
from cardshoe.drivers.discovery import Candidate, discover


@click.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON array ([] when none).")
def list_command(as_json: bool) -> None:
    """Serial ports with USB details and udev links, and cardshoe USB devices.

    Each row's URL is what `shoectl info` and the table configuration take.
    """

    found = discover()
    if as_json:
        click.echo(json.dumps([candidate.to_json() for candidate in found.candidates]))
        return
    for note in found.notes:
        click.echo(f"note: {escape_line_breaks(note)}", err=True)
    if not found.candidates:
        click.echo("no devices found")
        return
    for candidate in found.candidates:
        for line in _candidate_lines(candidate):
            click.echo(escape_line_breaks(line))


def _candidate_lines(candidate: Candidate) -> list[str]:
    """A candidate's lines for a person. The caller escapes each: the USB strings are what
    the device says of itself, and one could hold a terminal's control sequence."""
    record = candidate.to_json()
    details = [
        record["usb_id"],
        f"serial {record['serial_number']}" if record["serial_number"] else None,
        record["product"] or record["manufacturer"],
        f"port {record['location']}" if record["location"] else None,
    ]
    known = ", ".join(item for item in details if item)
    lines = [f"{candidate.url}  ({known})" if known else candidate.url]
    if candidate.device_path != candidate.url:
        lines.append(f"    device {candidate.device_path}")
    lines += [f"    link   {link}" for link in candidate.symlinks if link != candidate.url]
    if candidate.problem:
        lines.append(f"    problem: {candidate.problem}")
    return lines
