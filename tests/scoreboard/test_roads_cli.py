"""shoectl roads: the board of a shoe read back from a real journal, by the real CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.session_support import SIM_DECK_SET, session_on, simulated_device, table_config
from support.shoectl import ShoectlRunner

from cardshoe.controller.journal.store import Journal

ROAD_CELL_KEYS = {
    "bead": {"col", "row", "winner", "player_pair", "banker_pair", "natural"},
    "big": {"col", "row", "winner", "ties", "player_pair", "banker_pair", "natural"},
    "big_eye": {"col", "row", "colour"},
    "small": {"col", "row", "colour"},
    "cockroach": {"col", "row", "colour"},
}


@pytest.fixture(scope="module")
def journal_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An 8-deck shoe with a foreign card voiding round 5, dealt by the real session."""
    path = tmp_path_factory.mktemp("roads") / "journal.sqlite"
    config = table_config(decks=8)
    core = simulated_device(config, seed=11, inject=("foreign-card@round=5",))
    with session_on(config, core, path) as (session, _):
        session.run_shoe(deck_set=SIM_DECK_SET)
    return path


def settled(path: Path) -> list[dict[str, Any]]:
    """The round.result payloads of the journal, read straight from its records."""
    with Journal.open_readonly(path) as journal:
        return [record.payload for record in journal.records(kinds=["round.result"])]


def test_roads_json_prints_the_issues_object(journal_path: Path, shoectl: ShoectlRunner) -> None:
    result = shoectl("roads", str(journal_path), "--json", check=True)
    board = json.loads(result.stdout)
    results = settled(journal_path)
    assert board["game"] == "punto-banco" and board["shoe_id"].startswith("T1-")
    assert board["rounds"] == len(results) == len(board["bead"]) > 60
    for key, cell_keys in ROAD_CELL_KEYS.items():
        assert board[key], key
        assert all(set(cell) == cell_keys for cell in board[key]), key
    assert [cell["winner"] for cell in board["bead"]] == [r["winner"] for r in results]
    assert [cell["winner"] for cell in board["big"]] == [
        r["winner"] for r in results if r["winner"] != "tie"
    ]
    stats = board["stats"]
    for winner in ("banker", "player", "tie"):
        assert stats[winner] == sum(r["winner"] == winner for r in results)
    for flag in ("player_pair", "banker_pair", "natural"):
        assert stats[flag] == sum(bool(r[flag]) for r in results)
    assert set(board["ask"]) == {"banker", "player"}
    for asked in board["ask"].values():
        assert set(asked) == {"big_eye", "small", "cockroach"}
        assert all(colour in ("red", "blue") for colour in asked.values())
    assert board["table"]["voids"] == 1


def test_roads_draws_the_five_roads_in_the_terminal(
    journal_path: Path, shoectl: ShoectlRunner
) -> None:
    text = shoectl("roads", str(journal_path), check=True).stdout
    for title in ("Bead road", "Big road", "Big eye boy", "Small road", "Cockroach pig"):
        assert title in text
    assert "ask B" in text and "natural" in text


def test_roads_picks_a_shoe_by_id_and_names_the_shoes_it_has(
    journal_path: Path, shoectl: ShoectlRunner
) -> None:
    shoe_id = json.loads(shoectl("roads", str(journal_path), "--json").stdout)["shoe_id"]
    picked = json.loads(shoectl("roads", str(journal_path), "--shoe", shoe_id, "--json").stdout)
    assert picked["shoe_id"] == shoe_id
    missing = shoectl("roads", str(journal_path), "--shoe", "nope")
    assert missing.returncode == 2
    assert f"no shoe 'nope' in this journal (latest shoes: {shoe_id})" in missing.stderr
    assert missing.stderr.count("\n") == 1


