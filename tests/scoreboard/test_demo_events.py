"""The demo's JSON stream: live events and their journal records give the same lines, and a
stream caught up on a shoe's first records prints exactly what follows them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.session_support import SIM_DECK_SET, session_on, simulated_device, table_config

from cardshoe.controller.journal.records import Record
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.scoreboard.demo_events import DemoEventStream

CONFIG = table_config("seven-up", decks=4)


@pytest.fixture(scope="module")
def shoe(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict[str, Any]], list[Record]]:
    """A few rounds with a void among them: the live lines and the journal's records."""
    path = Path(tmp_path_factory.mktemp("demo-events")) / "journal.sqlite"
    core = simulated_device(CONFIG, seed=9, inject=("double-feed@round=2",))
    live: list[dict[str, Any]] = []
    with session_on(CONFIG, core, path) as (session, _):
        session.subscribe(DemoEventStream(CONFIG.game.build_game(), live.append))
        session.run_shoe(deck_set=SIM_DECK_SET, rounds=4)
    with Journal.open_readonly(path) as journal:
        return live, list(journal.records())


def replayed(records: list[Record]) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = []
    stream = DemoEventStream(CONFIG.game.build_game(), lines.append)
    for record in records:
        stream.take(record.kind, record.payload)
    return lines


def test_the_journal_records_print_what_the_live_events_printed(
    shoe: tuple[list[dict[str, Any]], list[Record]],
) -> None:
    live, records = shoe
    assert [line["event"] for line in live].count("round") == 4
    assert {line["void"] for line in live if line["event"] == "round"} == {None, "double_feed"}
    assert replayed(records) == live


def test_a_stream_caught_up_mid_round_prints_the_rest_of_the_shoe(
    shoe: tuple[list[dict[str, Any]], list[Record]],
) -> None:
    _, records = shoe
    cards = [i for i, r in enumerate(records) if r.kind == "card.assigned" and r.round_no == 3]
    cut = cards[2]
    before = replayed(records[:cut])
    lines: list[dict[str, Any]] = []
    stream = DemoEventStream(CONFIG.game.build_game(), lines.append)
    stream.catch_up(records[:cut])
    for record in records[cut:]:
        stream.take(record.kind, record.payload)
    assert lines == replayed(records)[len(before) :]
    (third,) = [line for line in lines if line["event"] == "round" and line["round"] == 3]
    assert len(third["dealt"]) >= 4 and third["player"][0] == "7*"
