"""The live alarms at a running table: the real session, driver, journal and simulator."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from structlog.testing import capture_logs
from support.session_support import (
    SIM_DECK_SET,
    journaled,
    procedure_alarms,
    session_on,
    simulated_device,
    table_config,
)

from cardshoe.controller.cli.demo_wiring import continue_from_journal
from cardshoe.controller.config import SurveillanceConfig, TableConfig
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.procedure.facts import (
    AlarmKind,
    CardAssigned,
    RoundVoided,
    ShoeStarted,
)
from cardshoe.controller.procedure.machine import State
from cardshoe.controller.protection.advantage import player_edges
from cardshoe.controller.protection.shoe_records import read_shoes
from cardshoe.controller.protection.watcher import ProtectionWatcher
from cardshoe.controller.rules.cards import Card, Suit
from cardshoe.controller.rules.games import GAME_NAMES, deck_range, get_game
from cardshoe.controller.rules.hands import Hand
from cardshoe.controller.scoreboard.board import TableBoard
from cardshoe.controller.service.recovery import recover
from cardshoe.controller.service.session import TableSession
from cardshoe.firmware_sim.shoe import CardPack

SEVEN = 7


def deal(
    config: TableConfig,
    path: Path,
    order_of=None,
    rounds: int = 30,
    seed: int = 4,
    stop_when: Callable[[TableSession], bool] | None = None,
) -> bool:
    """Deal a shoe of `config` on the simulated shoe, its cards arranged by order_of; True
    when it ended, False when stop_when stopped the session first (the shoe stays open).

    The device is the table's one shoe: it goes on from the journal's last event, and a
    shoe the journal holds open goes on where it stopped, as after a restart.
    """
    core = simulated_device(config, seed=seed)
    if order_of is not None:
        core.shoe = CardPack(order_of(core.shoe.cards), config.shoe.cut_card_depth)
    with Journal.open(path, table_id=config.table_id, create=True) as journal:
        assert continue_from_journal(core, journal, config)
    with session_on(config, core, path) as (session, _):

        def maybe_stop() -> None:
            if stop_when is not None and stop_when(session):
                session.stop()

        ended = session.run_shoe(deck_set=SIM_DECK_SET, rounds=rounds, on_step=maybe_stop)
    return ended is not None


def sevens_last(cards: list) -> list:
    """A 7 Up shoe whose sevens all wait behind the rest: it turns rich in sevens as it goes."""
    rest = [card for card in cards if card.rank != SEVEN]
    random.Random(1).shuffle(rest)
    return rest + [card for card in cards if card.rank == SEVEN]


def alarms_of(path: Path, kind: AlarmKind) -> list[dict]:
    return [r.payload for r in journaled(path, "alarm") if r.payload["kind"] == kind]


def test_a_shoe_rich_in_sevens_raises_the_super_sevens_advantage(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    deal(table_config("seven-up", decks=6), path, sevens_last, rounds=40)
    advantages = [record.payload for record in journaled(path, "advantage")]
    super_sevens = [item for item in advantages if item["bet"] == "super_sevens"]
    assert super_sevens, advantages
    first = super_sevens[0]
    assert first["player_edge"] > 0 and first["cards_left"] < 312
    assert any("super_sevens returns +" in alarm["detail"] for alarm in alarms_of(
        path, AlarmKind.ADVANTAGE))  # fmt: skip
    assert procedure_alarms(path) == []


@pytest.mark.parametrize("name", GAME_NAMES)
def test_a_full_shoe_favours_no_bet(name: str) -> None:
    allowed = deck_range(name)
    for decks in (allowed.fewest, allowed.most):
        edges = player_edges(get_game(name), decks, ())
        assert edges.above(0) == {}
        assert edges.cards_left == 52 * decks


def test_the_first_rounds_of_a_fair_punto_banco_shoe_raise_nothing(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    deal(table_config("punto-banco", decks=8), path, rounds=3)
    assert journaled(path, "advantage") == []
    assert journaled(path, "alarm") == []


def test_the_threshold_is_configurable(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    config = replace(
        table_config("seven-up", decks=6), surveillance=SurveillanceConfig(advantage_threshold=0.5)
    )
    deal(config, path, sevens_last, rounds=40)
    edges = [record.payload["player_edge"] for record in journaled(path, "advantage")]
    assert edges and min(edges) > 0.5


def test_a_carried_over_slug_raises_the_stacked_shoe_alarm_once_across_a_restart(
    tmp_path: Path,
) -> None:
    """Two shoes at one table; the second keeps 12 cards of the first in order."""
    path = tmp_path / "journal.sqlite"
    config = table_config("punto-banco", decks=8)
    deal(config, path, rounds=60, seed=8)
    first = [record.payload["physical_id"] for record in journaled(path, "card.assigned")]
    slug = first[100:112]

    def with_slug(cards: list) -> list:
        kept = [card for card in cards if str(card) in slug]
        kept.sort(key=lambda card: slug.index(str(card)))
        rest = [card for card in cards if str(card) not in slug]
        return rest[:150] + kept + rest[150:]

    def alarmed(session: TableSession) -> bool:
        return any(record.payload["kind"] == "stacked_shoe" for record in
                   session.journal.records(kinds=["alarm"]))  # fmt: skip

    # The controller restarts just after the alarm: the next process must not raise it again.
    assert not deal(config, path, with_slug, rounds=60, seed=9, stop_when=alarmed)
    assert deal(config, path, with_slug, rounds=60, seed=9)
    assert len(journaled(path, "session.started")) == 3
    (alarm,) = alarms_of(path, AlarmKind.STACKED_SHOE)
    assert "in the order of the previous shoe (by physical card)" in alarm["detail"]
    with Journal.open_readonly(path) as journal:
        assert recover(config, journal).mismatches == ()
        board = TableBoard()
        for record in journal.records():
            board.apply(record.kind, record.payload)
    assert board.alarms == []  # a display fed from the journal never shows it
    board.apply("alarm", {"kind": "foreign_card", "detail": "a card of set 7"})
    assert [alarm["kind"] for alarm in board.alarms] == ["foreign_card"]


def test_an_automatic_machine_prices_what_is_out_not_what_went_back_in(
    tmp_path: Path, shoectl
) -> None:
    """A continuous shuffler takes every round's cards back: a one-deck machine deals the same
    card many times in a shoe, and what is left is the pack less the cards out now, not less
    every card dealt (the crash campaign's [auto] run failed on this: a restarted watcher
    refused a shoe it thought held a card seven times)."""
    path = tmp_path / "journal.sqlite"
    dealt = shoectl(
        "demo", "--device", "auto", "--game", "punto-banco", "--decks", "1",
        "--transport", "inproc", "--rounds", "30", "--journal", str(path),
    )  # fmt: skip
    assert dealt.returncode == 0, dealt.stderr
    cards = [record.payload["card"] for record in journaled(path, "card.assigned")]
    assert max(cards.count(card) for card in set(cards)) > 1  # more copies than one deck holds
    with Journal.open_readonly(path) as journal:
        (shoe,) = read_shoes(journal)
    assert shoe.returns and shoe.still_out() == []  # the last round's cards went back in
    after = max(shoe.seen_at_round_end)
    assert shoe.cards_after_round(after) == shoe.still_out(shoe.seen_at_round_end[after])
    priced = shoectl("odds", "--journal", str(path), "--json")
    assert priced.returncode == 0, priced.stderr
    assert json.loads(priced.stdout)["cards_left"] == 52


def test_a_remaining_shoe_the_rules_cannot_price_is_said_once_and_the_watcher_goes_on(
    tmp_path: Path,
) -> None:
    """Five aces of spades out of one deck (a reader's double read the procedure has not
    caught yet): pricing that shoe is a RulesError, which surveillance reports in one
    warning for the shoe, never a traceback per round."""
    config = table_config(decks=1)
    ace = Card(1, Suit.SPADES)
    with Journal.open(tmp_path / "j.sqlite", table_id=config.table_id, create=True) as journal:
        watcher = ProtectionWatcher(config, journal, None)
        watcher.notify(ShoeStarted("S1", config.game.name, 1, "shoe", "f", {}, None))
        for copy in range(5):
            watcher.notify(CardAssigned(1, ace, f"p{copy}", Hand.PLAYER, None))
        with capture_logs() as logs:
            for round_no in (1, 2):
                watcher.notify(RoundVoided(round_no, "misdeal", (ace,)))
                watcher.drain()
        alarms = [record.payload for record in journal.records(kinds=["alarm"])]
    warnings = [entry for entry in logs if entry["event"] == "remaining shoe not priced"]
    assert len(warnings) == 1 and "seen 5 times" in warnings[0]["reason"]
    assert [entry["log_level"] for entry in logs] == ["warning"]
    # The five are also a run of one rank no deck holds: the stacked-shoe test says so.
    assert [alarm["kind"] for alarm in alarms] == [AlarmKind.STACKED_SHOE]
    assert "the decks do not hold such a run" in alarms[0]["detail"]


def test_a_bet_alarmed_before_a_restart_and_still_favoured_does_not_alarm_again(
    tmp_path: Path,
) -> None:
    """The restarted watcher learns which alarmed bets are still favoured from its first
    pricing, in the child, not from a pricing at start-up in the service."""
    path = tmp_path / "journal.sqlite"
    config = table_config("seven-up", decks=6)

    def super_sevens_alarmed(session: TableSession) -> bool:
        """Mid-deal, as a restart that matters finds the table, once the alarm is journaled."""
        if session.state is not State.DEALING:
            return False
        session._watcher.drain()
        return any(record.payload["bet"] == "super_sevens" for record in
                   session.journal.records(kinds=["advantage"]))  # fmt: skip

    def advantages() -> list[tuple[str, int]]:
        return [(r.payload["bet"], r.payload["round_no"]) for r in journaled(path, "advantage")]

    assert not deal(config, path, sevens_last, rounds=60, stop_when=super_sevens_alarmed)
    (before,) = advantages()
    assert before[0] == "super_sevens"
    deal(config, path, sevens_last, rounds=20)  # the sevens still wait at the back
    after = advantages()
    assert len(after) > 1  # the restarted watcher priced and alarmed for others
    assert [item for item in after if item[0] == "super_sevens"] == [before]
