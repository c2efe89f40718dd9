"""Issue 11, the journal half, through the real service: `shoectl run` on a simulated shoe
behind a real pty, the journal a real SQLite file, on a small tmpfs where a disk must fill.

Each test is named after the case it reproduces (cases 1, 2, 4, 5, 6) and shows the fixed
behaviour: a hold with an alarm, or one line and a non-zero exit, and never an acknowledged
event lost or one invented.
"""

from __future__ import annotations

import contextlib
import signal
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from support.reader_service import ReaderDealer, dealing, simulated_reader_table
from support.service_support import (
    WAIT_S,
    Table,
    open_manual_shoe,
    running_service,
    simulated_table,
    wait_until,
)
from support.session_support import (
    FAST_LINK,
    assert_every_event_journaled_once,
    journaled,
    table_config,
)
from support.shoectl import ShoectlRunner
from support.storage_support import device_events, fill, table_on_small_disk

from cardshoe.controller.errors import UserError
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.procedure.holds import HoldReason
from cardshoe.controller.record_kinds import SESSION_REPEATED
from cardshoe.controller.service.control_client import request
from cardshoe.controller.service.session import TableSession
from cardshoe.controller.service.session_repeats import REPEAT_INTERVAL_S
from cardshoe.drivers.api.protocols import open_device
from cardshoe.drivers.protocol.framing import encode_frame
from cardshoe.drivers.protocol.messages import GateMode
from cardshoe.firmware_sim.attach_pty import serve_pty
from cardshoe.firmware_sim.devices import create_device

MB = 1024 * 1024
QUIET_S = 0.5
"""How long a held table is watched for a card that should not come."""


@pytest.fixture
def table(tmp_path: Path):
    with simulated_table(tmp_path) as table:
        yield table


def rounds_finished(table: Table) -> int:
    return table.status()["rounds_finished"]


def holds(table: Table) -> list[str]:
    return table.status()["holds"]


def assert_nothing_dealt_while_held(table: Table) -> None:
    time.sleep(QUIET_S)
    taken = table.status()["dealt"], table.status()["burned"]
    time.sleep(QUIET_S)
    assert (table.status()["dealt"], table.status()["burned"]) == taken


def assert_acknowledged_equals_journaled(table: Table) -> None:
    """What the device counts as acknowledged is exactly what the journal holds, no more."""
    assert table.core.link.last_acked_seq == device_events(table.journal_path)[-1].device_seq


def run_two_rounds(table: Table, shoe_id: str) -> None:
    open_manual_shoe(table, shoe_id)
    wait_until(lambda: rounds_finished(table) >= 2, "two rounds")


# --- case 1 -------------------------------------------------------------------------------


@pytest.mark.parametrize("loss", ["journal deleted", "wal lost before a checkpoint"])
def test_case1_a_lost_journal_is_refused_or_held_never_replaced(
    table: Table, shoectl: ShoectlRunner, loss: str
) -> None:
    with running_service(table) as service:
        service.wait_for_notification("READY=1")
        run_two_rounds(table, "SHOE-1")
        service.stop(signal_number(loss))
    acked = table.core.link.last_acked_seq
    assert acked > 0
    lost = ("-wal", "-shm") if loss.startswith("wal") else ("", "-wal", "-shm")
    for suffix in lost:
        Path(f"{table.journal_path}{suffix}").unlink(missing_ok=True)
    if loss == "journal deleted":
        refused = shoectl("run", "--config", str(table.config_path), "--device-wait", "5")
        assert refused.returncode == 2, refused.stderr
        (line,) = refused.stderr.splitlines()
        assert "no journal: make a new table's journal with 'shoectl journal init'" in line
        assert not table.journal_path.exists(), "run must never make a journal"
        assert shoectl("journal", "init", "--config", str(table.config_path)).returncode == 0
    with running_service(table) as service:
        service.wait_for_notification("READY=1")
        status = table.status()
        assert HoldReason.JOURNAL_BEHIND_DEVICE in status["holds"]
        assert status["last_alarm"]["kind"] == "sequence_gap"
        request(table.socket_path, "clear-hold", reason=HoldReason.JOURNAL_BEHIND_DEVICE)
        assert holds(table) == []
        assert service.stop() == 0, service.log_tail()
    (behind,) = journaled(table.journal_path, "host.journal_behind_device")
    assert behind.payload["device_acked_seq"] == behind.device_seq == acked
    assert behind.payload["journaled_seq"] < acked


