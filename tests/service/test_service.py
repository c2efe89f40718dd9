"""shoectl run end to end: a real child process on a simulated shoe behind a real pty.

Done when the service journals rounds, answers `shoectl status` over its
socket, stops cleanly on SIGTERM, and resumes the same shoe when started
again, losing no card and counting none twice, also after SIGKILL.
"""

from __future__ import annotations

import json
import re
import signal
import sqlite3
import time
from pathlib import Path

import pytest
from support.service_support import (
    Table,
    assert_shoe_dealt_once,
    open_manual_shoe,
    running_service,
    simulated_table,
    wait_until,
)
from support.session_support import journaled
from support.shoectl import ShoectlRunner

from cardshoe.controller.errors import UserError
from cardshoe.controller.service.control_client import request
from cardshoe.drivers.api.protocols import open_device
from cardshoe.firmware_sim.attach_pty import serve_pty
from cardshoe.firmware_sim.devices import create_device

START_UP_KILLS_S = (0.0, 0.15, 0.4, 0.8)
"""SIGKILL this long after the start: before the lock, while replaying, at the handshake..."""


@pytest.fixture
def table(tmp_path: Path):
    with simulated_table(tmp_path) as table:
        yield table


def rounds_finished(table: Table) -> int:
    return table.status()["rounds_finished"]


def test_run_journals_rounds_answers_status_stops_on_sigterm_and_resumes_the_shoe(
    table: Table, shoectl: ShoectlRunner
) -> None:
    with running_service(table) as service:
        service.wait_for_notification("READY=1")
        idle = shoectl("status", "--config", str(table.config_path), "--json")
        assert idle.returncode == 0, idle.stderr
        record = json.loads(idle.stdout)
        assert (record["state"], record["shoe_id"], record["table_id"]) == ("idle", None, "T1")
        assert record["device"]["serial_number"] == table.core.serial_number
        assert record["device"]["connected"] is True
        assert record["device"]["protocol"] == "cardshoe"
        assert {"acknowledged_delivery", "draw_control", "device_counts"} <= set(
            record["device"]["capabilities"]
        )
        shown = shoectl("status", "--config", str(table.config_path)).stdout
        assert re.search(r"^protocol +cardshoe 1\.\d+$", shown, re.MULTILINE)
        assert re.search(r"^capabilities +acknowledged_delivery, draw_control", shown, re.M)

        open_manual_shoe(table, "SHOE-A")
        wait_until(lambda: rounds_finished(table) >= 3, "three rounds")
        assert service.stop() == 0, service.log_tail()
    messages = service.messages
    assert messages[0].startswith("STATUS=")
    assert messages.index("READY=1") < messages.index("WATCHDOG=1")
    assert messages[-1] == "STOPPING=1"
    assert any(m.startswith("STATUS=dealing: shoe SHOE-A, round ") for m in messages)
    assert not table.socket_path.exists()
    first_rounds = len(journaled(table.journal_path, "round.result"))
    assert first_rounds >= 3

    with running_service(table) as service:
        service.wait_for_notification("READY=1")
        resumed = table.status()
        assert resumed["shoe_id"] == "SHOE-A"
        assert resumed["state"] != "idle"
        wait_until(lambda: table.status()["shoe_id"] is None, "the shoe to end")
        assert service.stop(signal.SIGINT) == 0, service.log_tail()
    assert len(journaled(table.journal_path, "session.started")) == 2
    assert len(journaled(table.journal_path, "round.result")) > first_rounds
    assert_shoe_dealt_once(table, "SHOE-A")


