"""The pace of a day on the floor: rounds per hour per table and per dealer, by hour of day,
and the time lost to holds and to shuffles (a shoe's end to the next shoe's first round).

Hours are UTC hours, as every time the project writes; a round counts for
the dealer signed in when its result was journaled.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

import psycopg

HOURS = 24


@dataclass
class PaceRow:
    name: str
    """The table id, or the dealer's user name."""
    rounds_by_hour: list[int] = field(default_factory=lambda: [0] * HOURS)

    @property
    def rounds(self) -> int:
        return sum(self.rounds_by_hour)


@dataclass
class TablePace(PaceRow):
    hold_s: float = 0.0
    shuffle_s: float = 0.0


@dataclass
class DayPace:
    day: date
    tables: list[TablePace]
    dealers: list[PaceRow]

    def to_json(self) -> dict[str, Any]:
        return {
            "date": self.day.isoformat(),
            "tables": [asdict(row) | {"rounds": row.rounds} for row in self.tables],
            "dealers": [asdict(row) | {"rounds": row.rounds} for row in self.dealers],
        }


def day_pace(db: psycopg.Connection, day: date) -> DayPace:
    start = datetime(day.year, day.month, day.day, tzinfo=UTC)
    window = {
        "start_ns": int(start.timestamp()) * 1_000_000_000,
        "end_ns": int((start + timedelta(days=1)).timestamp()) * 1_000_000_000,
    }
    tables: dict[str, TablePace] = {}
    dealers: dict[str, PaceRow] = {}
    for table_id, hour, dealer, rounds in db.execute(
        "SELECT r.table_id, floor((r.time_ns - %(start_ns)s) / 3600e9)::int, "
        "coalesce((SELECT s.payload->>'dealer' FROM journal_records s "
        "  WHERE s.table_id = r.table_id AND s.kind = 'command.sign_in' "
        "  AND s.record_id < r.record_id ORDER BY s.record_id DESC LIMIT 1), '-'), count(*) "
        "FROM journal_records r WHERE r.kind = 'round.result' "
        "AND r.time_ns >= %(start_ns)s AND r.time_ns < %(end_ns)s GROUP BY 1, 2, 3",
        window,
    ):
        tables.setdefault(table_id, TablePace(table_id)).rounds_by_hour[hour] += rounds
        dealers.setdefault(dealer, PaceRow(dealer)).rounds_by_hour[hour] += rounds
    for table_id, hold_s, shuffle_s in db.execute(
        "WITH marks AS (SELECT table_id, kind, time_ns, "
        "  lead(kind) OVER w AS next_kind, lead(time_ns) OVER w AS next_ns "
        "  FROM journal_records WHERE kind IN ('hold.started', 'hold.ended', 'shoe.ended', "
        "  'round.opened') AND time_ns >= %(start_ns)s AND time_ns < %(end_ns)s "
        "  WINDOW w AS (PARTITION BY table_id ORDER BY record_id)) "
        "SELECT table_id, "
        "coalesce(sum(next_ns - time_ns) FILTER (WHERE kind = 'hold.started' "
        "  AND next_kind = 'hold.ended'), 0) / 1e9, "
        "coalesce(sum(next_ns - time_ns) FILTER (WHERE kind = 'shoe.ended' "
        "  AND next_kind = 'round.opened'), 0) / 1e9 "
        "FROM marks GROUP BY table_id",
        window,
    ):
        pace = tables.setdefault(table_id, TablePace(table_id))
        pace.hold_s, pace.shuffle_s = round(float(hold_s), 3), round(float(shuffle_s), 3)
    return DayPace(
        day,
        sorted(tables.values(), key=lambda row: row.name),
        sorted(dealers.values(), key=lambda row: row.name),
    )