def signal_number(loss: str) -> int:
    """SIGKILL keeps the -wal unmerged, as a crash or power cut before any checkpoint does."""
    return signal.SIGKILL if loss.startswith("wal") else signal.SIGTERM


@pytest.mark.parametrize("device", ["shoe", "line reader"])
def test_case1_a_wal_unlinked_while_running_is_noticed_and_the_table_holds(
    tmp_path: Path, device: str
) -> None:
    reader = device == "line reader"
    make_table = simulated_reader_table if reader else simulated_table
    with make_table(tmp_path) as table:
        dealer = ReaderDealer(table) if reader else None
        with (
            contextlib.nullcontext() if dealer is None else dealing(dealer),
            running_service(table) as service,
        ):
            service.wait_for_notification("READY=1")
            open_manual_shoe(table, "SHOE-W")
            wait_until(lambda: rounds_finished(table) >= 1, "a round")
            Path(f"{table.journal_path}-wal").unlink()
            wait_until(lambda: HoldReason.JOURNAL_STORAGE in holds(table), "the storage hold")
            assert table.status()["last_alarm"]["kind"] == "storage"
            assert_nothing_dealt_while_held(table)
            held_rounds = rounds_finished(table)
            request(table.socket_path, "clear-hold", reason=HoldReason.JOURNAL_STORAGE)
            wait_until(lambda: rounds_finished(table) > held_rounds, "a round after the hold")
            assert dealer is None or dealer.wait_for_a_card_due(WAIT_S)
            status = table.status()
            assert service.stop() == 0, service.log_tail()
        assert Path(f"{table.journal_path}").exists()
        assert_every_event_journaled_once(table.journal_path)
        if dealer is None:
            assert_acknowledged_equals_journaled(table)
        else:
            assert table.core.counts.cards == status["dealt"] + status["burned"]
    (fault,) = journaled(table.journal_path, "host.storage_fault")
    assert "removed or replaced while the service ran" in fault.payload["detail"]


# --- case 2 -------------------------------------------------------------------------------


def test_case2_a_command_whose_commit_fails_did_not_happen(tmp_path: Path) -> None:
    with table_on_small_disk(tmp_path, "4m", floor_mb=0) as (table, disk):
        with running_service(table, betting_time=None) as service:
            service.wait_for_notification("READY=1")
            open_manual_shoe(table, "SHOE-F")
            wait_until(lambda: table.status()["state"] == "betting", "bets to open")
            filler = fill(disk)
            with pytest.raises(UserError, match="disk is full") as failed:
                request(table.socket_path, "no-more-bets")
            assert str(table.journal_path) in str(failed.value)
            assert table.status()["state"] == "betting"
            assert_nothing_dealt_while_held(table)
            filler.unlink()
            request(table.socket_path, "no-more-bets")
            wait_until(lambda: table.status()["state"] != "dealing", "the round to end")
            assert service.stop() == 0, service.log_tail()
        with running_service(table) as service:
            service.wait_for_notification("READY=1")
            assert service.stop() == 0, service.log_tail()
        closed = journaled(table.journal_path, "command.close_bets")
        started = journaled(table.journal_path, "session.started")
        assert [record.round_no for record in closed].count(1) == 1
        assert [record.payload["replay_mismatches"] for record in started] == [[], []]
        assert_every_event_journaled_once(table.journal_path)
        assert_acknowledged_equals_journaled(table)


# --- case 4 -------------------------------------------------------------------------------


def edit_last_assigned_card(path: Path) -> int:
    connection = sqlite3.connect(path)
    (record_id,) = connection.execute(
        "SELECT max(id) FROM records WHERE kind = 'card.assigned'"
    ).fetchone()
    connection.execute(
        'UPDATE records SET payload = replace(payload, \'"card":"\', \'"card":"9\') WHERE id = ?',
        (record_id,),
    )
    connection.commit()
    connection.close()
    return record_id


