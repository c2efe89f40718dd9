"""One ingest batch into PostgreSQL: records inserted, chains walked on, alarms written.

The database half of shoectl floor ingest (ingest.py, whose docstring gives the batch's steps):
separate from the broker half so each reads as one job, the MQTT loop and acknowledgements
there, the SQL of one transaction here. Everything here runs inside the transaction
Ingest._with_database opens, so a batch is stored whole or not at all.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

import psycopg
from psycopg.errors import UniqueViolation
from psycopg.types.json import Jsonb

from cardshoe.controller.floor.messages import (
    AnchorMessage,
    EventMessage,
    StatusMessage,
)
from cardshoe.controller.record_kinds import ROUND_RESULT

FLOOR_CHANNEL = "cardshoe_floor"
"""Each committed batch is a PostgreSQL notification here, naming the tables it touched
(or none, when too many to fit a notification): the pit's live page listens."""


class AlarmKind:
    HASH_MISMATCH = "hash_mismatch"
    """The record's fields do not hash to the hash it carries."""
    CHAIN_MISMATCH = "chain_mismatch"
    """Its prev_hash is not the stored hash of the record before it."""
    CONFLICT = "conflict"
    """The floor already holds this record id with another hash."""
    WRONG_TABLE = "wrong_table"
    """A record of one table on another table's topic."""
    MALFORMED = "malformed"
    """A message that is not a record (or status) ingest can read, or one PostgreSQL refuses."""
    BAD_SIGNATURE = "bad_signature"
    """A record of a registered table without the table's valid signature: not the table's."""
    GAP = "gap"
    """Records missing for longer than gap_report_s."""


CHAIN_NEUTRAL = frozenset({AlarmKind.GAP, AlarmKind.BAD_SIGNATURE})
"""Alarms that leave a table's chain_ok as it is: a gap waits for its records, and a record
without the table's signature is someone else's, not a fault in the table's chain."""


@dataclass(frozen=True)
class Rejected:
    """A message ingest refused, as rejected_messages keeps it: the hash of its bytes, not them."""

    site: str
    table_id: str
    leaf: str
    body_sha256: str
    body_bytes: int
    reason: str


@dataclass
class Alarm:
    table_id: str
    kind: str
    detail: str
    record_id: int | None = None
    message: dict[str, Any] | None = None
    site: str | None = None
    rejected: Rejected | None = None
    """The message quarantined with this alarm, when the alarm is about one refused whole."""


@dataclass
class Outcome:
    """What a committed batch tells the tables."""

    anchors: dict[tuple[str, str], AnchorMessage] = field(default_factory=dict)
    alarms: list[Alarm] = field(default_factory=list)
    inserted: int = 0


def insert_alarms(db: psycopg.Connection, alarms: list[Alarm]) -> None:
    rows = [
        (
            alarm.table_id,
            alarm.record_id,
            alarm.kind,
            alarm.detail,
            None if alarm.message is None else Jsonb(alarm.message),
        )
        for alarm in alarms
    ]
    if not rows:
        return
    rejected = [
        (r.site, r.table_id, r.leaf, r.body_sha256, r.body_bytes, r.reason)
        for r in (alarm.rejected for alarm in alarms)
        if r is not None
    ]
    with db.cursor() as cursor:
        cursor.executemany(
            "INSERT INTO floor_alarms (table_id, record_id, kind, detail, message) "
            "VALUES (%s, %s, %s, %s, %s)",
            rows,
        )
        if rejected:
            cursor.executemany(
                "INSERT INTO rejected_messages "
                "(site, table_id, leaf, body_sha256, body_bytes, reason) "
                "VALUES (%s, %s, %s, %s, %s, %s)",
                rejected,
            )
    db.execute(
        "UPDATE floor_tables SET chain_ok = false WHERE table_id = ANY(%s) AND chain_ok",
        ([row[0] for row in rows if row[2] not in CHAIN_NEUTRAL],),
    )


