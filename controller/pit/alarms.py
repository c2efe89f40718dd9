"""Every alarm of the floor in one list: the journals' and the floor's own, acknowledged or not.

An alarm comes from one of two places, and its id says which: a journal
record (alarm, irregularity, hold.started) is "TABLE:RECORD", an alarm
ingest raised about a table's feed (floor_alarms) is "floor:ID". Both are
stable for ever, so an acknowledgement (pit_alarm_acks) keeps to its alarm.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

import psycopg

from cardshoe.controller import record_kinds
from cardshoe.controller.floor.schema import ALARM_KINDS, sql_list
from cardshoe.controller.pit.accounts import AuditAction, Role, Session, audit
from cardshoe.controller.procedure.facts import WATCHER_ALARMS
from cardshoe.controller.timestamps import utc_timestamp

FLOOR_ID_PREFIX = "floor:"
SURVEILLANCE_KINDS = tuple(sorted(kind.value for kind in WATCHER_ALARMS))
"""Alarm kinds only surveillance and supervisors see (advantage play, stacked shoes)."""
NOTE_MAX_CHARS = 2000

_ALL_ALARMS = f"""(
    SELECT r.table_id || ':' || r.record_id AS id, r.table_id,
        CASE r.kind WHEN '{record_kinds.ALARM}' THEN r.payload->>'kind'
            WHEN '{record_kinds.IRREGULARITY}' THEN 'irregularity'
            ELSE 'hold' END AS kind,
        CASE r.kind WHEN '{record_kinds.ALARM}' THEN r.payload->>'detail'
            WHEN '{record_kinds.IRREGULARITY}' THEN (r.payload->>'code') || ': '
                || (r.payload->>'consequence') || ' (' || (r.payload->>'detail') || ')'
            ELSE r.payload->>'reason' END AS detail,
        to_timestamp(r.time_ns / 1e9) AS raised_at
    FROM journal_records r
    WHERE r.kind IN ({sql_list(ALARM_KINDS)})
    UNION ALL
    SELECT '{FLOOR_ID_PREFIX}' || a.id, a.table_id, a.kind, a.detail, a.raised_at
    FROM floor_alarms a
) alarm LEFT JOIN pit_alarm_acks ack ON ack.alarm_id = alarm.id"""
"""Every alarm as (id, table_id, kind, detail, raised_at), with its acknowledgement if any."""
_SHOWN = "(%(surveillance)s OR alarm.kind <> ALL(%(hidden)s))"
"""The alarms the role may see."""


@dataclass(frozen=True)
class FloorAlarm:
    id: str
    table_id: str
    kind: str
    detail: str
    raised_at: str
    overdue: bool
    """Unacknowledged for longer than the pit's overdue time."""
    acknowledged_by: str | None = None
    acknowledged_at: str | None = None
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        shown = asdict(self)
        if self.acknowledged_by is None:
            for name in ("acknowledged_by", "acknowledged_at", "note"):
                del shown[name]
        return shown


class AckRefused(Exception):
    """Why an acknowledgement cannot be stored, and the HTTP status that says so."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def list_alarms(
    db: psycopg.Connection,
    role: Role,
    *,
    include_acknowledged: bool,
    overdue_after_s: float,
    now: datetime,
    limit: int = 1000,
) -> list[FloorAlarm]:
    """Unacknowledged first, newest first; surveillance kinds only for the roles that see them."""
    rows = db.execute(
        f"SELECT alarm.*, ack.acknowledged_by, ack.acknowledged_at, ack.note FROM {_ALL_ALARMS} "
        f"WHERE (%(all)s OR ack.alarm_id IS NULL) AND {_SHOWN} "
        "ORDER BY ack.alarm_id IS NOT NULL, alarm.raised_at DESC, alarm.id LIMIT %(limit)s",
        {
            "all": include_acknowledged,
            "surveillance": role.sees_surveillance_alarms,
            "hidden": list(SURVEILLANCE_KINDS),
            "limit": limit,
        },
    ).fetchall()
    alarms = []
    for alarm_id, table_id, kind, detail, raised_at, by, at, note in rows:
        overdue = by is None and (now - raised_at).total_seconds() > overdue_after_s
        alarms.append(
            FloorAlarm(
                id=alarm_id,
                table_id=table_id,
                kind=kind,
                detail=detail or "",
                raised_at=utc_timestamp(raised_at),
                overdue=overdue,
                acknowledged_by=by,
                acknowledged_at=None if at is None else utc_timestamp(at),
                note=note,
            )
        )
    return alarms


def acknowledge(db: psycopg.Connection, session: Session, alarm_id: str, note: str) -> FloorAlarm:
    """Store who acknowledged the alarm, when, and why; audited in the same transaction."""
    if not session.role.may_acknowledge:
        raise AckRefused(
            403,
            f"{session.user} is a {session.role.value}: only a supervisor "
            "or surveillance may acknowledge alarms",
        )
    note = note.strip()
    if not note or len(note) > NOTE_MAX_CHARS:
        raise AckRefused(400, f"give a note of 1-{NOTE_MAX_CHARS} characters saying what was done")
    with db.transaction():
        found = _one_alarm(db, alarm_id)
        if found is None or (
            found[1] in SURVEILLANCE_KINDS and not session.role.sees_surveillance_alarms
        ):
            raise AckRefused(404, f"no alarm {alarm_id!r}: GET /api/alarms lists them")
        stored = db.execute(
            "INSERT INTO pit_alarm_acks (alarm_id, acknowledged_by, note) VALUES (%s, %s, %s) "
            "ON CONFLICT DO NOTHING RETURNING acknowledged_at",
            (alarm_id, session.user, note),
        ).fetchone()
        if stored is None:
            raise AckRefused(409, f"alarm {alarm_id} is acknowledged already")
        audit(db, session.user, AuditAction.ACKNOWLEDGE, f"alarm {alarm_id}: {note}")
    table_id, kind, detail, raised_at = found
    return FloorAlarm(
        alarm_id,
        table_id,
        kind,
        detail,
        utc_timestamp(raised_at),
        False,
        session.user,
        utc_timestamp(stored[0]),
        note,
    )


def _one_alarm(db: psycopg.Connection, alarm_id: str) -> tuple[str, str, str, datetime] | None:
    table_id = alarm_id.rpartition(":")[0]
    row = db.execute(
        f"SELECT alarm.table_id, alarm.kind, alarm.detail, alarm.raised_at FROM {_ALL_ALARMS} "
        "WHERE alarm.id = %s AND (alarm.table_id = %s OR alarm.id LIKE 'floor:%%')",
        (alarm_id, table_id),
    ).fetchone()
    return None if row is None else (row[0], row[1], row[2] or "", row[3])


def unacknowledged_counts(db: psycopg.Connection, role: Role) -> dict[str, int]:
    """Per table, its alarms nobody has acknowledged yet (for the floor's tiles)."""
    rows = db.execute(
        f"SELECT alarm.table_id, count(*) FROM {_ALL_ALARMS} "
        f"WHERE ack.alarm_id IS NULL AND {_SHOWN} GROUP BY alarm.table_id",
        {"surveillance": role.sees_surveillance_alarms, "hidden": list(SURVEILLANCE_KINDS)},
    ).fetchall()
    return {table_id: count for table_id, count in rows}