def test_case4_run_deals_nothing_on_a_journal_that_fails_its_start_up_check(
    table: Table, shoectl: ShoectlRunner
) -> None:
    with running_service(table) as service:
        service.wait_for_notification("READY=1")
        run_two_rounds(table, "SHOE-C")
        assert service.stop() == 0, service.log_tail()
    edited = edit_last_assigned_card(table.journal_path)
    refused = shoectl("run", "--config", str(table.config_path), "--device-wait", "5")
    assert refused.returncode == 1, refused.stderr
    (line,) = refused.stderr.splitlines()
    assert f"fails its start-up check at record {edited}" in line
    assert "shoectl journal verify" in line
    (record,) = journaled(table.journal_path, "session.journal_refused")
    assert record.payload["kind"] == "journal"
    assert len(journaled(table.journal_path, "session.started")) == 1


# --- case 5 -------------------------------------------------------------------------------


def test_case5_free_space_below_the_floor_holds_before_the_disk_is_full(tmp_path: Path) -> None:
    with table_on_small_disk(tmp_path, "24m", floor_mb=8) as (table, disk):
        with running_service(table) as service:
            service.wait_for_notification("READY=1")
            open_manual_shoe(table, "SHOE-S")
            wait_until(lambda: rounds_finished(table) >= 1, "a round")
            filler = fill(disk, leave_bytes=4 * MB)
            wait_until(lambda: HoldReason.JOURNAL_SPACE_LOW in holds(table), "the space hold")
            assert table.status()["last_alarm"]["kind"] == "storage"
            assert_nothing_dealt_while_held(table)
            held_rounds = rounds_finished(table)
            filler.unlink()
            wait_until(lambda: HoldReason.JOURNAL_SPACE_LOW not in holds(table), "the release")
            wait_until(lambda: rounds_finished(table) > held_rounds, "a round after the hold")
            assert service.stop() == 0, service.log_tail()
        (low,) = journaled(table.journal_path, "host.storage_low")
        assert low.payload["floor_bytes"] == 8 * MB > low.payload["free_bytes"]
        assert journaled(table.journal_path, "host.storage_recovered")
        assert_every_event_journaled_once(table.journal_path)


def test_case5_a_card_released_when_the_space_hold_comes_is_released_again_after_it(
    tmp_path: Path,
) -> None:
    """The hold locks a gate opened for a card no dealer had drawn yet. Released by the
    recovered space (no person clearing it), the table must open the gate again for that
    card: CI once waited 30 s for a round after the release behind a gate it had locked."""
    with table_on_small_disk(tmp_path, "24m", floor_mb=8) as (table, disk):
        with running_service(table) as service:
            service.wait_for_notification("READY=1")
            open_manual_shoe(table, "SHOE-R")
            wait_until(lambda: rounds_finished(table) >= 1, "a round")
            table.core.dealer.auto = False
            wait_until(lambda: table.core.gate is GateMode.RELEASE_ONE, "a card released")
            filler = fill(disk, leave_bytes=4 * MB)
            wait_until(lambda: HoldReason.JOURNAL_SPACE_LOW in holds(table), "the space hold")
            wait_until(lambda: table.core.gate is GateMode.LOCKED, "the gate locked by the hold")
            held_rounds = rounds_finished(table)
            filler.unlink()
            wait_until(lambda: HoldReason.JOURNAL_SPACE_LOW not in holds(table), "the release")
            wait_until(lambda: table.core.gate is GateMode.RELEASE_ONE, "the card released again")
            table.core.dealer.auto = True
            wait_until(lambda: rounds_finished(table) > held_rounds, "a round after the hold")
            assert service.stop() == 0, service.log_tail()
        assert_every_event_journaled_once(table.journal_path)