def test_sigkill_mid_shoe_and_during_start_up_loses_no_card(table: Table) -> None:
    with running_service(table) as service:
        service.wait_for_notification("READY=1")
        open_manual_shoe(table, "SHOE-K")
        wait_until(lambda: rounds_finished(table) >= 2, "two rounds")
        assert service.stop(signal.SIGKILL) == -signal.SIGKILL
    assert table.socket_path.exists(), "a killed service leaves its socket file behind"
    for delay in START_UP_KILLS_S:
        with running_service(table) as service:
            time.sleep(delay)
            assert service.stop(signal.SIGKILL) == -signal.SIGKILL, service.log_tail()
    with running_service(table) as service:
        service.wait_for_notification("READY=1")
        assert table.status()["shoe_id"] == "SHOE-K"
        wait_until(lambda: table.status()["shoe_id"] is None, "the shoe to end")
        assert service.stop() == 0, service.log_tail()
    assert_shoe_dealt_once(table, "SHOE-K")


def test_a_second_service_is_refused_while_the_first_runs(
    table: Table, shoectl: ShoectlRunner
) -> None:
    with running_service(table) as first:
        first.wait_for_notification("READY=1")
        second = shoectl("run", "--config", str(table.config_path))
        assert second.returncode == 3
        assert f"another shoectl run (pid {first.process.pid}) serves" in second.stderr
        assert second.stderr.count("\n") == 1
        assert table.status()["pid"] == first.process.pid
        assert first.stop() == 0


