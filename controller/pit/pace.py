"""The pace of a day on the floor: rounds per hour per table and per dealer, by hour of day,
and the time lost to holds and to shuffles (a shoe's end to the next shoe's first round).

The day and its hours are the floor's own (`shoectl floor web --time-zone`): a supervisor
asks for "Tuesday, 21:00", not a UTC hour. PostgreSQL counts the rounds per hour since
the day's local midnight; Python names each of those hours by the local clock, so a day
that changes to or from summer time (23 or 25 hours) still lands on the hours of its
clock, and PostgreSQL's own time zone data never has to agree with Python's.
A round counts for the dealer signed in when its result was journaled.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import psycopg

from cardshoe.controller import record_kinds
from cardshoe.controller.errors import UserError

HOURS = 24
NS_PER_S = 1_000_000_000


@dataclass
class PaceRow:
    name: str
    """The table id, or the dealer's user name."""
    rounds_by_hour: list[int] = field(default_factory=lambda: [0] * HOURS)
    """Rounds per hour of the local day, 0 to 23."""

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
    zone: ZoneInfo
    tables: list[TablePace]
    dealers: list[PaceRow]

    def to_json(self) -> dict[str, Any]:
        return {
            "date": self.day.isoformat(),
            "time_zone": self.zone.key,
            "tables": [asdict(row) | {"rounds": row.rounds} for row in self.tables],
            "dealers": [asdict(row) | {"rounds": row.rounds} for row in self.dealers],
            "hold_s": round(sum(row.hold_s for row in self.tables), 3),
            "shuffle_s": round(sum(row.shuffle_s for row in self.tables), 3),
        }


@dataclass(frozen=True)
class LocalDay:
    """One day of the floor's clock, as the journal's nanosecond times."""

    start: datetime
    start_ns: int
    end_ns: int

    @classmethod
    def of(cls, day: date, zone: ZoneInfo) -> LocalDay:
        start = datetime(day.year, day.month, day.day, tzinfo=zone)
        after = day + timedelta(days=1)
        end = datetime(after.year, after.month, after.day, tzinfo=zone)
        return cls(start, int(start.timestamp()) * NS_PER_S, int(end.timestamp()) * NS_PER_S)

    def clock_hour(self, hours_since_start: int) -> int:
        """The local clock's hour, hours_since_start real hours after the day's midnight."""
        moment = self.start.astimezone(UTC) + timedelta(hours=hours_since_start)
        return moment.astimezone(self.start.tzinfo).hour


def floor_zone(name: str) -> ZoneInfo:
    """The time zone an IANA name gives, or a UserError saying how to name one."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise UserError(
            f"--time-zone {name!r} is not a time zone: give an IANA name such as "
            "Asia/Macau or Europe/London (timedatectl list-timezones lists them)"
        ) from None


def day_pace(db: psycopg.Connection, day: date, zone: ZoneInfo) -> DayPace:
    local = LocalDay.of(day, zone)
    window = {"start_ns": local.start_ns, "end_ns": local.end_ns}
    tables: dict[str, TablePace] = {}
    dealers: dict[str, PaceRow] = {}
    for table_id, elapsed_hours, dealer, rounds in db.execute(
        "SELECT r.table_id, floor((r.time_ns - %(start_ns)s) / 3600e9)::int, "
        "coalesce((SELECT s.payload->>'dealer' FROM journal_records s "
        f"  WHERE s.table_id = r.table_id AND s.kind = '{record_kinds.COMMAND_SIGN_IN}' "
        "  AND s.record_id < r.record_id ORDER BY s.record_id DESC LIMIT 1), '-'), count(*) "
        f"FROM journal_records r WHERE r.kind = '{record_kinds.ROUND_RESULT}' "
        "AND r.time_ns >= %(start_ns)s AND r.time_ns < %(end_ns)s GROUP BY 1, 2, 3",
        window,
    ):
        hour = local.clock_hour(elapsed_hours)
        tables.setdefault(table_id, TablePace(table_id)).rounds_by_hour[hour] += rounds
        dealers.setdefault(dealer, PaceRow(dealer)).rounds_by_hour[hour] += rounds
    for table_id, hold_s, shuffle_s in db.execute(
        "WITH marks AS (SELECT table_id, kind, time_ns, "
        "  lead(kind) OVER w AS next_kind, lead(time_ns) OVER w AS next_ns "
        f"  FROM journal_records WHERE kind IN ('{record_kinds.HOLD_STARTED}', "
        f"  '{record_kinds.HOLD_ENDED}', '{record_kinds.SHOE_ENDED}', "
        f"  '{record_kinds.ROUND_OPENED}') "
        "  AND time_ns >= %(start_ns)s AND time_ns < %(end_ns)s "
        "  WINDOW w AS (PARTITION BY table_id ORDER BY record_id)) "
        "SELECT table_id, "
        f"coalesce(sum(next_ns - time_ns) FILTER (WHERE kind = '{record_kinds.HOLD_STARTED}' "
        f"  AND next_kind = '{record_kinds.HOLD_ENDED}'), 0) / 1e9, "
        f"coalesce(sum(next_ns - time_ns) FILTER (WHERE kind = '{record_kinds.SHOE_ENDED}' "
        f"  AND next_kind = '{record_kinds.ROUND_OPENED}'), 0) / 1e9 "
        "FROM marks GROUP BY table_id",
        window,
    ):
        pace = tables.setdefault(table_id, TablePace(table_id))
        pace.hold_s, pace.shuffle_s = round(float(hold_s), 3), round(float(shuffle_s), 3)
    return DayPace(
        day,
        zone,
        sorted(tables.values(), key=lambda row: row.name),
        sorted(dealers.values(), key=lambda row: row.name),
    )