def store_batch(
    db: psycopg.Connection,
    events: list[tuple[str, EventMessage]],
    statuses: dict[tuple[str, str], StatusMessage],
    early: Outcome,
) -> Outcome:
    outcome = Outcome(alarms=list(early.alarms))
    unique: dict[tuple[str, int], tuple[str, EventMessage]] = {}
    for site, event in events:
        unique.setdefault((event.table_id, event.record_id), (site, event))
    tables = sorted(
        {(event.table_id, site) for site, event in unique.values()}
        | {(table_id, site) for (site, table_id) in statuses}
        | {(alarm.table_id, alarm.site) for alarm in early.alarms if alarm.site is not None}
    )
    table_ids = [table_id for table_id, _ in tables]
    # The insert's new rows are not in the select's snapshot: a table missing from stored_up_to
    # is new, and holds no record yet.
    stored_up_to: dict[str, int] = dict(
        db.execute(
            "WITH added AS (INSERT INTO floor_tables (table_id, site) "
            "SELECT * FROM unnest(%s::text[], %s::text[]) ON CONFLICT DO NOTHING) "
            "SELECT table_id, last_record_id FROM floor_tables WHERE table_id = ANY(%s)",
            (table_ids, [site for _, site in tables], table_ids),
        ).fetchall()
    )
    insert_alarms(db, early.alarms)
    fresh: list[EventMessage] = []
    if unique:
        sites = {event.table_id: site for site, event in unique.values()}
        batch = [event for _, event in unique.values()]
        fresh = _insert_records(db, batch, sites, stored_up_to, outcome)
        outcome.inserted = len(fresh)
    touched = dict(sorted({(event.table_id, site) for site, event in unique.values()}))
    if touched:
        _advance_chains(db, touched, fresh, outcome)
    for (_, table_id), status in statuses.items():
        db.execute(
            "UPDATE floor_tables SET online = %s, status = %s, status_at = now() "
            "WHERE table_id = %s",
            (status.online, Jsonb(asdict(status)), table_id),
        )
    named = ",".join(table_id for table_id, _ in tables)
    db.execute("SELECT pg_notify(%s, %s)", (FLOOR_CHANNEL, named if len(named) < 7900 else ""))
    return outcome


STAGED_COLUMNS = (
    "table_id text, record_id bigint, time_ns bigint, kind text, shoe_id text, round_no int, "
    "device_serial text, device_seq bigint, payload jsonb, hash text, prev_hash text, "
    "signature text"
)
"""journal_records' columns as COPY fills them (received_at is set by the insert)."""
COPIED_COLUMNS = ", ".join(definition.split()[0] for definition in STAGED_COLUMNS.split(", "))
"""The same columns by name alone, in the order copy_records writes them."""


def _insert_records(
    db: psycopg.Connection,
    events: list[EventMessage],
    sites: dict[str, str],
    stored_up_to: dict[str, int],
    outcome: Outcome,
) -> list[EventMessage]:
    """Insert the records the floor does not hold yet; those it inserted.

    A batch of records past every one its tables hold (stored_up_to: each
    table's last_record_id), the usual case, is copied straight into
    journal_records: half PostgreSQL's time of copying and inserting again.
    A batch that may repeat a record (an uplink resending from its anchor, a
    message the broker handed out again) takes the staging table, whose insert
    skips the records held, without a copy that fails first and leaves a
    duplicate key ERROR in PostgreSQL's log. Another ingest may still store the
    same records between the two: then the copy fails on the primary key, and
    the batch takes the staging table after all.
    """
    if all(event.record_id > stored_up_to.get(event.table_id, 0) for event in events):
        try:
            with db.transaction():  # a savepoint: a copy that fails takes back only itself
                copy_records(db, "journal_records", events)
            return events
        except UniqueViolation:
            pass
    # The staging table is per connection; the insert from it keeps ON CONFLICT DO NOTHING,
    # so a repeat is ignored, never overwritten.
    db.execute(
        f"CREATE TEMP TABLE IF NOT EXISTS staged_records ({STAGED_COLUMNS}) ON COMMIT DELETE ROWS"
    )
    copy_records(db, "staged_records", events)
    inserted = db.execute(
        f"INSERT INTO journal_records ({COPIED_COLUMNS}) SELECT {COPIED_COLUMNS} "
        "FROM staged_records ON CONFLICT DO NOTHING RETURNING table_id, record_id"
    ).fetchall()
    new = {(table_id, record_id) for table_id, record_id in inserted}
    fresh = [event for event in events if (event.table_id, event.record_id) in new]
    repeats = [event for event in events if (event.table_id, event.record_id) not in new]
    if repeats:
        conflicts = _conflicts(db, repeats, sites)
        insert_alarms(db, conflicts)
        outcome.alarms.extend(conflicts)
    return fresh


