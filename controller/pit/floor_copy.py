"""The floor's copy of a table's journal read back as journal Records.

The scoreboard's board and the round recall are pure projections of
Records, so the pit builds them from PostgreSQL with the very code that
builds them from the table's own SQLite journal: the same records give the
same board and the same recall, at the table and on the floor.
"""

from __future__ import annotations

from typing import Any

import psycopg

from cardshoe.controller import record_kinds
from cardshoe.controller.journal.records import Record

COLUMNS = (
    "record_id, time_ns, table_id, shoe_id, round_no, device_serial, device_seq, kind, "
    "payload, prev_hash, hash"
)
"""journal_records' columns in the order of Record's fields."""


def floor_records(
    db: psycopg.Connection,
    table_id: str,
    condition: str = "",
    params: dict[str, Any] | None = None,
    *,
    limit: int | None = None,
    newest: bool = False,
) -> list[Record]:
    """The table's records the floor holds and has verified, in id order, with an extra
    condition on journal_records (aliased r) if given; at most `limit` of them if given, the
    first or, with newest, the last (read backwards from the newest, so an index stops there)."""
    order = "ORDER BY r.record_id DESC" if newest else "ORDER BY r.record_id"
    rows = db.execute(
        f"SELECT {', '.join('r.' + name for name in COLUMNS.split(', '))} "
        "FROM journal_records r JOIN floor_tables t USING (table_id) "
        "WHERE r.table_id = %(table_id)s AND r.record_id <= t.contiguous_id "
        f"{'AND ' + condition if condition else ''} {order} LIMIT %(limit)s",
        {"table_id": table_id, **(params or {}), "limit": limit},
    ).fetchall()
    records = [Record(*row) for row in rows]
    return records[::-1] if newest else records


_FIRST_SHOE_STARTED = (
    "SELECT min(s.record_id) FROM journal_records s WHERE s.table_id = %(table_id)s "
    f"AND s.kind = '{record_kinds.SHOE_STARTED}' AND "
)
_SHOE_START = f"({_FIRST_SHOE_STARTED} s.shoe_id = %(shoe_id)s)"
_NEXT_SHOE_START = (
    f"({_FIRST_SHOE_STARTED} s.shoe_id IS DISTINCT FROM %(shoe_id)s "
    f"AND s.record_id > {_SHOE_START})"
)
SHOE_SPAN = (
    f"r.shoe_id = %(shoe_id)s AND r.record_id >= coalesce({_SHOE_START}, 0) "
    f"AND r.record_id < coalesce({_NEXT_SHOE_START}, {2**63 - 1})"
)
"""The condition on journal_records (aliased r) for one shoe's records: its shoe_id, between
its shoe.started and the next shoe's, both found by the pit's index of kinds, so PostgreSQL
reads a range of the primary key as long as the shoe (a filter on shoe_id alone read every
record the table ever sent, millions in a year)."""


def shoe_records(
    db: psycopg.Connection,
    table_id: str,
    shoe_id: str,
    condition: str = "",
    params: dict[str, Any] | None = None,
) -> list[Record]:
    """The shoe's verified records, in id order, with an extra condition if given."""
    return floor_records(
        db,
        table_id,
        f"{SHOE_SPAN} AND {condition}" if condition else SHOE_SPAN,
        {"shoe_id": shoe_id, **(params or {})},
    )
