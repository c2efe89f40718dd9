"""shoectl web over HTTP: /board.json, /events and their ids, and its one-line errors.

The journal is a real SQLite file written by a real table session on the
simulated shoe; the service is the real CLI in a child process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.shoectl import ShoectlRunner
from support.web_support import WebService, apply_delta

from cardshoe.controller.journal.store import Journal

EXTRA_WEB_KEYS = ("options", "record_id")
"""Fields /board.json adds to the `shoectl roads --json` object."""


def deal(path: Path, *, seed: int, rounds: int | None = None) -> None:
    """A one-deck shoe dealt into the journal by `shoectl demo` (a rerun goes on from the
    journal, as the table's service does)."""
    command = [sys.executable, "-m", "cardshoe.controller.cli", "demo", "--json"]
    command += ["--journal", str(path), "--seed", str(seed), "--decks", "1"]
    if rounds is not None:
        command += ["--rounds", str(rounds)]
    subprocess.run(command, check=True, capture_output=True, timeout=120)


def record_ids(path: Path) -> list[int]:
    with Journal.open_readonly(path) as journal:
        return [record.id for record in journal.records()]


@pytest.fixture(scope="module")
def dealt_journal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("web") / "journal.sqlite"
    deal(path, rounds=3, seed=2)
    deal(path, seed=4)
    return path


def test_board_json_is_the_roads_object_of_the_latest_shoe(
    dealt_journal: Path, shoectl: ShoectlRunner
) -> None:
    roads = json.loads(shoectl("roads", str(dealt_journal), "--json", check=True).stdout)
    with WebService(dealt_journal) as web:
        board = web.board()
    assert board["record_id"] == record_ids(dealt_journal)[-1]
    assert {key: value for key, value in board.items() if key not in EXTRA_WEB_KEYS} == roads
    assert board["rounds"] == len(board["bead"]) > 3


def test_a_new_page_gets_the_board_as_of_the_latest_record(dealt_journal: Path) -> None:
    with WebService(dealt_journal) as web:
        (snapshot,) = web.events(1)
        board = web.board()
    assert snapshot["id"] == str(record_ids(dealt_journal)[-1])
    assert snapshot["data"]["kind"] == "snapshot"
    assert snapshot["data"]["board"] == board


def test_a_returning_page_gets_every_record_after_its_last_id_once(dealt_journal: Path) -> None:
    ids = record_ids(dealt_journal)
    resume_after = ids[-40]
    with WebService(dealt_journal) as web:
        header = web.events(39, last_event_id=str(resume_after))
        query = web.events(39, query=f"?after={resume_after}")
        board = web.board()
    for events in (header, query):
        assert [int(event["id"]) for event in events] == ids[-39:]
        assert [event["data"]["id"] for event in events] == ids[-39:]
        assert all(event["data"]["board"] is None for event in events[:-1])
        assert events[-1]["data"]["board"] == board


def test_a_page_left_behind_by_a_new_shoe_resumes_from_that_shoes_start(
    dealt_journal: Path,
) -> None:
    with Journal.open_readonly(dealt_journal) as journal:
        starts = [record.id for record in journal.records(kinds=["shoe.started"])]
    ids = record_ids(dealt_journal)
    with WebService(dealt_journal) as web:
        events = web.events(len(ids) - starts[1] + 1, last_event_id="3")
    assert [int(event["id"]) for event in events] == [i for i in ids if i >= starts[1]]
    assert events[0]["data"]["kind"] == "shoe.started"


def test_records_appended_while_a_page_watches_reach_it_in_order(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    deal(path, rounds=2, seed=5)
    before = record_ids(path)[-1]
    with WebService(path) as web:
        deal(path, rounds=2, seed=6)
        with Journal.open_readonly(path) as journal:
            start = [record.id for record in journal.records(kinds=["shoe.started"])][-1]
        expected = [record_id for record_id in record_ids(path) if record_id >= start]
        events = web.events(len(expected), last_event_id=str(before))
        board = web.board()
    assert [int(event["id"]) for event in events] == expected
    assert events[-1]["data"]["board"] == board
    assert board["rounds"] == 2


def test_a_watching_page_gets_the_board_once_then_only_what_changed(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    deal(path, rounds=2, seed=5)
    with WebService(path) as web:
        stream = web.event_stream()
        try:
            snapshot = next(stream)
            deal(path, rounds=3, seed=6)
            last_id = record_ids(path)[-1]
            board, events = snapshot["data"]["board"], []
            while board["record_id"] < last_id:
                event = next(stream)
                events.append(event)
                assert event["data"]["board"] is None
                change = event["data"].get("change")
                if change is not None:
                    assert change["base"] == board["record_id"]
                    board = apply_delta(board, change["delta"])
        finally:
            stream.close()
        assert board == web.board()
    assert [int(event["id"]) for event in events] == [
        record_id for record_id in record_ids(path) if record_id > snapshot["data"]["id"]
    ]
    assert board["rounds"] == 3 and snapshot["data"]["board"]["rounds"] == 2
    whole = len(json.dumps(board))
    assert all(len(json.dumps(event["data"])) < whole for event in events)


def test_the_page_and_its_script_are_served(dealt_journal: Path) -> None:
    from urllib.request import urlopen

    with WebService(dealt_journal) as web:
        with urlopen(web.url, timeout=10) as response:
            page = response.read().decode("utf-8")
        with urlopen(web.url + "board.js", timeout=10) as response:
            script = response.read().decode("utf-8")
    assert "大路" in page and "/board.js" in page
    assert "EventSource" in script


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--listen", "nonsense"], "--listen 'nonsense' is not HOST:PORT"),
        (["--listen", "localhost:8080"], "does not start with an IP address"),
        (["--listen", "127.0.0.1:99999"], "is not HOST:PORT"),
    ],
)
def test_a_bad_listen_address_is_one_line(
    dealt_journal: Path, shoectl: ShoectlRunner, arguments: list[str], message: str
) -> None:
    result = shoectl("web", "--journal", str(dealt_journal), *arguments)
    assert result.returncode == 2
    assert result.stderr.startswith("shoectl: error: ") and message in result.stderr
    assert result.stderr.count("\n") == 1


def test_a_missing_journal_or_a_taken_port_is_one_line(
    dealt_journal: Path, tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    missing = shoectl("web", "--journal", str(tmp_path / "nope.sqlite"), "--listen", "127.0.0.1:0")
    assert missing.returncode == 2
    assert "no such journal file" in missing.stderr and missing.stderr.count("\n") == 1
    with WebService(dealt_journal) as web:
        taken = shoectl("web", "--journal", str(dealt_journal), "--listen", f"127.0.0.1:{web.port}")
    assert taken.returncode == 2
    assert "cannot listen there" in taken.stderr and taken.stderr.count("\n") == 1
    nothing = shoectl("web")
    assert nothing.returncode == 2 and "give --journal PATH" in nothing.stderr


def test_the_options_show_while_the_shoes_fingerprint_matches_the_config(
    dealt_journal: Path, tmp_path: Path
) -> None:
    """The journal holds the fingerprint only: the config that hashes to it names the options."""
    same = tmp_path / "same.toml"
    same.write_text("[game]\ndecks = 1\n")
    other = tmp_path / "other.toml"
    other.write_text("[game]\ndecks = 2\n")
    with WebService(dealt_journal, "--config", str(same)) as web:
        matching = web.board()
    with WebService(dealt_journal, "--config", str(other)) as web:
        differing = web.board()
    assert matching["options"]["game"] == "punto-banco"
    assert matching["options"]["decks"] == 1 and "commission" in matching["options"]
    assert differing["options"] is None
    assert differing["table"]["fingerprint"] == matching["table"]["fingerprint"]
