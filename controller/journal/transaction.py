"""Appending records: the checks on each record's fields, its hash in the chain, and the
clock.stepped record put before one whose time went back.

Separate from the store because this is the one path every card takes (the store opens and
commits the transaction around it), and what a record may hold is decided here alone.
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Mapping
from typing import Any

from cardshoe.controller.canonical import canonical_json
from cardshoe.controller.journal.chain import RECORD_COLUMNS, record_hash

_KIND_PATTERN = re.compile(r"^[a-z][a-z0-9_.-]{0,63}$")

CLOCK_STEPPED = "clock.stepped"
"""The record the journal adds before one whose wall-clock time is more than
CLOCK_STEP_TOLERANCE_NS earlier than the record before it: the clock was set back, so the
times around it do not order the records (their ids always do)."""
CLOCK_STEP_TOLERANCE_NS = 2_000_000_000
"""A step back this small is no alarm: NTP's corrections and leap seconds stay well inside."""

_INSERT_RECORD = (
    f"INSERT INTO records ({', '.join(RECORD_COLUMNS)}) "
    f"VALUES ({', '.join('?' * len(RECORD_COLUMNS))})"
)


class Transaction:
    """Records appended together: all committed when the with-block ends, or none."""

    def __init__(
        self,
        connection: sqlite3.Connection,
        table_id: str,
        last_id: int,
        head_hash: str,
        count: int,
        last_time_ns: int,
    ) -> None:
        self._connection = connection
        self._table_id = table_id
        self._last_id = last_id
        self._head_hash = head_hash
        self._count = count
        self._last_time_ns = last_time_ns
        self._open = True

    def append(
        self,
        kind: str,
        payload: Mapping[str, Any],
        *,
        shoe_id: str | None,
        round_no: int | None,
        device_serial: str | None,
        device_seq: int | None = None,
    ) -> int:
        """Add one record to this transaction and return its id.

        kind is a short lowercase name (letters, digits, "_", "-", ".");
        a StrEnum member works. payload must be JSON: string keys, no NaN.
        """
        if not self._open:
            raise RuntimeError("this transaction has ended; open a new one to append")
        _check_record_fields(kind, payload, round_no, device_serial, device_seq)
        now = time.time_ns()
        if self._last_time_ns - now > CLOCK_STEP_TOLERANCE_NS:
            self._write(
                CLOCK_STEPPED,
                _clock_step_payload(self._last_time_ns, now),
                now,
                shoe_id=shoe_id,
                round_no=round_no,
                device_serial=device_serial,
                device_seq=None,
            )
        return self._write(
            kind,
            payload,
            now,
            shoe_id=shoe_id,
            round_no=round_no,
            device_serial=device_serial,
            device_seq=device_seq,
        )

    def _write(
        self,
        kind: str,
        payload: Mapping[str, Any],
        time_ns: int,
        *,
        shoe_id: str | None,
        round_no: int | None,
        device_serial: str | None,
        device_seq: int | None,
    ) -> int:
        record_id = self._last_id + 1
        hashed = (
            record_id,
            time_ns,
            self._table_id,
            shoe_id,
            round_no,
            device_serial,
            device_seq,
            str(kind),
            canonical_json(payload),
        )
        new_hash = record_hash(self._head_hash, hashed)
        self._connection.execute(_INSERT_RECORD, (*hashed, self._head_hash, new_hash))
        self._last_id, self._head_hash, self._last_time_ns = record_id, new_hash, time_ns
        self._count += 1
        return record_id

    def _write_head(self) -> None:
        self._connection.execute(
            "UPDATE chain_head SET record_count = ?, last_id = ?, head_hash = ?",
            (self._count, self._last_id, self._head_hash),
        )


def _clock_step_payload(last_time_ns: int, time_ns: int) -> dict[str, Any]:
    """The clock.stepped alarm: how far the wall clock went back, between which times."""
    back_s = (last_time_ns - time_ns) / 1e9
    return {
        "kind": "clock",
        "detail": f"the wall clock went back {back_s:.3f} s: record times from here are "
        "earlier than those before; the record ids keep the order (check the PC's clock)",
        "stepped_back_s": round(back_s, 3),
    }


def _check_record_fields(
    kind: str,
    payload: Mapping[str, Any],
    round_no: int | None,
    device_serial: str | None,
    device_seq: int | None,
) -> None:
    if not isinstance(kind, str) or not _KIND_PATTERN.match(kind):
        raise ValueError(f"record kind {kind!r} must be a short lowercase name such as card_read")
    if not isinstance(payload, Mapping):
        raise TypeError(f"record payload must be a mapping, not {type(payload).__name__}")
    _check_string_keys(payload)
    if round_no is not None and round_no < 0:
        raise ValueError(f"round_no {round_no} is negative")
    if device_seq is not None and device_serial is None:
        raise ValueError("device_seq needs the device_serial it belongs to")


def _check_string_keys(value: Any) -> None:
    """JSON would turn a key 1 into "1", and the payload read back would differ."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"payload key {key!r} is not a string")
            _check_string_keys(item)
    elif isinstance(value, list | tuple):
        for item in value:
            _check_string_keys(item)
