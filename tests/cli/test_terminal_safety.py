"""Text from outside the program never commands the terminal that shows it.

A device's model, a USB adapter's descriptors, an operator's typed reason or note: each
reaches a technician's or supervisor's terminal through shoectl, the monitors and the
displays. ESC and CSI there start a command (retitle the window, clear the screen, rewrite
what was printed), and a line break splits a record in two. Whatever prints such text for
a person escapes every control character (one_line), and the wire refuses it outright
(tests/drivers/test_messages.py).
"""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from pytest_mock import MockerFixture
from serial.tools.list_ports_common import ListPortInfo
from support.service_support import running_service, simulated_table
from support.shoectl import ShoectlRunner

from cardshoe.controller import record_kinds
from cardshoe.controller.cli.list_cmd import list_command
from cardshoe.controller.cli.status_cmd import status_text
from cardshoe.controller.display.columns import aligned_lines
from cardshoe.controller.display.plain import plain_line
from cardshoe.controller.floor.status import TableStatus, status_lines
from cardshoe.controller.scoreboard.event_lines import event_line
from cardshoe.controller.scoreboard.round_recall import RoundRecall, recall_text
from cardshoe.drivers.text_input import is_control

HOSTILE = "\x1b]0;owned\x07\x1b[2J\x9b31m\x85\u2028"
"""A window retitle, a screen clear, a C1 CSI, NEL and a line separator: no spaces, so no
printer quotes it for that reason alone."""


def raw_controls(printed: str) -> list[str]:
    """The control characters printed other than the line ends between lines."""
    return [each for each in printed if is_control(each) and each != "\n"]


def test_list_escapes_what_a_usb_adapter_says_of_itself(
    pty_path: str, mocker: MockerFixture
) -> None:
    """No USB-serial adapter exists here, so pyserial's port list is given; its strings are
    what a device plugged into the table's computer chooses to say."""
    adapter = ListPortInfo(pty_path, skip_link_detection=True)
    adapter.vid, adapter.pid = 0x0403, 0x6001
    adapter.serial_number = f"FT{HOSTILE}"
    adapter.product = f"cable{HOSTILE}"
    adapter.location = f"1-1{HOSTILE}"
    mocker.patch("serial.tools.list_ports.comports", return_value=[adapter])
    result = CliRunner().invoke(list_command, [])
    assert result.exit_code == 0, result.output
    assert "FT\\u001b]0;owned\\u0007" in result.output
    assert raw_controls(result.output) == []


def test_rows_for_a_person_are_escaped_before_they_are_measured() -> None:
    lines = aligned_lines([("model", f"CS{HOSTILE}"), ("serial number", "7")])
    assert raw_controls("\n".join(lines)) == []
    assert lines[0].startswith("model          CS\\u001b]0;owned")
    assert lines[1] == "serial number  7"


def test_event_and_display_lines_escape_a_payload_text() -> None:
    record = {"time": "t", "kind": "command.clear_hold", "payload": {"reason": HOSTILE}}
    assert raw_controls(event_line(record)) == []
    shown = plain_line(record_kinds.ALARM, {"kind": "procedure_violation", "detail": HOSTILE})
    assert shown is not None and raw_controls(shown) == []


def test_a_round_recall_escapes_an_alarm_and_a_name() -> None:
    recall = RoundRecall(
        "S1",
        3,
        alarms=[{"record": 7, "kind": "device_fault", "detail": HOSTILE}],
        commands=[
            {
                "record": 8,
                "time": "t",
                "kind": "command.void_round",
                "by": {"user": f"sup{HOSTILE}", "uid": 1, "role": "supervisor"},
            }
        ],
        records=[7, 8],
    )
    shown = recall_text(recall)
    assert raw_controls(shown) == [] and len(shown.splitlines()) == 7


def test_floor_status_escapes_the_table_and_site_a_topic_named() -> None:
    """An unregistered table is taken on its chain alone, under whatever topic levels whoever
    reached the broker published to."""
    table = TableStatus(f"T{HOSTILE}", f"east{HOSTILE}", 5, 5, [], True, 0, None, None, 5, 0, 0.0)
    lines = status_lines([table])
    assert raw_controls("\n".join(lines)) == [] and len(lines) == 2


def test_a_refusal_quoting_what_was_typed_stays_one_harmless_line(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    """clear-hold with a reason no hold has: the service's refusal repeats the reason, and
    the journal keeps the command as typed; neither reaches the terminal raw."""
    with simulated_table(tmp_path) as table, running_service(table) as service:
        service.wait_for_notification("READY=1")
        socket = str(table.socket_path)
        refused = shoectl("control", "clear-hold", "--reason", HOSTILE, "--socket", socket)
        assert refused.returncode == 2
        assert len(refused.stderr.splitlines()) == 1, refused.stderr
        assert raw_controls(refused.stderr) == [] and "[2J" in refused.stderr
        shown = shoectl("journal", "show", str(table.journal_path))
        assert shown.returncode == 0, shown.stderr
        assert "command.clear_hold" in shown.stdout
        assert raw_controls(shown.stdout) == []
        status = table.status()
    assert status["clearable_holds"] == []
    reader_fault = ["fault.device_specific"]
    held = {**status, "held_state": "dealing", "holds": reader_fault}
    text = status_text({**held, "clearable_holds": reader_fault, "dealer": f"ann{HOSTILE}"})
    assert "\na supervisor clears  fault.device_specific (shoectl control clear-hold)\n" in text
    assert raw_controls(text) == []
