"""Round recall on the floor: `shoectl journal round` from the floor's copy, plus what a
dispute file needs beside it (each card's read time to the millisecond, the dealer signed
in, each record's hash check)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import psycopg

from cardshoe.controller import record_kinds
from cardshoe.controller.floor.messages import EventMessage
from cardshoe.controller.journal.chain import GENESIS_HASH
from cardshoe.controller.journal.records import Record
from cardshoe.controller.pit.floor_copy import shoe_records
from cardshoe.controller.scoreboard.round_recall import (
    RECALL_KINDS_BEFORE,
    JournalEntry,
    recall_round,
)


def round_recall(
    db: psycopg.Connection, table_id: str, shoe_id: str, round_no: int
) -> dict[str, Any] | None:
    """The round as `shoectl journal round --json` gives it, with the pit's additions;
    None when the floor holds no such round."""
    records = shoe_records(
        db,
        table_id,
        shoe_id,
        "(r.round_no = %(round_no)s "
        "OR (r.round_no = %(round_no)s - 1 AND r.kind = ANY(%(kinds_before)s)))",
        {"round_no": round_no, "kinds_before": list(RECALL_KINDS_BEFORE)},
    )
    recall = recall_round(
        shoe_id,
        round_no,
        (JournalEntry(r.id, r.time_utc, r.kind, r.payload) for r in records),
    )
    if recall is None:
        return None
    by_id = {record.id: record for record in records}
    before = _hashes(db, table_id, [record.id - 1 for record in records])
    checks = [
        {
            "id": record.id,
            "kind": record.kind,
            "time": record.time_utc,
            "hash": record.hash,
            "hash_ok": EventMessage.from_record(record).hash_matches(),
            "links": record.prev_hash == before.get(record.id - 1),
        }
        for record in records
    ]
    read_at = {card["record"]: _millis(by_id[card["record"]]) for card in recall.cards}
    return recall.to_json() | {
        "table_id": table_id,
        "card_times": {str(record_id): time for record_id, time in read_at.items()},
        "dealer": _dealer_at(db, table_id, next(r.id for r in records if r.round_no == round_no)),
        "record_checks": checks,
    }


def _millis(record: Record) -> str:
    moment = datetime.fromtimestamp(record.time_ns / 1e9, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{record.time_ns // 1_000_000 % 1000:03d}Z"


def _hashes(db: psycopg.Connection, table_id: str, record_ids: list[int]) -> dict[int, str]:
    """The stored hash of each record id (record 0 is the chain's genesis)."""
    rows = db.execute(
        "SELECT record_id, hash FROM journal_records WHERE table_id = %s AND record_id = ANY(%s)",
        (table_id, record_ids),
    ).fetchall()
    return {0: GENESIS_HASH} | {int(record_id): digest for record_id, digest in rows}


def _dealer_at(db: psycopg.Connection, table_id: str, record_id: int) -> str | None:
    """The dealer signed in when the round opened: the sign-in before it."""
    row = db.execute(
        "SELECT payload->>'dealer' FROM journal_records WHERE table_id = %s AND kind = %s "
        "AND record_id < %s ORDER BY record_id DESC LIMIT 1",
        (table_id, record_kinds.COMMAND_SIGN_IN, record_id),
    ).fetchone()
    return None if row is None else row[0]