@pytest.mark.parametrize("device", ["shoe", "line reader"])
def test_case5_a_full_disk_stops_the_service_with_one_line_and_loses_nothing(
    tmp_path: Path, device: str
) -> None:
    """A line reader resends nothing: the line whose commit met the full disk is gone with the
    service. Restarted mid-shoe, its table holds until the supervisor confirms the layout, and
    the shoe holds every card the reader let out."""
    reader = device == "line reader"
    with table_on_small_disk(tmp_path, "4m", floor_mb=0, line_reader=reader) as (table, disk):
        dealer = ReaderDealer(table) if reader else None
        with contextlib.nullcontext() if dealer is None else dealing(dealer):
            with running_service(table) as service:
                service.wait_for_notification("READY=1")
                open_manual_shoe(table, "SHOE-D")
                wait_until(lambda: rounds_finished(table) >= 1, "a round")
                filler = fill(disk)
                assert service.process.wait(30) == 1
                log = service.log_tail()
            errors = [line for line in log.splitlines() if line.startswith("shoectl: error: ")]
            assert len(errors) == 1, log
            assert f"{table.journal_path}: database or disk is full" in errors[0]
            assert "Traceback" not in log
            if dealer is None:
                assert_acknowledged_equals_journaled(table)
            filler.unlink()
            with running_service(table) as service:
                service.wait_for_notification("READY=1")
                rounds = rounds_finished(table)
                wait_until(lambda: rounds_finished(table) > rounds, "a round after the restart")
                assert dealer is None or dealer.wait_for_a_card_due(WAIT_S)
                status = table.status()
                assert service.stop() == 0, service.log_tail()
        assert_every_event_journaled_once(table.journal_path)
        if dealer is None:
            assert_acknowledged_equals_journaled(table)
        else:
            assert_the_reader_lost_nothing(table, status, dealer)


def assert_the_reader_lost_nothing(
    table: Table, status: dict[str, Any], dealer: ReaderDealer
) -> None:
    """The status (every card drawn journaled) holds every card the reader let out: the one a
    stopped service lost is the supervisor's, after the one device_cannot_replay hold."""
    assert table.core.counts.cards == status["dealt"] + status["burned"]
    (finding,) = journaled(table.journal_path, "host.finding")
    assert finding.payload["hold"] == HoldReason.DEVICE_CANNOT_REPLAY
    corrected = [r.payload["card"] for r in journaled(table.journal_path, "card.corrected")]
    assert corrected == dealer.entered and len(dealer.entered) + dealer.cleared == 1


# --- case 6 -------------------------------------------------------------------------------


def host_records(path: Path) -> list[str]:
    """The kinds of every record but the device's own events (a self-test may come any time)."""
    with Journal.open_readonly(path) as journal:
        return [r.kind for r in journal.records() if not r.kind.startswith("device.")]


def test_case6_refused_commands_grow_the_journal_by_time_not_by_count(table: Table) -> None:
    with running_service(table) as service:
        service.wait_for_notification("READY=1")
        before = len(host_records(table.journal_path))
        started = time.monotonic()
        for _ in range(2000):
            with pytest.raises(UserError, match="cut-done is not possible now"):
                request(table.socket_path, "cut-done")
        elapsed = time.monotonic() - started
        assert service.stop() == 0, service.log_tail()
    intervals = int(elapsed // REPEAT_INTERVAL_S) + 1
    grown = host_records(table.journal_path)[before:]
    per_refusal = {"session.operator", "command.cut_done", "command.refused"}
    assert set(grown) <= per_refusal | {SESSION_REPEATED}
    assert len(grown) <= (len(per_refusal) + 1) * intervals
    assert 1 <= grown.count("command.cut_done") <= intervals


class SteppedClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_case6_undecodable_frames_on_an_unpaired_link_are_counted_not_journaled(
    tmp_path: Path,
) -> None:
    core = create_device("cs-1", seed=3)
    clock = SteppedClock()
    path = tmp_path / "journal.sqlite"
    Journal.init(path, table_id="T1")
    with (
        serve_pty(core) as pty,
        Journal.open(path, table_id="T1") as journal,
        open_device(str(pty.link), timing=FAST_LINK) as device,
    ):
        session = TableSession.open(table_config(), journal, device, clock=clock)
        for number in range(300):
            pty._endpoint.write(encode_frame(bytes([0xEE, number % 256, number // 256])))
        wait_until(lambda: device.counters()["undecodable"] >= 300, "every frame read")
        while session.step(0.05):
            pass
        clock.now += REPEAT_INTERVAL_S
        session.step(0.01)
    violations = journaled(path, "link.protocol_violation")
    (summary,) = journaled(path, SESSION_REPEATED)
    assert len(violations) == 1
    assert summary.payload["kind"] == "link.protocol_violation"
    assert summary.payload["count"] + len(violations) >= 250