def test_roads_of_a_journal_without_a_shoe_or_of_no_journal_is_one_line(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    empty = tmp_path / "empty.sqlite"
    Journal.open(empty, table_id="T1", create=True).close()
    for path, message in ((empty, "no shoe has started"), (tmp_path / "x", "no such journal")):
        result = shoectl("roads", str(path), "--json")
        assert result.returncode == 2
        assert result.stderr.startswith("shoectl: error: ") and message in result.stderr
        assert result.stdout == ""


def test_a_seven_up_board_counts_super_sevens_where_others_have_none(
    journal_path: Path, tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    path = tmp_path / "seven-up.sqlite"
    config = table_config("seven-up", decks=4)
    with session_on(config, simulated_device(config, seed=5), path) as (session, _):
        session.run_shoe(deck_set=SIM_DECK_SET, rounds=30)
    board = json.loads(shoectl("roads", str(path), "--json", check=True).stdout)
    won = sum(r["sevens"] >= 2 for r in settled(path))
    assert board["game"] == "seven-up" and board["stats"]["super_sevens"] == won
    assert (
        json.loads(shoectl("roads", str(journal_path), "--json").stdout)["stats"]["super_sevens"]
        is None
    )


def panel_lines(text: str, title: str) -> list[str]:
    """The inside of the panel with this title, one string per line (padding stripped of its
    first space), from a terminal drawing whose panels sit side by side."""
    lines = text.splitlines()
    top = next(index for index, line in enumerate(lines) if f" {title} " in line)
    position = lines[top][: lines[top].index(f" {title} ")].count("╭") - 1
    inside = []
    for line in lines[top + 1 :]:
        if line.startswith("╰"):
            break
        inside.append(line.split("│")[2 * position + 1][1:])
    return inside


DERIVED = ("big_eye", "small", "cockroach")
PLAIN_COLOURS = {"red": "r", "blue": "b"}
TIE_MARKS = {0: "", 1: "/"}
PLAIN_PAIRS = {(True, False): "'", (False, True): ",", (True, True): ":"}


def test_roads_without_colour_tell_every_mark_apart_and_count_hidden_columns(
    journal_path: Path, shoectl: ShoectlRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Piped at 80 columns (`shoectl roads J | cat`): no colour, so ask B/P, the derived
    roads' red and blue and the pair dots are letters and symbols; each road cut to the
    width says how many older columns it hides, and the cells shown are the newest ones."""
    monkeypatch.setenv("COLUMNS", "80")
    board = json.loads(shoectl("roads", str(journal_path), "--json", check=True).stdout)
    text = shoectl("roads", str(journal_path), check=True).stdout
    assert "\x1b[" not in text

    stats = panel_lines(text, "Shoe so far")
    for winner, label in (("banker", "ask B"), ("player", "ask P")):
        line = next(line for line in stats if line.startswith(label))
        asked = [PLAIN_COLOURS[board["ask"][winner][road]] for road in DERIVED]
        assert line.split()[2:] == asked

    roads = {
        "bead": (
            "Bead road",
            3,
            lambda cell: (
                cell["winner"][0].upper()
                + PLAIN_PAIRS.get(
                    (cell["banker_pair"], cell["player_pair"]), "*" if cell["natural"] else " "
                )
            ),
        ),
        "big": (
            "Big road",
            2,
            lambda cell: (
                cell["winner"][0].upper()
                + TIE_MARKS.get(cell["ties"], "9" if cell["ties"] > 9 else str(cell["ties"]))
            ),
        ),
        "big_eye": ("Big eye boy", 1, lambda cell: PLAIN_COLOURS[cell["colour"]]),
        "small": ("Small road", 1, lambda cell: PLAIN_COLOURS[cell["colour"]]),
        "cockroach": ("Cockroach pig", 1, lambda cell: PLAIN_COLOURS[cell["colour"]]),
    }
    for key, (title, width, plain) in roads.items():
        inside = panel_lines(text, title)
        columns = max(cell["col"] for cell in board[key]) + 1
        note = inside[6].strip()
        assert note.startswith("<"), f"{title}: {columns} columns do not fit 80 characters"
        hidden = int(note.lstrip("< ").split()[0])
        assert 0 < hidden < columns
        for cell in board[key]:
            if cell["col"] >= hidden:
                start = (cell["col"] - hidden) * width
                assert inside[cell["row"]][start : start + width].rstrip() == plain(cell).rstrip()
    assert "r red, b blue" in text and "' Banker pair" in text


def test_roads_on_a_wide_terminal_hide_nothing(
    journal_path: Path, shoectl: ShoectlRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    text = shoectl("roads", str(journal_path), check=True).stdout
    assert "hidden" not in text and "Big road" in text
