"""One ingest batch into a real PostgreSQL: new records copied straight in, repeats the slow way.

store_batch is what ingest runs inside each batch's transaction; these call
it on a connection of their own, so which way a batch took is seen on that
connection (the staging table exists only once a batch needed it).
"""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

import psycopg
from support.floor_support import chained_messages, floor_alarms, floor_records, floor_table

from cardshoe.controller.floor.ingest_store import Outcome, store_batch
from cardshoe.controller.floor.local_servers import Postgres
from cardshoe.controller.floor.messages import EventMessage
from cardshoe.controller.floor.schema import connect
from cardshoe.controller.journal.chain import record_hash

SITE = "casino-1"


def stored(connection: psycopg.Connection, events: list[EventMessage]) -> Outcome:
    with connection.transaction():
        return store_batch(connection, [(SITE, event) for event in events], {}, Outcome())


def staging_table_made(connection: psycopg.Connection) -> bool:
    row = connection.execute("SELECT to_regclass('pg_temp.staged_records')").fetchone()
    return row is not None and row[0] is not None


def test_records_the_floor_never_saw_go_straight_in_and_are_verified(dsn: str) -> None:
    records = chained_messages("T1", 5)
    with connect(dsn) as connection:
        outcome = stored(connection, records)
        assert not staging_table_made(connection)
    assert outcome.inserted == 5
    assert floor_records(dsn, "T1") == [(m.record_id, m.hash) for m in records]
    assert floor_table(dsn, "T1")["contiguous_id"] == 5
    assert outcome.anchors[(SITE, "T1")].record_id == 5


def test_a_batch_with_a_record_the_floor_holds_stores_the_new_ones_beside_it(dsn: str) -> None:
    records = chained_messages("T2", 6)
    with connect(dsn) as connection:
        stored(connection, records[:3])
        outcome = stored(connection, records[2:])  # record 3 again: an uplink's resend
        assert staging_table_made(connection)
    assert outcome.inserted == 3
    assert floor_records(dsn, "T2") == [(m.record_id, m.hash) for m in records]
    assert floor_table(dsn, "T2")["contiguous_id"] == 6
    assert floor_alarms(dsn) == []


def duplicate_key_errors(postgres: Postgres) -> int:
    """The duplicate key ERROR lines in the test cluster's log so far."""
    log = (postgres.folder / "postgres.log").read_text(errors="replace")
    return log.count("duplicate key value violates unique constraint")


def test_a_resend_leaves_no_error_in_postgresqls_log(postgres: Postgres, dsn: str) -> None:
    """A floor DBA reads ERROR lines as faults: an uplink's resend is not one."""
    records = chained_messages("T4", 6)
    with connect(dsn) as connection:
        stored(connection, records[:4])
        before = duplicate_key_errors(postgres)
        outcome = stored(connection, records[1:])
    assert outcome.inserted == 2
    assert duplicate_key_errors(postgres) == before
    assert floor_table(dsn, "T4")["contiguous_id"] == 6


def test_records_another_ingest_stores_meanwhile_are_skipped_not_a_failed_batch(dsn: str) -> None:
    """Two ingests may hold the same records (a message the broker handed out again): the one
    that commits second finds them held only when its copy meets them, and takes the staging
    table after all."""
    records = chained_messages("T5", 8)
    with connect(dsn) as first, connect(dsn) as second:
        stored(second, records[:1])  # the table is known, its last record is 1
        first_batch = first.transaction()
        first_batch.__enter__()
        store_batch(first, [(SITE, event) for event in records[1:5]], {}, Outcome())
        outcomes: list[Outcome] = []
        behind = threading.Thread(target=lambda: outcomes.append(stored(second, records[1:])))
        behind.start()  # reads last record 1, then its copy waits on the first's rows
        behind.join(1.0)
        assert behind.is_alive(), "the second batch should wait on the first's uncommitted rows"
        first_batch.__exit__(None, None, None)
        behind.join(30)
        assert staging_table_made(second)
    assert outcomes[0].inserted == 3
    assert floor_records(dsn, "T5") == [(m.record_id, m.hash) for m in records]
    assert floor_table(dsn, "T5")["contiguous_id"] == 8
    assert floor_alarms(dsn) == []


def test_a_repeat_with_another_hash_is_an_alarm_and_the_batch_still_stores_the_rest(
    dsn: str,
) -> None:
    records = chained_messages("T3", 4)
    rewritten = replace(records[1], payload={"n": "rewritten"})
    rewritten = replace(rewritten, hash=record_hash(rewritten.prev_hash, rewritten.hashed_values()))
    with connect(dsn) as connection:
        stored(connection, records[:2])
        outcome = stored(connection, [rewritten, *records[2:]])
    assert [(alarm.kind, alarm.record_id) for alarm in outcome.alarms] == [("conflict", 2)]
    assert floor_alarms(dsn) == [("T3", "conflict", 2)]
    assert floor_records(dsn, "T3") == [(m.record_id, m.hash) for m in records]
    assert floor_table(dsn, "T3")["contiguous_id"] == 4


def test_the_servers_backends_are_its_children(postgres: Postgres, dsn: str) -> None:
    """bench_floor counts PostgreSQL's CPU as that of the server's children
    (Postgres.server_pid): a connection's backend must be one of them."""
    with connect(dsn) as db:
        backend = db.execute("SELECT pg_backend_pid()").fetchone()[0]  # type: ignore[index]
        status = Path(f"/proc/{backend}/status").read_text().splitlines()
    parent = next(int(line.split()[1]) for line in status if line.startswith("PPid:"))
    assert parent == postgres.server_pid()
