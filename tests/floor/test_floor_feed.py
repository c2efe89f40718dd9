"""A real table journal through real shoectl uplink, mosquitto, shoectl floor ingest, PostgreSQL."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from support.floor_support import (
    Floor,
    TableWriter,
    assert_floor_holds,
    floor_alarms,
    floor_table,
    retained,
    wait_for_floor,
)
from support.service_support import wait_until
from support.shoectl import ShoectlRunner

from cardshoe.controller.floor.messages import StatusMessage
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.scoreboard.board import TableBoard


def demo_journal(folder: Path, table_id: str, game: str, rounds: int = 8) -> Path:
    """A journal the real table software wrote: simulator, driver, procedure, journal."""
    config = folder / f"{table_id}.toml"
    config.write_text(f'table_id = "{table_id}"\n[game]\nname = "{game}"\n', encoding="utf-8")
    path = folder / f"{table_id}.sqlite"
    command = [sys.executable, "-m", "cardshoe.controller.cli", "demo", "--config", str(config)]
    command += ["--transport", "inproc", "--rounds", str(rounds), "--journal", str(path)]
    subprocess.run(command, check=True, capture_output=True, timeout=120)
    return path


def test_every_record_of_a_dealt_shoe_reaches_postgres_once_with_board_and_status(
    tmp_path: Path, floor: Floor, shoectl: ShoectlRunner
) -> None:
    journal = demo_journal(tmp_path, "T7", "macau-1")
    ingest = floor.ingest()
    uplink = floor.uplink(journal)
    wait_for_floor(floor, [journal])
    assert_floor_holds(floor.dsn, journal)

    with Journal.open_readonly(journal) as opened:
        records = list(opened.records())
    board = TableBoard(table_id="T7")
    for record in records:
        board.apply(record.kind, record.payload)
    published = json.loads(retained(floor.broker.url, "cardshoe/v1/casino-1/T7/board"))
    assert published == board.to_json()
    assert published["results"], "the board shows the rounds dealt"

    def status() -> StatusMessage:
        return StatusMessage.decode(retained(floor.broker.url, "cardshoe/v1/casino-1/T7/status"))

    wait_until(lambda: status().anchor_id == records[-1].id, "the status to show the anchor")
    online = status()
    assert online.online and online.head_id == records[-1].id
    assert online.head_hash == records[-1].hash
    assert online.firmware and online.fingerprint and online.version

    report = json.loads(shoectl("floor", "status", "--dsn", floor.dsn, "--json").stdout)
    assert report[0]["table_id"] == "T7"
    assert report[0]["chain_verified"] and report[0]["online"]
    assert report[0]["lag_records"] == 0 and report[0]["contiguous_id"] == records[-1].id

    assert uplink.stop() == 0
    wait_until(lambda: not status().online, "the uplink's offline status")
    wait_until(lambda: floor_table(floor.dsn, "T7")["online"] is False, "the floor to see it")
    assert ingest.stop() == 0
    # Stopped with its database up, ingest stores what it took: nothing is left to the broker.
    assert "a batch not stored" not in ingest.log


def test_a_killed_uplink_leaves_its_last_will_and_catches_up_when_restarted(
    tmp_path: Path, floor: Floor, shoectl: ShoectlRunner
) -> None:
    journal = tmp_path / "T1.sqlite"
    writer = TableWriter(journal, "T1").start()
    try:
        floor.ingest()
        uplink = floor.uplink(journal)
        wait_until(lambda: (floor_table(floor.dsn, "T1") or {}).get("online"), "T1 online")
        uplink.kill()
        wait_until(lambda: floor_table(floor.dsn, "T1")["online"] is False, "the last will")
        report = json.loads(shoectl("floor", "status", "--dsn", floor.dsn, "--json").stdout)
        assert report[0]["online"] is False
        uplink.start()
    finally:
        writer.stop()
    wait_for_floor(floor, [journal])
    assert_floor_holds(floor.dsn, journal)
    assert floor_alarms(floor.dsn) == []


def test_the_table_deals_on_while_the_broker_is_away_and_the_uplink_reports_its_lag(
    tmp_path: Path, floor: Floor
) -> None:
    journal = tmp_path / "T2.sqlite"
    writer = TableWriter(journal, "T2").start()
    try:
        floor.ingest()
        uplink = floor.uplink(journal)
        wait_until(lambda: (floor_table(floor.dsn, "T2") or {}).get("online"), "T2 online")
        floor.broker.kill()
        written = writer.written
        wait_until(lambda: "cannot reach the broker" in uplink.log, "a lag report")
        wait_until(lambda: writer.written > written + 50, "the table to deal on")
        assert re.search(r"lag [1-9]\d* records", uplink.log)
        floor.broker.start()
    finally:
        writer.stop()
    wait_for_floor(floor, [journal])
    assert_floor_holds(floor.dsn, journal)


def test_shoectl_floor_status_prints_a_line_per_table(
    tmp_path: Path, floor: Floor, shoectl: ShoectlRunner
) -> None:
    journals = [demo_journal(tmp_path, table, "punto-banco", rounds=3) for table in ("A1", "B2")]
    floor.ingest()
    for journal in journals:
        floor.uplink(journal)
    wait_for_floor(floor, journals)
    result = shoectl("floor", "status", "--dsn", floor.dsn)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split()[:4] == ["table", "site", "ingested", "verified"]
    assert [line.split()[0] for line in lines[1:]] == ["A1", "B2"]
    assert all(" ok " in line and "online" in line for line in lines[1:])