def copy_records(db: psycopg.Connection, table: str, events: list[EventMessage]) -> None:
    """COPY the events into table (journal_records or the staging table), as they are: no
    check, no chain walk (store_batch does those)."""
    with db.cursor() as cursor, cursor.copy(f"COPY {table} ({COPIED_COLUMNS}) FROM STDIN") as copy:
        for event in events:
            copy.write_row(
                (
                    event.table_id,
                    event.record_id,
                    event.time_ns,
                    event.kind,
                    event.shoe_id,
                    event.round_no,
                    event.device_serial,
                    event.device_seq,
                    event.payload_json,
                    event.hash,
                    event.prev_hash,
                    event.signature,
                )
            )


def _conflicts(
    db: psycopg.Connection, repeats: list[EventMessage], sites: dict[str, str]
) -> list[Alarm]:
    """The alarms of the repeats that came with another hash than the one the floor holds."""
    stored = dict(
        ((table_id, record_id), digest)
        for table_id, record_id, digest in db.execute(
            "SELECT r.table_id, r.record_id, r.hash FROM journal_records r "
            "JOIN unnest(%s::text[], %s::bigint[]) AS k(table_id, record_id) "
            "USING (table_id, record_id)",
            ([event.table_id for event in repeats], [event.record_id for event in repeats]),
        ).fetchall()
    )
    return [
        Alarm(
            event.table_id,
            AlarmKind.CONFLICT,
            f"record {event.record_id} arrived with hash {event.hash[:16]}…, the floor "
            f"holds {stored[(event.table_id, event.record_id)][:16]}…: kept the stored one",
            event.record_id,
            event.to_json(),
            sites[event.table_id],
        )
        for event in repeats
        if stored.get((event.table_id, event.record_id), event.hash) != event.hash
    ]


def _advance_chains(
    db: psycopg.Connection, sites: dict[str, str], fresh: list[EventMessage], outcome: Outcome
) -> None:
    """Walk each table's chain on from its last verified record; anchors for those that moved.

    A few statements a batch whatever the number of tables: the tables' rows
    locked in table order (two ingests never deadlock), their pending records
    walked here, and the new positions written in one update. A table with
    no record waiting behind a gap (last_record_id, written under the same
    lock, is its verified position) has no pending records but those this
    batch inserted (fresh): only the others' are read back from the database.
    """
    table_ids = list(sites)
    rows = db.execute(
        "SELECT table_id, contiguous_id, contiguous_hash, last_record_id FROM floor_tables "
        "WHERE table_id = ANY(%s) ORDER BY table_id FOR UPDATE",
        (table_ids,),
    ).fetchall()
    starts = {table_id: (contiguous_id, digest) for table_id, contiguous_id, digest, _ in rows}
    behind = {table_id for table_id, contiguous_id, _, last_id in rows if last_id > contiguous_id}
    pending = _pending_records(db, table_ids, behind, fresh)
    updates: list[_Position] = []
    for table_id in table_ids:
        start_id, start_hash = starts[table_id]
        contiguous_id, contiguous_hash, rounds = start_id, start_hash, 0
        for record_id, digest, prev_hash, kind in pending[table_id]:
            if record_id != contiguous_id + 1:
                break
            if prev_hash != contiguous_hash:
                _reject(db, table_id, sites[table_id], record_id, contiguous_id, outcome)
                break
            contiguous_id, contiguous_hash = record_id, digest
            rounds += kind == ROUND_RESULT
        held = pending[table_id]
        last_id = held[-1][0] if held else contiguous_id
        waiting = any(record[0] > contiguous_id for record in held)
        updates.append(
            _Position(table_id, contiguous_id, contiguous_hash, last_id, waiting, rounds)
        )
        if contiguous_id != start_id:
            outcome.anchors[(sites[table_id], table_id)] = AnchorMessage(
                contiguous_id, contiguous_hash
            )
    _write_positions(db, updates)


