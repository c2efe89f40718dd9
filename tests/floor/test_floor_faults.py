"""Issue 14's fault runs: tables dealing, the floor's parts failing, nothing lost or doubled.

Three tables write their journals steadily, each with its own shoectl uplink,
into one shoectl floor ingest. One fault strikes mid-run; afterwards every
journal record must be in PostgreSQL exactly once with its chain verified,
and only a table that sent a bad record may be flagged.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from support.floor_support import (
    Floor,
    FloorProcess,
    TableWriter,
    assert_floor_holds,
    chained_messages,
    floor_alarms,
    floor_records,
    floor_table,
    journal_records,
    publish,
    take_over_client_id,
    wait_for_floor,
)
from support.process_support import ended
from support.service_support import wait_until
from support.shoectl import ShoectlRunner

from cardshoe.controller.floor.local_servers import Postgres
from cardshoe.controller.floor.schema import SCHEMA_LOCK, SCHEMA_VERSION, connect

TABLES = ("T1", "T2", "T3")
RUN_S = 1.0
"""How long the tables deal before and after the fault."""


class Run:
    """The multi-table run a fault strikes."""

    def __init__(self, floor: Floor, folder: Path) -> None:
        self.floor = floor
        self.journals = {table: folder / f"{table}.sqlite" for table in TABLES}
        self.writers = {
            table: TableWriter(path, table).start() for table, path in self.journals.items()
        }
        self.ingest = floor.ingest()
        self.uplinks: dict[str, FloorProcess] = {
            table: floor.uplink(path) for table, path in self.journals.items()
        }

    def finish(self) -> None:
        for writer in self.writers.values():
            writer.stop()
        wait_for_floor(self.floor, list(self.journals.values()))


def kill_the_broker(run: Run, postgres: Postgres) -> None:
    """SIGKILL with persistence off: what it had acknowledged and not delivered is gone."""
    run.floor.broker.kill()
    time.sleep(0.5)
    run.floor.broker.start()


def restart_postgres(run: Run, postgres: Postgres) -> None:
    postgres.restart()


def kill_an_uplink(run: Run, postgres: Postgres) -> None:
    run.uplinks["T2"].restart()


def kill_the_ingest(run: Run, postgres: Postgres) -> None:
    run.ingest.restart()


def kick_the_ingest(run: Run, postgres: Postgres) -> None:
    """Issue 21, case 5: a client with ingest's client id takes its session over, three times.

    Each takeover starts clean, so the broker drops ingest's session with what it held;
    ingest reconnects, and the uplinks' resend from the anchor brings what was dropped.
    """
    for kicks in range(1, 4):
        take_over_client_id(run.floor.broker.url, "ingest-1")
        wait_until(
            lambda kicks=kicks: run.ingest.log.count("ingest subscribed") > kicks,
            f"ingest back after kick {kicks}\n{run.ingest.log}",
        )
    assert run.ingest.process is not None and run.ingest.process.poll() is None


FAULTS: dict[str, Callable[[Run, Postgres], None]] = {
    "broker SIGKILLed": kill_the_broker,
    "PostgreSQL restarted": restart_postgres,
    "an uplink SIGKILLed": kill_an_uplink,
    "the ingest SIGKILLed": kill_the_ingest,
    "the ingest kicked off by its client id": kick_the_ingest,
}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_after_the_fault_every_record_is_in_postgres_once_and_verified(
    fault: str, floor: Floor, postgres: Postgres, tmp_path: Path
) -> None:
    run = Run(floor, tmp_path)
    try:
        time.sleep(RUN_S)
        FAULTS[fault](run, postgres)
        time.sleep(RUN_S)
    finally:
        run.finish()
    for table, path in run.journals.items():
        assert_floor_holds(floor.dsn, path)
        assert floor_table(floor.dsn, table)["chain_ok"]
    assert floor_alarms(floor.dsn) == []


def test_a_journal_pruned_mid_run_stays_whole_on_the_floor(
    floor: Floor, tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    run = Run(floor, tmp_path)
    try:
        wait_until(lambda: run.writers["T1"].written > 2 * TableWriter.SHOE_RECORDS, "two shoes")
        # Stopped before waiting for the floor: under load a floor chasing a journal that is
        # still growing may never stand level with it within the wait.
        run.writers["T1"].stop()
        held = journal_records(run.journals["T1"])
        wait_until(
            lambda: (floor_table(floor.dsn, "T1") or {}).get("contiguous_id") == held[-1][0],
            "the floor to verify all of T1",
        )
        wait_until(
            lambda: f'"record_id": {held[-1][0]}' in _state(floor, "T1"),
            "the uplink to keep the floor's anchor",
        )
        pruned = shoectl(
            "journal",
            "prune",
            str(run.journals["T1"]),
            "--state-dir",
            str(floor.folder / "uplink-state"),
            "--keep-days",
            "0",
        )
        assert pruned.returncode == 0 and "pruned" in pruned.stdout, pruned.stderr
        assert journal_records(run.journals["T1"])[0][0] > 1
        run.writers["T1"] = TableWriter(run.journals["T1"], "T1").start()
        time.sleep(RUN_S)
    finally:
        run.finish()
    assert_floor_holds(floor.dsn, run.journals["T1"], from_id=held[-1][0] + 1)
    assert [record_id for record_id, _ in floor_records(floor.dsn, "T1")][:1] == [1]
    for table in ("T2", "T3"):
        assert_floor_holds(floor.dsn, run.journals[table])
    assert floor_alarms(floor.dsn) == []


def test_a_table_that_sends_a_record_with_a_wrong_hash_is_flagged_and_the_others_are_not(
    floor: Floor, tmp_path: Path
) -> None:
    run = Run(floor, tmp_path)
    try:
        time.sleep(RUN_S)
        ahead = run.writers["T3"].written + 500
        forged = replace(chained_messages("T3", 1)[0], record_id=ahead)
        publish(floor.broker.url, "cardshoe/v1/casino-1/T3/events", [forged.encode()])
        time.sleep(RUN_S)
    finally:
        run.finish()
    for path in run.journals.values():
        assert_floor_holds(floor.dsn, path)
    assert floor_alarms(floor.dsn) == [("T3", "hash_mismatch", ahead)]
    assert [floor_table(floor.dsn, table)["chain_ok"] for table in TABLES] == [True, True, False]


def _state(floor: Floor, table: str) -> str:
    path = floor.folder / "uplink-state" / f"uplink-{table}.json"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def test_an_ingest_whose_schema_is_upgraded_under_it_stops_and_a_new_one_stores_everything(
    floor: Floor, tmp_path: Path
) -> None:
    """init-db run by a newer cardshoe while this ingest runs: it stores nothing more (it would
    leave out what the new schema keeps) and says why; the ingest started next loses nothing."""
    run = Run(floor, tmp_path)
    try:
        wait_until(lambda: _stored(floor) > 0, f"records on the floor\n{floor.logs()}")
        with connect(floor.dsn) as connection, connection.transaction():
            connection.execute(f"SELECT pg_advisory_xact_lock({SCHEMA_LOCK})")
            connection.execute(
                "INSERT INTO floor_schema (version) VALUES (%s)", (SCHEMA_VERSION + 1,)
            )
        stored_at_upgrade = _stored(floor)
        assert run.ingest.process is not None
        code = ended(run.ingest.process, 30, lambda: run.ingest.log)
        assert code not in (0, 70)
        assert (
            f"the floor database's schema changed to {SCHEMA_VERSION + 1} while this ingest ran"
            in run.ingest.log
        )
        assert "Traceback" not in run.ingest.log
        time.sleep(RUN_S)
        assert _stored(floor) == stored_at_upgrade
        with connect(floor.dsn) as connection:
            connection.execute("DELETE FROM floor_schema WHERE version > %s", (SCHEMA_VERSION,))
        # The upgraded ingest under the same client id, as its unit starts it: it resumes the
        # broker's session with the messages the stopped one took and never acknowledged.
        run.ingest.start()
        wait_until(
            lambda: run.ingest.log.count("ingest subscribed") >= 2,
            f"the new ingest to subscribe\n{run.ingest.log}",
        )
    finally:
        run.finish()
    for path in run.journals.values():
        assert_floor_holds(floor.dsn, path)
    assert floor_alarms(floor.dsn) == []


def _stored(floor: Floor) -> int:
    with connect(floor.dsn) as connection:
        row = connection.execute("SELECT count(*) FROM journal_records").fetchone()
    return 0 if row is None else int(row[0])
