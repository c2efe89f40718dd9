"""Issue 12's rule defects seen through the real `shoectl demo`: a whole shoe each."""

from __future__ import annotations

import pytest
from support.demo_lines import demo_json, of, only
from support.shoectl import ShoectlRunner

from cardshoe.controller.rules.games import GAME_NAMES


@pytest.mark.parametrize("device", ["shoe", "auto"])
@pytest.mark.parametrize("game", GAME_NAMES)
def test_case_1_a_duplicate_card_voids_only_its_round_and_the_shoe_reconciles(
    shoectl: ShoectlRunner, game: str, device: str
) -> None:
    """It used to void round 7 and, for the genuine card's last copy, round 84 as
    excess_copies, and the shoe counted 2 intruders where there was 1."""
    lines = demo_json(
        shoectl,
        "--game",
        game,
        "--decks",
        "8",
        "--device",
        device,
        "--seed",
        "32",
        "--inject",
        "duplicate-card@round=7",
        "--transport",
        "inproc",
    )
    voids = {line["round"]: line["void"] for line in of(lines, "round") if line["void"]}
    assert voids == {7: "duplicate_card"}
    ended = only(lines, "shoe_ended")
    assert ended["reconciled"] and ended["intruders"] == 1
