"""The floor's copy of a table's journal read back as journal Records.

The scoreboard's board and the round recall are pure projections of
Records, so the pit builds them from PostgreSQL with the very code that
builds them from the table's own SQLite journal: the same records give the
same board and the same recall, at the table and on the floor.
"""

from __future__ import annotations

from typing import Any

import psycopg

from cardshoe.controller.journal.records import Record

COLUMNS = (
    "record_id, time_ns, table_id, shoe_id, round_no, device_serial, device_seq, kind, "
    "payload, prev_hash, hash"
)
"""journal_records' columns in the order of Record's fields."""


def floor_records(
    db: psycopg.Connection, table_id: str, condition: str = "", params: dict[str, Any] | None = None
) -> list[Record]:
    """The table's records the floor holds and has verified, in id order, with an extra
    condition on journal_records (aliased r) if given."""
    rows = db.execute(
        f"SELECT {', '.join('r.' + name for name in COLUMNS.split(', '))} "
        "FROM journal_records r JOIN floor_tables t USING (table_id) "
        "WHERE r.table_id = %(table_id)s AND r.record_id <= t.contiguous_id "
        f"{'AND ' + condition if condition else ''} ORDER BY r.record_id",
        {"table_id": table_id, **(params or {})},
    ).fetchall()
    return [Record(*row) for row in rows]
