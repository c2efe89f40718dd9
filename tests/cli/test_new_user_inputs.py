"""What a new user typed (issue 23), through the real shoectl: each input that ended as an
internal error (exit 70) or in a library's words is one line saying what is wrong and what
to do, with a non-zero exit other than 70; and the smaller items that were wrong in output."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from support.shoectl import ShoectlRunner

from cardshoe.controller.errors import EXIT_BAD_INPUT, EXIT_INTERNAL_ERROR
from cardshoe.controller.protection.shuffle_tests import MIN_POSITION_CARDS

LONG_NAME = "a" * 5000


def one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    """The single stderr line of a refused command; never a traceback, never exit 70."""
    assert done.returncode not in (0, EXIT_INTERNAL_ERROR), done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("shoectl: error: ") and "internal error" not in line
    return line


def table_file(folder: Path, journal_path: str, text_before: str = "") -> Path:
    """A table configuration whose journal and control socket live in folder."""
    config = folder / "table.toml"
    config.write_text(
        f'{text_before}table_id = "T23"\n[device]\nurl = "sim://cs-1"\n[service]\n'
        f'journal_path = "{journal_path}"\ncontrol_socket = "{folder / "control.sock"}"\n',
        encoding="utf-8",
    )
    return config


def test_a_shuffle_report_of_three_rounds_says_how_many_it_needs(
    shoectl: ShoectlRunner, tmp_path: Path
) -> None:
    journal = tmp_path / "journal.sqlite"
    dealt = shoectl("demo", "--transport", "inproc", "--rounds", "3", "--journal", str(journal))
    assert dealt.returncode == 0, dealt.stderr
    report = tmp_path / "r.html"

    line = one_error_line(shoectl("analyze", "shuffle", str(journal), "--report", str(report)))

    assert f"at least {MIN_POSITION_CARDS} cards" in line and "3 rounds" in line
    assert re.search(r"about \d+ rounds", line)
    assert not report.exists()
    plain = shoectl("analyze", "shuffle", str(journal))
    assert plain.returncode == 0, plain.stderr
    assert any(
        row.startswith("rank_by_position   not run: ") and "about" in row
        for row in plain.stdout.splitlines()
    )


@pytest.mark.parametrize(
    "args",
    [
        ("roads", LONG_NAME),
        ("roads", "/tmp/" + "a/" * 2500),
        ("journal", "show", LONG_NAME),
        ("journal", "verify", LONG_NAME),
        ("odds", "--game", "macau-1", "--decks", "8", "--journal", LONG_NAME),
        ("analyze", "shuffle", LONG_NAME),
        ("run", "--config", LONG_NAME),
        ("journal", "init", "--config", LONG_NAME),
        ("uplink", "--config", LONG_NAME),
    ],
    ids=lambda args: " ".join(word[:12] for word in args[:2]),
)
def test_a_path_too_long_for_the_file_system_is_one_line(
    shoectl: ShoectlRunner, args: tuple[str, ...]
) -> None:
    line = one_error_line(shoectl(*args))

    assert "File name too long" in line


def test_a_dsn_libpq_cannot_parse_is_bad_input_with_the_form(shoectl: ShoectlRunner) -> None:
    done = shoectl("floor", "init-db", "--dsn", "nonsense")

    assert done.returncode == EXIT_BAD_INPUT
    assert "postgresql://USER@HOST:PORT/DB" in one_error_line(done)


def test_a_journal_path_naming_a_folder_says_so(shoectl: ShoectlRunner, tmp_path: Path) -> None:
    (tmp_path / "journals").mkdir()
    config = table_file(tmp_path, "journals")

    for args in (("journal", "init"), ("run",)):
        done = shoectl(*args, "--config", str(config))
        assert done.returncode == EXIT_BAD_INPUT, done.stderr
        assert "is a folder, not a journal file" in one_error_line(done)
    assert list((tmp_path / "journals").iterdir()) == []


def test_info_on_something_that_is_no_serial_port_says_so(shoectl: ShoectlRunner) -> None:
    line = one_error_line(shoectl("info", "/dev/null"))

    assert "/dev/null is not a serial port" in line and "shoectl list" in line
    assert "Could not configure port" not in line


def test_a_config_starting_with_a_byte_order_mark_is_read(
    shoectl: ShoectlRunner, tmp_path: Path
) -> None:
    config = table_file(tmp_path, "journal.sqlite", text_before="\ufeff")
    assert config.read_bytes().startswith(b"\xef\xbb\xbf")

    done = shoectl("journal", "init", "--config", str(config))

    assert done.returncode == 0, done.stderr
    assert (tmp_path / "journal.sqlite").is_file()


def test_odds_take_the_suit_symbols_the_page_shows(shoectl: ShoectlRunner) -> None:
    game = ("odds", "--game", "macau-1", "--decks", "8")
    by_symbol = shoectl(*game, "--seen", "A♠ K♦ 10♥ 7♣")
    by_letter = shoectl(*game, "--seen", "AS KD TH 7C")

    assert by_symbol.returncode == 0, by_symbol.stderr
    assert by_symbol.stdout == by_letter.stdout


def test_a_non_ascii_game_name_is_echoed_as_typed(shoectl: ShoectlRunner, tmp_path: Path) -> None:
    config = tmp_path / "table.toml"
    config.write_text('[game]\nname = "百家乐"\n', encoding="utf-8")

    for args in (
        ("odds", "--game", "百家乐", "--decks", "8"),
        ("demo", "--game", "百家乐", "--transport", "inproc"),
        ("demo", "--config", str(config), "--transport", "inproc"),
    ):
        line = one_error_line(shoectl(*args))
        assert "百家乐" in line and "\\u" not in line


def test_the_unseeded_demo_reports_a_seed_that_repeats_it(shoectl: ShoectlRunner) -> None:
    demo = ("demo", "--transport", "inproc", "--rounds", "3", "--json")
    first = [json.loads(line) for line in shoectl(*demo).stdout.splitlines()]
    (started,) = [event for event in first if event["event"] == "shoe_started"]
    assert isinstance(started["seed"], int)

    again = [json.loads(line) for line in shoectl(*demo, "--seed", str(started["seed"])).stdout
             .splitlines()]  # fmt: skip

    def rounds(events: list[dict[str, object]]) -> list[dict[str, object]]:
        return [event for event in events if event["event"] == "round"]

    assert rounds(again) == rounds(first) and len(rounds(first)) == 3


def test_surveillance_alarms_are_events_of_the_json_stream(shoectl: ShoectlRunner) -> None:
    done = shoectl("demo", "--game", "macau-1", "--decks", "6", "--seed", "5", "--json",
                   "--transport", "inproc")  # fmt: skip

    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    alarms = [event for event in events if event["event"] == "surveillance_alarm"]
    assert alarms and all(set(alarm) == {"event", "kind", "detail"} for alarm in alarms)
    assert "surveillance alarm" not in done.stderr


def test_the_help_texts_say_what_the_floor_and_uplink_options_are(shoectl: ShoectlRunner) -> None:
    floor = shoectl("floor", "--help").stdout
    assert "demo" in floor.split("Commands:")[0] and "cardshoe[floor]" in floor
    assert "init-db, ingest, status, demo" in shoectl("--help").stdout
    tables = shoectl("floor", "demo", "--help").stdout
    assert re.search(r"--tables INTEGER RANGE\s+Simulated tables", tables)
    uplink = shoectl("uplink", "--help").stdout.split("--config FILE")[1].split("--journal")[0]
    assert "[uplink]" in uplink and "socket" not in uplink
