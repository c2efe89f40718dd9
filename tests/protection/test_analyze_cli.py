"""shoectl analyze shuffle over journals the demo dealt, run as surveillance would."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cardshoe.controller.journal.store import Journal


def shoectl_once(*args: str) -> subprocess.CompletedProcess[str]:
    """The `shoectl` fixture's way of running the CLI, for the module's shared journals."""
    command = [sys.executable, "-m", "cardshoe.controller.cli", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def dealt_journal(path: Path, shuffle: str, seeds: list[int]) -> Path:
    for seed in seeds:
        result = shoectl_once(
            "demo", "--journal", str(path), "--transport", "inproc", "--seed", str(seed),
            "--game", "punto-banco", "--decks", "6", "--shuffle", shuffle, "--json",
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
    return path


@pytest.fixture(scope="module")
def riffled(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("riffled")
    return dealt_journal(folder / "journal.sqlite", "riffle:2", [21, 22, 23])


@pytest.fixture(scope="module")
def one_fair_shoe(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("fair")
    return dealt_journal(folder / "journal.sqlite", "fair", [24])


def test_riffled_shoes_fail_the_carry_over_test(shoectl, riffled: Path) -> None:
    result = shoectl("analyze", "shuffle", str(riffled), "--json")
    assert result.returncode == 1, result.stderr
    record = json.loads(result.stdout)
    assert record["shoes"] == 3
    tests = {test["name"]: test for test in record["tests"]}
    assert set(tests) == {"rank_by_position", "carry_over"}
    for test in tests.values():
        assert set(test) == {"name", "statistic", "dof", "p_value", "pass"}
        assert isinstance(test["statistic"], float) and 0 <= test["p_value"] <= 1
    assert tests["carry_over"]["pass"] is False and tests["carry_over"]["dof"] is None
    assert isinstance(tests["rank_by_position"]["dof"], int)


def test_one_fair_shoe_passes_and_has_no_carry_over_test(shoectl, one_fair_shoe: Path) -> None:
    result = shoectl("analyze", "shuffle", str(one_fair_shoe), "--json")
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert record["shoes"] == 1
    assert [test["name"] for test in record["tests"]] == ["rank_by_position"]
    text = shoectl("analyze", "shuffle", str(one_fair_shoe))
    assert "rank_by_position" in text.stdout and "carry_over         not run" in text.stdout


def test_several_journals_are_one_table_each(shoectl, riffled: Path, one_fair_shoe: Path) -> None:
    record = json.loads(shoectl("analyze", "shuffle", str(riffled), str(one_fair_shoe),
                                "--json").stdout)  # fmt: skip
    assert record["shoes"] == 4


def test_the_report_has_the_tests_and_the_plots(shoectl, riffled: Path, tmp_path: Path) -> None:
    report = tmp_path / "shuffle.html"
    result = shoectl("analyze", "shuffle", str(riffled), "--report", str(report))
    assert result.returncode == 1, result.stderr
    page = report.read_text(encoding="utf-8")
    assert len(re.findall(r'<img alt="[^"]+" src="data:image/png;base64,', page)) == 2
    assert "<b>FAIL</b>" in page and "carry_over" in page


def test_the_live_alarm_is_journaled_and_reported_to_surveillance_only(
    shoectl, tmp_path: Path
) -> None:
    """carry:12 shoes raise the stacked-shoe alarm: in the journal, and in the demo's output
    as a surveillance_alarm event (issue 23), never as one of the table's alarm events."""
    path = tmp_path / "journal.sqlite"
    outputs = []
    for seed in (31, 32):
        result = shoectl(
            "demo", "--journal", str(path), "--transport", "inproc", "--seed", str(seed),
            "--shuffle", "carry:12", "--json",
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        outputs.append(result.stdout)
    with Journal.open_readonly(path) as journal:
        kinds = [record.payload["kind"] for record in journal.records(kinds=["alarm"])]
    assert "stacked_shoe" in kinds
    events = [json.loads(line) for output in outputs for line in output.splitlines()]
    table_alarms = {event["kind"] for event in events if event["event"] == "alarm"}
    assert not table_alarms & {"stacked_shoe", "advantage"}
    reported = {event["kind"] for event in events if event["event"] == "surveillance_alarm"}
    assert "stacked_shoe" in reported


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["/nonexistent/journal.sqlite"], "no such journal file"),
        (["/dev/null"], "not a journal file"),
        ([], "Missing argument 'JOURNALS...'"),
    ],
)
def test_bad_input_is_one_line_exit_2(shoectl, args: list[str], message: str) -> None:
    result = shoectl("analyze", "shuffle", *args)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and message in result.stderr


def test_a_journal_without_a_shoe_is_bad_input(shoectl, tmp_path: Path) -> None:
    path = tmp_path / "empty.sqlite"
    Journal.open(path, table_id="T1", create=True).close()
    result = shoectl("analyze", "shuffle", str(path))
    assert result.returncode == 2
    assert "hold no shoe" in result.stderr


def test_an_unwritable_report_is_bad_input(shoectl, one_fair_shoe: Path) -> None:
    result = shoectl("analyze", "shuffle", str(one_fair_shoe), "--report", "/nonexistent/r.html")
    assert result.returncode == 2
    assert result.stderr.startswith("shoectl: error: /nonexistent/r.html: cannot write the report")
