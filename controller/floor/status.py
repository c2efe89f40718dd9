"""shoectl floor status: where every table's feed stands, from the floor database alone.

Lag is measured against the chain head the table's uplink last announced in
its retained status: records the journal holds that the floor has not yet
verified, and how old the first of them is in journal time.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

import psycopg

from cardshoe.controller.floor.schema import require_current
from cardshoe.controller.floor.software_check import Verdict
from cardshoe.controller.one_line import escape_line_breaks
from cardshoe.controller.timestamps import utc_timestamp

VERIFIED_PREFIX = "software verified "


@dataclass(frozen=True)
class TableStatus:
    table_id: str
    site: str
    last_record_id: int
    """The highest record id ingested."""
    contiguous_id: int
    """Every record up to this one is stored and its chain verified."""
    gaps: list[tuple[int, int]]
    """Open gaps after contiguous_id, as (first, last) missing ids."""
    chain_ok: bool
    """False once any record of the table failed verification (see floor_alarms)."""
    alarms: int
    last_seen: str | None
    online: bool | None
    """From the table's retained status; None before any status arrived."""
    head_id: int
    lag_records: int
    lag_s: float
    software: str | None = None
    """The latest software check: "verified <time>", or its failed verdict, time and why
    (shoectl floor authenticate); None before any check."""

    @property
    def software_verified(self) -> bool:
        """No check yet, or the latest one verified."""
        return self.software is None or self.software.startswith(VERIFIED_PREFIX)

    @property
    def chain_verified(self) -> bool:
        return self.chain_ok and not self.gaps

    def to_json(self) -> dict[str, Any]:
        return asdict(self) | {
            "chain_verified": self.chain_verified,
            "software_verified": self.software_verified,
        }


def floor_status(connection: psycopg.Connection) -> list[TableStatus]:
    require_current(connection)
    rows = connection.execute(
        "SELECT t.table_id, t.site, t.last_record_id, t.contiguous_id, t.chain_ok, "
        "t.last_seen, t.online, t.status, "
        "(SELECT count(*) FROM floor_alarms a WHERE a.table_id = t.table_id), "
        "(SELECT r.time_ns FROM journal_records r "
        " WHERE r.table_id = t.table_id AND r.record_id = t.contiguous_id) "
        "FROM floor_tables t ORDER BY t.table_id"
    ).fetchall()
    software = _latest_software_checks(connection)
    now_ns = time.time_ns()
    tables = []
    for (
        table_id,
        site,
        last_id,
        contiguous_id,
        chain_ok,
        last_seen,
        online,
        status,
        alarms,
        contiguous_time_ns,
    ) in rows:
        head_id, lag, lag_s = feed_lag(status, last_id, contiguous_id, contiguous_time_ns, now_ns)
        tables.append(
            TableStatus(
                table_id=table_id,
                site=site,
                last_record_id=last_id,
                contiguous_id=contiguous_id,
                gaps=_gaps(connection, table_id, contiguous_id, last_id),
                chain_ok=chain_ok,
                alarms=alarms,
                last_seen=None if last_seen is None else _utc(last_seen),
                online=online,
                head_id=head_id,
                lag_records=lag,
                lag_s=lag_s,
                software=software.get(table_id),
            )
        )
    return tables


def _latest_software_checks(connection: psycopg.Connection) -> dict[str, str]:
    """Table id -> its latest software check as a person reads it."""
    rows = connection.execute(
        "SELECT DISTINCT ON (table_id) table_id, verdict, "
        "coalesce(answered_at, requested_at), detail FROM software_checks "
        "ORDER BY table_id, id DESC"
    ).fetchall()
    checks = {}
    for table_id, verdict, moment, detail in rows:
        if verdict == Verdict.VERIFIED:
            checks[table_id] = f"{VERIFIED_PREFIX}{_utc(moment)}"
        else:
            checks[table_id] = f"software {verdict.upper()} {_utc(moment)}: {detail}"
    return checks


def feed_lag(
    status: dict[str, Any] | None,
    last_id: int,
    contiguous_id: int,
    contiguous_time_ns: int | None,
    now_ns: int,
) -> tuple[int, int, float]:
    """(head_id, lag in records, lag in seconds) of a table's feed, from its retained status
    and what the floor holds: the floor status and the pit's tiles measure it alike."""
    head_id = max(int((status or {}).get("head_id") or 0), last_id)
    lag = max(0, head_id - contiguous_id)
    lag_s = 0.0
    if lag:
        since = contiguous_time_ns or (status or {}).get("head_time_ns") or now_ns
        lag_s = max(0.0, (now_ns - since) / 1e9)
    return head_id, lag, round(lag_s, 3)


def _utc(moment: datetime) -> str:
    return utc_timestamp(moment)


def _gaps(
    connection: psycopg.Connection, table_id: str, contiguous_id: int, last_id: int
) -> list[tuple[int, int]]:
    if last_id <= contiguous_id:
        return []
    held = [
        row[0]
        for row in connection.execute(
            "SELECT record_id FROM journal_records WHERE table_id = %s AND record_id > %s "
            "ORDER BY record_id",
            (table_id, contiguous_id),
        )
    ]
    gaps, expected = [], contiguous_id + 1
    for record_id in held:
        if record_id > expected:
            gaps.append((expected, record_id - 1))
        expected = record_id + 1
    return gaps


def status_lines(tables: list[TableStatus]) -> list[str]:
    """A fixed-width table, one line per table, for people."""
    if not tables:
        return ["no table has sent anything yet"]
    header = (
        f"{'table':<12} {'site':<10} {'ingested':>9} {'verified':>9} {'gaps':<14} "
        f"{'chain':<7} {'alarms':>6} {'status':<8} {'lag':>7} {'lag s':>7}  last seen"
    )
    lines = [header]
    for table in tables:
        gaps = ",".join(f"{a}-{b}" if a != b else str(a) for a, b in table.gaps) or "-"
        state = {True: "online", False: "offline", None: "unknown"}[table.online]
        lines.append(
            f"{table.table_id:<12} {table.site:<10} {table.last_record_id:>9} "
            f"{table.contiguous_id:>9} {gaps:<14} "
            f"{'ok' if table.chain_verified else 'BROKEN' if not table.chain_ok else 'gap':<7} "
            f"{table.alarms:>6} {state:<8} {table.lag_records:>7} {table.lag_s:>7.1f}  "
            f"{table.last_seen or '-'}"
        )
        if table.software is not None:
            lines.append(f"{'':<12} {table.software}")
    # A table's id and site are its topic's levels: whoever reaches the broker picks them.
    return [escape_line_breaks(line) for line in lines]
