"""Reading records back: by shoe, round, kind or position, a page at a time, payloads decoded.

Separate from the store because every reader (the service at start-up, the commands, the
uplink, the scoreboard) comes through these queries, and none of them writes. The store hands
in `read`, which runs one query under its lock and turns a SQLite failure into its one line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from cardshoe.controller.journal.chain import RECORD_COLUMNS
from cardshoe.controller.journal.errors import JournalCorrupt
from cardshoe.controller.journal.records import Record
from cardshoe.drivers.text_input import json_value

PAGE_SIZE = 500
"""Records read per query while iterating, so a long listing never holds the lock for long."""

COLUMN_LIST = ", ".join(RECORD_COLUMNS)
_PAYLOAD = RECORD_COLUMNS.index("payload")
"""Where the payload's JSON text sits in a stored row."""

Read = Callable[[str, str, list[Any]], list[tuple[Any, ...]]]
"""read(doing, query, parameters): the rows of one query, or the journal's storage error."""


def records(
    read: Read,
    path: Path,
    *,
    shoe_id: str | None,
    round_no: int | None,
    kinds: Iterable[str] | None,
    after_id: int | None,
) -> Iterator[Record]:
    """Records in id order, optionally only one shoe, one round, some kinds, or after an id."""
    conditions = ["id > ?"]
    parameters: list[Any] = []
    if shoe_id is not None:
        conditions.append("shoe_id = ?")
        parameters.append(shoe_id)
    if round_no is not None:
        conditions.append("round_no = ?")
        parameters.append(round_no)
    if kinds is not None:
        wanted = [str(kind) for kind in kinds]
        conditions.append(f"kind IN ({', '.join('?' * len(wanted))})")
        parameters.extend(wanted)
    query = (
        f"SELECT {COLUMN_LIST} FROM records WHERE {' AND '.join(conditions)} "
        f"ORDER BY id LIMIT {PAGE_SIZE}"
    )
    last_seen = after_id or 0
    while True:
        rows = read(f"reading the records after {last_seen}", query, [last_seen, *parameters])
        for row in rows:
            yield record_from_row(path, row)
        if len(rows) < PAGE_SIZE:
            return
        last_seen = rows[-1][0]


def latest(
    read: Read, path: Path, kinds: Iterable[str], count: int, device_serial: str | None
) -> list[Record]:
    """The latest `count` records of these kinds (from one device when given), in id order,
    read through the index by kind: what a start-up or a command needs of a long journal,
    never all of it."""
    wanted = [str(kind) for kind in kinds]
    if count <= 0 or not wanted:
        return []
    device = "" if device_serial is None else "AND device_serial = ? "
    query = (
        f"SELECT {COLUMN_LIST} FROM records WHERE kind IN ({', '.join('?' * len(wanted))}) "
        f"{device}ORDER BY id DESC LIMIT ?"
    )
    serial = [] if device_serial is None else [device_serial]
    rows = read("reading the latest records", query, [*wanted, *serial, count])
    return [record_from_row(path, row) for row in reversed(rows)]


def last_device_seq(read: Read, device_serial: str) -> int | None:
    """The sequence number of the latest journaled event from this device, if any."""
    rows = read(
        "reading the device's last event",
        "SELECT device_seq FROM records WHERE device_serial = ? "
        "AND device_seq IS NOT NULL ORDER BY id DESC LIMIT 1",
        [device_serial],
    )
    return int(rows[0][0]) if rows else None


def record_from_row(path: Path, row: tuple[Any, ...]) -> Record:
    try:
        payload = json_value(row[_PAYLOAD])
    except ValueError:
        raise JournalCorrupt(
            f"{path}: record {row[0]} holds a payload that is not JSON: "
            "run 'shoectl journal verify'"
        ) from None
    values = dict(zip(RECORD_COLUMNS, row, strict=True))
    values["payload"] = payload
    return Record(**values)
