"""A technician with a line reader: `shoectl sim --protocol line`, `monitor --raw` and
`selftest --profile`, all as child processes on a real pty."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from support.shoectl import ShoectlRunner, one_error_line
from support.sim_support import running

SHOECTL = [sys.executable, "-m", "cardshoe.controller.cli"]
EXAMPLE = Path(__file__).parents[2] / "docs" / "examples" / "line-shoe.toml"
LINE_SIM = [*SHOECTL, "sim", "--pty", "--protocol", "line", "--profile", str(EXAMPLE)]


def every_fifth_card(kind: str) -> list[str]:
    """Faults all along the shoe: the reader deals before a tool opens the port, so a
    tool sees some stretch of it, never a known card."""
    return [arg for card in range(5, 400, 5) for arg in ("--inject", f"{kind}@card={card}")]


def test_monitor_raw_shows_each_line_and_what_it_matched(shoectl: ShoectlRunner) -> None:
    command = [*LINE_SIM, "--seed", "3", "--pace", "0.02", *every_fifth_card("garbled-line")]
    with running(command) as (_, path):
        shown = shoectl("monitor", path, "--raw", "--profile", str(EXAMPLE), "--count", "20")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert len(lines) == 20
    meanings = [line.split(maxsplit=1)[1] for line in lines]
    assert {meaning.split()[0] for meaning in meanings} <= {"card", "bad", "cut"}
    assert "bad checksum" in meanings
    first_card = lines[meanings.index(next(m for m in meanings if m.startswith("card")))]
    assert first_card.startswith("'C") and "*" in first_card


def test_monitor_raw_without_a_profile_shows_the_terminator(shoectl: ShoectlRunner) -> None:
    with running([*LINE_SIM, "--seed", "3", "--pace", "0.05"]) as (_, path):
        shown = shoectl("monitor", path, "--raw", "--count", "2", "--json")
        plain = shoectl("monitor", path, "--raw", "--count", "1")
    assert plain.returncode == 0, plain.stderr
    assert re.fullmatch(r"'C[A2-9TJQK][SHDC]\*[0-9A-F]{2}\\r' +\(no profile\)\n", plain.stdout)
    assert shown.returncode == 0, shown.stderr
    records = [json.loads(line) for line in shown.stdout.splitlines()]
    assert [record["matched"] for record in records] == ["(no profile)"] * 2
    assert all(record["line"].endswith("\\r") for record in records)


def test_selftest_listens_and_judges_the_lines_against_the_profile(
    shoectl: ShoectlRunner,
) -> None:
    with running([*LINE_SIM, "--seed", "5", "--pace", "0.05"]) as (_, path):
        good = shoectl("selftest", path, "--profile", str(EXAMPLE), "--listen", "0.5", "--json")
    assert good.returncode == 0, good.stderr
    record = json.loads(good.stdout)
    assert record["passed"] is True
    assert [check["name"] for check in record["checks"]] == ["port", "lines", "profile", "checksum"]
    faults = every_fifth_card("bad-checksum")
    with running([*LINE_SIM, "--seed", "5", "--pace", "0.02", *faults]) as (_, path):
        bad = shoectl("selftest", path, "--profile", str(EXAMPLE), "--listen", "0.5")
    assert bad.returncode == 1
    assert re.search(r"^FAIL  checksum: [1-9]\d* of \d+ lines failed the nmea", bad.stdout, re.M)
    assert one_error_line(bad.stderr).startswith(f"shoectl: error: self-test of {path} failed")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["sim", "--protocol", "line"], "--protocol line needs --profile FILE"),
        (
            ["sim", "--protocol", "line", "--profile", "/nonexistent.toml"],
            "cannot read the profile",
        ),
        (["sim", *LINE_SIM[4:], "--auto-dealer"], "--auto-dealer is for --protocol cardshoe"),
        (["sim", *LINE_SIM[4:], "--inject", "jam@card=2"], "jam@card=2 cannot happen on a line"),
        (["monitor", "--raw", "--service"], "--raw reads a line reader: give its URL"),
        (["monitor", "--service", "--profile", str(EXAMPLE)], "--profile goes with --raw"),
        (["selftest", "/dev/null", "--profile", "/nonexistent.toml"], "cannot read the profile"),
    ],
)
def test_bad_line_tool_input_is_one_line_and_exit_2(
    args: list[str], message: str, shoectl: ShoectlRunner
) -> None:
    result = shoectl(*args)
    assert result.returncode == 2, result.stderr
    assert message in one_error_line(result.stderr)


def test_a_profile_the_simulator_cannot_write_is_refused(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    profile = tmp_path / "reader.toml"
    profile.write_text("[device.line]\ncard = '^(?P<rank>[A2-9TJQK]):(?P<suit>[SHDC])$'\n")
    result = shoectl("sim", "--protocol", "line", "--profile", str(profile))
    assert result.returncode == 2
    assert "writes a card as 'CAS', which this profile reads as unmatched" in one_error_line(
        result.stderr
    )


def test_a_keyboard_reader_is_watched_and_self_tested_at_its_usb_url(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """In this process, since the simulated USB reader lives on an in-process pyusb backend."""
    from cardshoe.controller.cli.line_tools import listen_checks, load_profile, monitor_raw
    from cardshoe.firmware_sim.hid_reader import HID_READER_PID, HidReader
    from cardshoe.firmware_sim.line_reader import format_for
    from cardshoe.firmware_sim.usb_backend import SimUsbBackend

    keyboard_profile = tmp_path / "reader.toml"
    keyboard_profile.write_text(
        EXAMPLE.read_text()
        .replace("[device.line]", "[device.hid]")
        .replace("baud = 9600\n", "")
        .replace('terminator = "\\r\\n"\n', "")
    )
    profile = load_profile(keyboard_profile)
    reader = HidReader(format=format_for(profile), seed=2, pull_interval_s=0.02)
    url = f"usb://1209:{HID_READER_PID:04x}/{reader.serial_number}"
    with SimUsbBackend(reader) as backend:
        checks = listen_checks(url, profile, 0.5, usb_backend=backend)
        monitor_raw(url, keyboard_profile, 9600, 3, False, usb_backend=backend)
    assert [(check.name, check.passed) for check in checks] == [
        ("port", True),
        ("lines", True),
        ("profile", True),
        ("checksum", True),
    ]
    assert checks[0].detail == f"{url} opened as a USB keyboard"
    shown = capsys.readouterr().out.splitlines()
    assert len(shown) == 3 and all(
        re.fullmatch(r"'C\w\w\*[0-9A-F]{2}' +card \w\w", line) for line in shown
    )