def _pending_records(
    db: psycopg.Connection, table_ids: list[str], behind: set[str], fresh: list[EventMessage]
) -> dict[str, list[tuple[int, str, str, str]]]:
    """Each table's records past its verified position, in order (id, hash, prev_hash, kind):
    this batch's own for a table with none waiting behind a gap, read back from the database
    for the others (behind)."""
    pending: dict[str, list[tuple[int, str, str, str]]] = {table_id: [] for table_id in table_ids}
    for event in sorted(fresh, key=lambda event: (event.table_id, event.record_id)):
        if event.table_id not in behind:
            pending[event.table_id].append(
                (event.record_id, event.hash, event.prev_hash, event.kind)
            )
    if behind:
        for table_id, record_id, digest, prev_hash, kind in db.execute(
            "SELECT r.table_id, r.record_id, r.hash, r.prev_hash, r.kind FROM journal_records r "
            "JOIN floor_tables t USING (table_id) "
            "WHERE t.table_id = ANY(%s) AND r.record_id > t.contiguous_id "
            "ORDER BY r.table_id, r.record_id",
            (sorted(behind),),
        ):
            pending[table_id].append((record_id, digest, prev_hash, kind))
    return pending


@dataclass(frozen=True)
class _Position:
    """Where a batch leaves one table's chain."""

    table_id: str
    contiguous_id: int
    contiguous_hash: str
    last_id: int
    """The last record held, verified or waiting behind a gap."""
    waiting: bool
    """Records wait behind a gap."""
    rounds: int
    """Round results among the records the batch verified: added to the table's count."""


def _write_positions(db: psycopg.Connection, updates: list[_Position]) -> None:
    """Write each table's new verified position, last record, rounds and gap clock in one
    update."""
    columns = [[getattr(update, column.name) for update in updates] for column in fields(_Position)]
    # In SET, a column names the row's value before the update: a gap's clock restarts
    # when the verified position moved and records still wait behind a new gap.
    db.execute(
        "UPDATE floor_tables t SET contiguous_id = u.contiguous_id, "
        "contiguous_hash = u.contiguous_hash, "
        "last_record_id = greatest(t.last_record_id, u.last_id), last_seen = now(), "
        "gap_since = CASE WHEN NOT u.waiting THEN NULL "
        "WHEN t.contiguous_id <> u.contiguous_id THEN now() "
        "ELSE coalesce(t.gap_since, now()) END, "
        "gap_reported = t.gap_reported AND u.waiting AND t.contiguous_id = u.contiguous_id, "
        "rounds = t.rounds + u.rounds "
        "FROM unnest(%s::text[], %s::bigint[], %s::text[], %s::bigint[], %s::boolean[], "
        "%s::bigint[]) AS u(table_id, contiguous_id, contiguous_hash, last_id, waiting, rounds) "
        "WHERE t.table_id = u.table_id",
        columns,
    )


def _reject(
    db: psycopg.Connection,
    table_id: str,
    site: str,
    record_id: int,
    contiguous_id: int,
    outcome: Outcome,
) -> None:
    """Move a record that does not link out of journal_records and into an alarm."""
    removed = db.execute(
        "DELETE FROM journal_records WHERE table_id = %s AND record_id = %s "
        "RETURNING to_jsonb(journal_records.*) - 'received_at'",
        (table_id, record_id),
    ).fetchone()
    alarm = Alarm(
        table_id,
        AlarmKind.CHAIN_MISMATCH,
        f"record {record_id}'s prev_hash is not the hash of record {contiguous_id} "
        "the floor holds: kept out of journal_records",
        record_id,
        None if removed is None else removed[0],
        site,
    )
    insert_alarms(db, [alarm])
    outcome.alarms.append(alarm)
