"""Issue 12's rule defects seen through the real `shoectl demo`: a whole shoe each."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.demo_lines import demo_json, of, only
from support.shoectl import ShoectlRunner

from cardshoe.controller.rules.games import GAME_NAMES, deck_range


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


@pytest.mark.parametrize("game", GAME_NAMES)
def test_case_3_odds_config_and_demo_refuse_the_same_deck_counts(
    shoectl: ShoectlRunner, game: str, tmp_path: Path
) -> None:
    """`shoectl odds` used to accept Macau 1-5 and 13 and 7 Up 1-3 and 9-13 (exit 0)."""
    allowed = deck_range(game)
    for decks in (allowed.fewest - 1, allowed.most + 1):
        if decks < 1:
            continue
        config = tmp_path / f"{game}-{decks}.toml"
        config.write_text(f'[game]\nname = "{game}"\ndecks = {decks}\n')
        for command in (
            ("odds", "--game", game, "--decks", str(decks)),
            ("demo", "--game", game, "--decks", str(decks), "--transport", "inproc"),
            ("demo", "--config", str(config), "--transport", "inproc"),
        ):
            done = shoectl(*command)
            assert done.returncode == 2, (command, done.stdout)
            (line,) = done.stderr.splitlines()
            expected = f"use {allowed.fewest}-{allowed.most} ({game}, {allowed.source})"
            assert line.startswith("shoectl: error: ") and expected in line
    done = shoectl("odds", "--game", game, "--decks", str(allowed.fewest), "--json")
    assert done.returncode == 0, done.stderr