def test_status_without_a_service_is_one_line_and_exit_3(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    result = shoectl("status", "--socket", str(tmp_path / "none.sock"))
    assert result.returncode == 3
    assert result.stderr.count("\n") == 1
    assert "no cardshoe service is running on" in result.stderr


def test_a_busy_device_fails_start_up_naming_its_holder(
    table: Table, shoectl: ShoectlRunner
) -> None:
    with open_device(str(table.pty.link), timeout=2.0):
        result = shoectl("run", "--config", str(table.config_path), "--device-wait", "0")
    assert result.returncode == 3
    assert "is in use by" in result.stderr
    assert result.stderr.strip().endswith("close that program or pick another port")


def test_operator_commands_are_journaled_and_a_refused_one_is_exit_2(table: Table) -> None:
    with running_service(table) as service:
        service.wait_for_notification("READY=1")
        with pytest.raises(UserError) as refused:
            request(table.socket_path, "no-more-bets")
        assert refused.value.exit_code == 2
        with pytest.raises(UserError, match="abandon-shoe needs --reason"):
            request(table.socket_path, "abandon-shoe")
        with pytest.raises(UserError, match="unknown command 'deal'"):
            request(table.socket_path, "deal")
        answer = request(table.socket_path, "new-shoe", shoe_id="SHOE-C")
        assert (answer["shoe_id"], answer["state"]) == ("SHOE-C", "loading")
        assert service.stop() == 0
    assert [r.kind for r in journaled(table.journal_path, "command.close_bets")] == [
        "command.close_bets"
    ]
    assert journaled(table.journal_path, "command.start_shoe")[0].payload["shoe_id"] == "SHOE-C"


def test_shoectl_control_sends_operator_commands_through_the_socket(
    table: Table, shoectl: ShoectlRunner
) -> None:
    socket = str(table.socket_path)
    with running_service(table) as service:
        service.wait_for_notification("READY=1")
        refused = shoectl("control", "no-more-bets", "--socket", socket)
        assert refused.returncode == 2 and refused.stderr.count("\n") == 1
        unknown = shoectl("control", "deal", "--socket", socket)
        assert unknown.returncode == 2 and "unknown command 'deal'" in unknown.stderr
        opened = shoectl("control", "new-shoe", "--shoe-id", "SHOE-D", "--socket", socket, "--json")
        assert opened.returncode == 0, opened.stderr
        assert (json.loads(opened.stdout)["shoe_id"], json.loads(opened.stdout)["state"]) == (
            "SHOE-D",
            "loading",
        )
        assert service.stop() == 0
    assert journaled(table.journal_path, "command.start_shoe")[0].payload["shoe_id"] == "SHOE-D"


def test_without_a_watchdog_there_are_no_pings(table: Table) -> None:
    with running_service(table, watchdog_usec=None) as service:
        service.wait_for_notification("READY=1")
        table.status()
        assert service.stop() == 0
    assert "WATCHDOG=1" not in service.messages
    assert service.messages[-1] == "STOPPING=1"


def test_a_paired_shoe_is_served_over_an_authenticated_link(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    with simulated_table(tmp_path, pairing_mode=True) as table:
        paired = shoectl("pair", str(table.pty.link), "--config", str(table.config_path))
        assert paired.returncode == 0, paired.stderr
        with running_service(table) as service:
            service.wait_for_notification("READY=1")
            assert table.status()["device"]["authenticated"] is True
            assert service.stop() == 0


def test_firmware_off_the_allow_list_stops_start_up_with_exit_3(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    approved_elsewhere = "ab" * 32
    lines = f'allowed_firmware_hashes = ["{approved_elsewhere}"]\n'
    with simulated_table(tmp_path, device_lines=lines) as table:
        result = shoectl("run", "--config", str(table.config_path))
    assert result.returncode == 3
    assert result.stderr.count("\n") == 1
    assert "which device.allowed_firmware_hashes does not list" in result.stderr
    assert [r.kind for r in journaled(table.journal_path, "session.device_refused")] == [
        "session.device_refused"
    ]


def test_a_shoe_plugged_in_after_start_up_is_waited_for(tmp_path: Path) -> None:
    with simulated_table(tmp_path) as table:
        late = tmp_path / "late-shoe"
        configured = table.config_path.read_text().replace(str(table.pty.link), str(late))
        table.config_path.write_text(configured)
        with running_service(table) as service:
            waiting = f"STATUS=waiting for the device: no device at {late}"
            wait_until(lambda: any(m.startswith(waiting) for m in service.messages), "the wait")
            assert "READY=1" not in service.messages
            with serve_pty(create_device("cs-1", serial_number="LATE-1"), link=late):
                service.wait_for_notification("READY=1")
                assert table.status()["device"]["serial_number"] == "LATE-1"
                assert service.stop() == 0


def test_auto_shoe_opens_a_shoe_by_itself(table: Table) -> None:
    with running_service(table, "--auto-shoe") as service:
        service.wait_for_notification("READY=1")
        wait_until(lambda: rounds_finished(table) >= 1, "a round")
        assert table.status()["shoe_id"].startswith("T1-")
        assert service.stop() == 0


def _children(pid: int) -> list[int]:
    return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def _gone(pid: int) -> bool:
    """The process has exited (a zombie awaiting its reaper counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state == "Z"


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGKILL])
def test_the_pricing_child_runs_under_the_service_and_ends_with_it(
    table: Table, number: int
) -> None:
    with running_service(table) as service:
        service.wait_for_notification("READY=1")
        (child,) = _children(service.process.pid)
        command = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
        assert command[1:4] == [b"-I", b"-m", b"cardshoe.controller.protection.pricing_child"]
        open_manual_shoe(table, "SHOE-P")
        wait_until(lambda: rounds_finished(table) >= 2, "two rounds")
        assert _children(service.process.pid) == [child]  # one child for the whole run
        service.stop(number)
    wait_until(lambda: _gone(child), "the pricing child to end with its service")


def checked_anchor_id(path: Path) -> int:
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return connection.execute("SELECT record_id FROM checked_anchor").fetchone()[0]
    finally:
        connection.close()


def test_the_journal_is_checked_after_each_shoe_so_a_restart_walks_only_what_came_after(
    table: Table,
) -> None:
    """The anchor the start-up check walks from moves to the end of every shoe dealt: a
    restart after weeks of running does not walk the weeks again."""
    with running_service(table, "--auto-shoe") as service:
        service.wait_for_notification("READY=1")
        at_start = checked_anchor_id(table.journal_path)
        wait_until(lambda: journaled(table.journal_path, "shoe.ended"), "a shoe to end")
        ended = journaled(table.journal_path, "shoe.ended")[0].id
        assert ended > at_start
        wait_until(lambda: checked_anchor_id(table.journal_path) >= ended, "the anchor to move")
        assert service.stop() == 0
