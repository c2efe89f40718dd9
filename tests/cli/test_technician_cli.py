"""shoectl monitor, dump and selftest as a technician runs them, against the simulator on a pty."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import select
import signal
import subprocess
import sys
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cobs import cobs
from support.process_support import STACKS_WAIT_S, StuckProcess, ended, signal_dispositions
from support.service_support import open_manual_shoe, running_service, simulated_table, wait_until
from support.shoectl import ShoectlRunner

from cardshoe.controller.cli.main import main
from cardshoe.controller.scoreboard.event_lines import card_text, device_event_record, event_line
from cardshoe.drivers.cardshoe_family import neutral_device_event
from cardshoe.drivers.device import open_device
from cardshoe.drivers.frame_tap import RX, TX, FrameTap, frame_record
from cardshoe.drivers.protocol.cardid import CardId, CardSuit
from cardshoe.drivers.protocol.framing import encode_frame
from cardshoe.drivers.protocol.message_codec import encode_message
from cardshoe.drivers.protocol.messages import (
    Ack,
    CardRead,
    FaultKind,
    GetStatus,
    Orientation,
    SensorFlag,
)
from cardshoe.firmware_sim.attach_pty import PtyAttachment, serve_pty
from cardshoe.firmware_sim.devices import create_device

LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z  (\S+)\s+(.*)$")


@pytest.fixture
def shoe_on_pty() -> Iterator[PtyAttachment]:
    """A manual shoe on a pty that has finished its power-up self-test (event seq 1)."""
    with serve_pty(create_device("cs-1", serial_number="TECH-1", seed=5)) as attachment:
        wait_until(lambda: attachment.core.self_test_passed is not None, "the power-up self-test")
        yield attachment


def spawn(*args: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "cardshoe.controller.cli", *args]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


# --- monitor URL -----------------------------------------------------------------------


def test_monitor_shows_each_waiting_event_and_acknowledges_it(
    shoectl: ShoectlRunner, shoe_on_pty: PtyAttachment
) -> None:
    core = shoe_on_pty.core
    core.press_button()
    core.open_door()
    result = shoectl("monitor", str(shoe_on_pty.link), "--count", "3", "--json")
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(r["kind"], r["payload"]["seq"]) for r in records] == [
        ("device.self_test_done", 1),
        ("device.button_pressed", 2),
        ("device.fault_raised", 3),
    ]
    assert records[2]["payload"]["kind"] == "door_open"
    assert core.link.last_acked_seq == 3


def test_monitor_text_is_one_timestamped_line_per_event(
    shoectl: ShoectlRunner, shoe_on_pty: PtyAttachment
) -> None:
    shoe_on_pty.core.press_button()
    result = shoectl("monitor", str(shoe_on_pty.link), "--count", "2")
    assert result.returncode == 0, result.stderr
    matches = [LINE.match(line) for line in result.stdout.splitlines()]
    assert all(matches), result.stdout
    assert [m.group(1) for m in matches if m] == ["device.self_test_done", "device.button_pressed"]
    assert "button=0" in result.stdout.splitlines()[1]


def test_ctrl_c_ends_monitor_with_exit_0(shoe_on_pty: PtyAttachment) -> None:
    monitor = spawn("monitor", str(shoe_on_pty.link))
    assert monitor.stdout is not None
    assert "device.self_test_done" in monitor.stdout.readline()
    monitor.send_signal(signal.SIGINT)
    assert ended(monitor, 30) == 0
    _, stderr = monitor.communicate()
    assert stderr == ""


@pytest.mark.parametrize("args", [(), ("/dev/ttyS0", "--service")])
def test_monitor_takes_a_url_or_service(shoectl: ShoectlRunner, args: tuple[str, ...]) -> None:
    result = shoectl("monitor", *args)
    assert result.returncode == 2
    assert "give one of URL, --service or --table" in result.stderr


def test_event_lines_name_the_card_or_why_it_cannot_be(tmp_path: Path) -> None:
    card = CardId(1, CardSuit.SPADES, 0x00BC614E, 3)
    read = CardRead(7, 1200, card.encode(), Orientation.FACE_UP, SensorFlag(0), 0, 1)
    record = device_event_record(neutral_device_event(read))  # as the monitor sees it
    assert record["kind"] == "device.card_seen"
    assert list(record["payload"])[:2] == ["seq", "card"]
    assert record["payload"]["card"] == "AS#00BC614E/3"
    assert " seq=7 card=AS#00BC614E/3 " in event_line(record)
    misread = CardRead(8, 1300, b"\x01" * 8, Orientation.FACE_UP, SensorFlag(0), 0, 1)
    unreadable = CardRead(9, 1400, bytes(8), Orientation.FACE_UP, SensorFlag.ID_UNREADABLE, 0, 1)
    assert [card_text(neutral_device_event(read)) for read in (misread, unreadable)] == [
        "misread",
        "unreadable",
    ]


# --- monitor --service ------------------------------------------------------------------


def test_monitor_service_streams_table_events_and_ends_when_the_service_stops(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    with simulated_table(tmp_path) as table, running_service(table) as service:
        service.wait_for_notification("READY=1")
        config = str(table.config_path)
        follower = spawn("monitor", "--service", "--config", config)
        counted = spawn("monitor", "--service", "--config", config, "--count", "12", "--json")
        for monitor in (follower, counted):
            assert monitor.stderr is not None
            assert "following table T1" in monitor.stderr.readline()
        assert follower.stdout is not None
        open_manual_shoe(table, "SHOE-M")
        stdout, stderr = counted.communicate(timeout=30)
        assert counted.returncode == 0, stderr
        first_line = follower.stdout.readline()
        assert service.stop() == 0
        rest, follower_err = follower.communicate(timeout=30)
    records = [json.loads(line) for line in stdout.splitlines()]
    assert len(records) == 12
    assert records[0]["kind"] == "shoe.started"
    assert records[0]["payload"]["shoe_id"] == "SHOE-M"
    assert "card.burned" in {record["kind"] for record in records}
    assert LINE.match(first_line) and " shoe.started " in first_line
    assert follower.returncode == 3
    assert follower_err.strip().endswith("stopped")
    assert all(LINE.match(line) for line in rest.splitlines())


# --- dump ---------------------------------------------------------------------------------


def test_dump_shows_both_directions_in_hex_beside_the_decoding(
    shoectl: ShoectlRunner, shoe_on_pty: PtyAttachment
) -> None:
    result = shoectl("dump", str(shoe_on_pty.link), "--count", "6", "--json")
    assert result.returncode == 0, result.stderr
    frames = [json.loads(line) for line in result.stdout.splitlines()]
    decoded = [
        (frame["direction"], frame["message"]["type"]) for frame in frames if frame["message"]
    ]
    assert (TX, "GET_INFO") in decoded
    assert (RX, "HELLO") in decoded
    assert (RX, "SELF_TEST_RESULT") in decoded
    assert (TX, "ACK") in decoded
    for frame in frames:
        assert frame["hex"].endswith("00")
        assert frame["frame"] in ("ok", "delimiter")


def test_dump_text_puts_the_message_beside_its_bytes(
    shoectl: ShoectlRunner, shoe_on_pty: PtyAttachment
) -> None:
    result = shoectl("dump", str(shoe_on_pty.link), "--count", "6")
    assert result.returncode == 0, result.stderr
    get_info = next(line for line in result.stdout.splitlines() if "GET_INFO" in line)
    assert re.search(r"Z  tx  ([0-9a-f]{2} )+00  \|  GET_INFO\s+request_id=\d+", get_info)


def test_a_damaged_frame_is_shown_with_why_the_link_drops_it() -> None:
    payload = encode_message(GetStatus(5))
    wrong_crc = cobs.encode(payload + (zlib.crc32(payload) ^ 1).to_bytes(4, "little")) + b"\x00"
    shown: list[dict] = []
    tap = FrameTap(shown.append)
    tap.feed(RX, wrong_crc[:4])
    tap.feed(RX, wrong_crc[4:] + encode_frame(encode_message(Ack(9))) + b"\x00")
    assert [record["frame"] for record in shown] == ["bad_crc", "ok", "delimiter"]
    assert shown[0]["hex"] == wrong_crc.hex(" ")
    assert shown[1]["message"] == {"type": "ACK", "fields": {"acked_seq": 9}}
    assert frame_record(TX, b"\x05\x01\x02")["frame"] == "bad_cobs"
    assert frame_record(TX, b"\x01" * 400, delimited=False)["frame"] == "oversize"
    undecodable = encode_frame(b"\x7f\x01")[:-1]
    assert frame_record(RX, undecodable)["frame"] == "undecodable"


# --- selftest -----------------------------------------------------------------------------


def test_selftest_passes_on_a_healthy_shoe(
    shoectl: ShoectlRunner, shoe_on_pty: PtyAttachment
) -> None:
    result = shoectl("selftest", str(shoe_on_pty.link))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 5
    assert all(line.startswith("PASS  ") for line in lines)
    assert "serial TECH-1" in lines[0]


def test_selftest_fails_with_exit_1_and_names_the_failed_check(shoectl: ShoectlRunner) -> None:
    result = shoectl("selftest", "sim://cs-1?inject=bad-firmware-hash", "--json")
    assert result.returncode == 1
    record = json.loads(result.stdout)
    assert record["passed"] is False
    failed = [check for check in record["checks"] if not check["passed"]]
    assert [(check["name"], check["detail"]) for check in failed] == [
        ("device checks", f"{FaultKind.FIRMWARE_HASH_MISMATCH.name} failed")
    ]
    assert result.stderr.count("\n") == 1
    assert "FIRMWARE_HASH_MISMATCH failed" in result.stderr


def test_selftest_fails_while_a_fault_is_active(
    shoectl: ShoectlRunner, shoe_on_pty: PtyAttachment
) -> None:
    shoe_on_pty.core.open_door()
    result = shoectl("selftest", str(shoe_on_pty.link))
    assert result.returncode == 1
    assert "FAIL  no active fault: DOOR_OPEN" in result.stdout


# --- a device the technician cannot have ---------------------------------------------------

COMMANDS = [("monitor",), ("dump",), ("selftest",)]


@pytest.mark.parametrize("command", COMMANDS)
def test_a_busy_port_names_the_process_holding_it(
    shoectl: ShoectlRunner, shoe_on_pty: PtyAttachment, command: tuple[str, ...]
) -> None:
    with open_device(str(shoe_on_pty.link), timeout=2.0):
        result = shoectl(*command, str(shoe_on_pty.link))
    assert result.returncode == 3
    assert f"is in use by python (pid {os.getpid()})" in result.stderr
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize("command", COMMANDS)
def test_permission_denied_names_the_group_and_the_udev_rule(
    mocker, capsys, shoe_on_pty: PtyAttachment, command: tuple[str, ...]
) -> None:
    # Tests run as root, whom no file mode stops: the kernel's refusal is simulated.
    real_open = os.open

    def refuse_the_port(path, flags, *args):
        if str(path) == str(shoe_on_pty.link):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, flags, *args)

    mocker.patch("os.open", side_effect=refuse_the_port)
    with pytest.raises(SystemExit) as exit_info:
        main([*command, str(shoe_on_pty.link)])
    assert exit_info.value.code == 3
    stderr = capsys.readouterr().err
    assert stderr.count("\n") == 1
    assert "permission denied" in stderr
    assert "group 'cardshoe'" in stderr
    assert "udev/70-cardshoe.rules" in stderr


# --- monitor --table ------------------------------------------------------------------------


def test_monitor_table_prints_the_displays_lines_off_a_terminal(tmp_path: Path) -> None:
    with simulated_table(tmp_path) as table, running_service(table) as service:
        service.wait_for_notification("READY=1")
        follower = spawn("monitor", "--table", "--config", str(table.config_path), "--count", "40")
        assert follower.stderr is not None
        assert "following table T1" in follower.stderr.readline()
        open_manual_shoe(table, "SHOE-P")
        stdout, stderr = follower.communicate(timeout=30)
        assert service.stop() == 0
    assert follower.returncode == 0, stderr
    lines = stdout.splitlines()
    assert lines[0].startswith("shoe SHOE-P started: punto-banco, 8 decks, shoe")
    assert any(re.fullmatch(r"burn \S+ \(start_of_shoe, \d to go\)", line) for line in lines)
    assert any(re.fullmatch(r"round 1: \S+ to (player|banker)", line) for line in lines)


def test_monitor_table_draws_the_whole_open_shoe_live_on_a_terminal(tmp_path: Path) -> None:
    with simulated_table(tmp_path) as table, running_service(table) as service:
        service.wait_for_notification("READY=1")
        open_manual_shoe(table, "SHOE-L")
        wait_until(lambda: table.status()["rounds_finished"] >= 2, "two rounds")
        screen = drawn_on_a_terminal(
            ["monitor", "--table", "--config", str(table.config_path)], until="Big road"
        )
        assert service.stop() == 0
    assert "shoe SHOE-L" in screen
    assert "table T1" in screen


def drawn_on_a_terminal(args: list[str], until: str) -> str:
    """What the command draws on a real pty until `until` shows; then Ctrl-C, exit 0."""
    master, slave = os.openpty()
    environment = {**os.environ, "COLUMNS": "160", "LINES": "60", "TERM": "xterm"}
    command = [sys.executable, "-m", "cardshoe.controller.cli", *args]
    child = subprocess.Popen(command, stdout=slave, stderr=slave, env=environment)
    os.close(slave)
    screen = bytearray()

    def drawn() -> bool:
        screen.extend(_read_some(master))
        return until.encode() in screen

    def ended_with_the_screen_read() -> bool:
        # Read on as a terminal does: unread, the pty fills with redraws, and the child's last
        # one blocks its exit with rich's lock held (the refresh thread writing the frame).
        if child.poll() is not None:
            return True
        screen.extend(_read_some(master))
        return False

    try:
        wait_until(drawn, until)
        child.send_signal(signal.SIGINT)
        try:
            wait_until(ended_with_the_screen_read, "the command to end after Ctrl-C", 30)
        except AssertionError:
            raise stuck_on_a_terminal(child, ended_with_the_screen_read, screen) from None
        assert child.returncode == 0
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        os.close(master)
    return screen.decode(errors="replace")


def stuck_on_a_terminal(
    child: subprocess.Popen[bytes], ended_reading: Callable[[], bool], screen: bytearray
) -> StuckProcess:
    """A child on a pty that outlived its Ctrl-C: SIGABRT makes it print its threads' stacks
    there (PYTHONFAULTHANDLER), and the failure shows them, as ended() does for a pipe."""
    dispositions = signal_dispositions(child.pid)
    child.send_signal(signal.SIGABRT)
    with contextlib.suppress(AssertionError):
        wait_until(ended_reading, "the stacks after SIGABRT", STACKS_WAIT_S)
    printed = screen.decode(errors="replace")[-8000:]
    return StuckProcess(
        f"{child.args} did not end within 30 s of Ctrl-C; the end of what it printed, with its "
        f"threads' stacks at SIGABRT:\n{printed}\nits signals then: {dispositions}"
    )


def _read_some(master: int) -> bytes:
    ready, _, _ = select.select([master], [], [], 0.1)
    try:
        return os.read(master, 65536) if ready else b""
    except OSError:  # EIO: the child has closed its side on the way out
        return b""


# --- start-up cost ----------------------------------------------------------------------------

TECHNICIAN_MODULES = ("run_cmd", "status_cmd", "monitor_cmd", "dump_cmd", "selftest_cmd")
HEAVY = ("structlog", "rich", "serial", "usb", "transitions", "sqlite3")


def test_the_command_modules_leave_heavy_imports_to_the_command_itself() -> None:
    """Loading them (as --help does) must not pull in what makes start-up slow."""
    imports = "; ".join(f"import cardshoe.controller.cli.{name}" for name in TECHNICIAN_MODULES)
    probe = f"import sys; {imports}; print(sorted(set({HEAVY!r}) & set(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
