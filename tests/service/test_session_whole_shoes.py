"""Whole shoes of every game on both device kinds: controller + driver + simulator over a pty."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.session_support import (
    SIM_DECK_SET,
    assert_every_event_journaled_once,
    journaled,
    rounds_as_the_rules_engine_plays_them,
    session_on,
    simulated_device,
    table_config,
)

from cardshoe.controller.procedure.facts import RoundResult, RoundVoided
from cardshoe.controller.rules.games import GAME_NAMES

FEWEST_DECKS = {"punto-banco": 2, "seven-up": 4, "macau-1": 6, "macau-2": 6}
AUTOMATIC_ROUNDS = 12


@pytest.mark.parametrize("game", GAME_NAMES)
def test_a_whole_manual_shoe_over_a_pty(tmp_path: Path, game: str) -> None:
    config = table_config(game, decks=FEWEST_DECKS[game])
    core = simulated_device(config, seed=len(game))
    path = tmp_path / "journal.sqlite"
    with session_on(config, core, path, over_pty=True) as (session, dealer):
        ended = session.run_shoe(deck_set=SIM_DECK_SET)
    assert ended is not None and ended.reconciled
    assert ended.dealt + ended.burned == ended.device_cards_dealt
    assert ended.dealt + ended.burned >= 52 * config.game.decks - config.shoe.cut_card_depth
    results = [event for event in dealer.seen if isinstance(event, RoundResult)]
    assert len(results) == ended.rounds > 5
    assert not [event for event in dealer.seen if isinstance(event, RoundVoided)]
    rounds_as_the_rules_engine_plays_them(path, config)
    assert_every_event_journaled_once(path)
    assert len(journaled(path, "shoe.last_round")) == 1


@pytest.mark.parametrize("game", GAME_NAMES)
def test_a_whole_automatic_shoe_over_a_pty(tmp_path: Path, game: str) -> None:
    config = table_config(game, decks=FEWEST_DECKS[game], automatic=True)
    core = simulated_device(config, seed=len(game))
    path = tmp_path / "journal.sqlite"
    with session_on(config, core, path, over_pty=True) as (session, dealer):
        ended = session.run_shoe(deck_set=SIM_DECK_SET, rounds=AUTOMATIC_ROUNDS, betting_time_s=0)
    assert ended is not None and ended.reconciled
    assert ended.loaded == 52 * config.game.decks == ended.remaining
    assert ended.returned == ended.dealt and ended.burned == 0
    results = [event for event in dealer.seen if isinstance(event, RoundResult)]
    assert len(results) == AUTOMATIC_ROUNDS
    returns = journaled(path, "round.cards_returned")
    assert [r.payload["expected"] for r in returns] == [r.payload["counted"] for r in returns]
    rounds_as_the_rules_engine_plays_them(path, config)
    assert_every_event_journaled_once(path)
