"""Art. 10 corrections seen through the real `shoectl demo`: a whole shoe each, every game and
both kinds of device, with the simulator's misread-card, unreadable-card and
double-feed-in-order faults. Each round is corrected, none voided, and the shoe reconciles."""

from __future__ import annotations

import pytest
from support.demo_lines import Lines, demo_json, of, only
from support.shoectl import ShoectlRunner

from cardshoe.controller.rules.games import GAME_NAMES


def demo(shoectl: ShoectlRunner, game: str, device: str, inject: str) -> Lines:
    return demo_json(
        shoectl,
        "--game",
        game,
        "--decks",
        "8",
        "--device",
        device,
        "--seed",
        "11",
        "--inject",
        inject,
        "--transport",
        "inproc",
    )


def assert_reconciled_without_a_void(lines: Lines) -> None:
    assert [line["round"] for line in of(lines, "round") if line["void"]] == []
    ended = only(lines, "shoe_ended")
    assert ended["reconciled"] and ended["intruders"] == 0
    assert ended["dealt"] + ended["burned"] == ended["device_cards_dealt"]


@pytest.mark.parametrize("device", ["shoe", "auto"])
@pytest.mark.parametrize("game", GAME_NAMES)
def test_a_misread_card_is_re_read_into_its_hand(
    shoectl: ShoectlRunner, game: str, device: str
) -> None:
    lines = demo(shoectl, game, device, "misread-card@round=3")
    (hold,) = of(lines, "hold")
    assert (hold["reason"], hold["held_state"]) == ("misread_card", "dealing")
    (corrected,) = of(lines, "correction")
    assert (corrected["round"], corrected["correction"], corrected["by"]) == (3, "reread", None)
    (round_3,) = [line for line in of(lines, "round") if line["round"] == 3]
    assert {"card": corrected["card"], "to": corrected["to"]} in round_3["dealt"]
    assert round_3["winner"] is not None
    assert_reconciled_without_a_void(lines)


@pytest.mark.parametrize("device", ["shoe", "auto"])
def test_a_card_that_never_reads_is_entered_by_the_supervisor(
    shoectl: ShoectlRunner, device: str
) -> None:
    lines = demo(shoectl, "macau-1", device, "unreadable-card@round=2")
    (corrected,) = of(lines, "correction")
    assert (corrected["round"], corrected["correction"]) == (2, "entered")
    assert corrected["physical_id"] == "entered"
    assert corrected["by"]["role"] == "supervisor"
    assert_reconciled_without_a_void(lines)


@pytest.mark.parametrize("device", ["shoe", "auto"])
@pytest.mark.parametrize("game", GAME_NAMES)
def test_a_double_feed_read_in_order_is_corrected_not_voided(
    shoectl: ShoectlRunner, game: str, device: str
) -> None:
    lines = demo(shoectl, game, device, "double-feed-in-order@round=3")
    found = [(line["code"], line["round"]) for line in of(lines, "irregularity")]
    assert found == [("double_feed_in_order", 3)] * 2
    (round_3,) = [line for line in of(lines, "round") if line["round"] == 3]
    assert round_3["winner"] is not None
    assert_reconciled_without_a_void(lines)
