"""The JSON form of one round, shared by every command that prints rounds.

`shoectl rules play --json` plays a shoe order through the rules engine and
`shoectl demo --json` reports what the table dealt; both print rounds in this
one shape, so a dealt round can be compared field by field with the rules
engine playing the same cards.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cardshoe.controller.rules.cards import Card
from cardshoe.controller.rules.games import Game
from cardshoe.controller.rules.rounds import DealtCard, Outcome


def round_json(
    game: Game,
    number: int,
    dealt: Sequence[DealtCard],
    player: Sequence[Card],
    banker: Sequence[Card],
    outcome: Outcome | None,
    void: str | None,
) -> dict[str, Any]:
    """A round as plain JSON values; a void round (no outcome) has no totals, winner or flags.

    dealt: the shoe cards in shoe order with their hands; player and banker:
    the hands as they stand (the 7 Up mandatory seven included). The pair and
    sevens marks are the game's (Game.marks): None where it has no such bet.
    """
    record: dict[str, Any] = {
        "round": number,
        "dealt": [{"card": str(card.card), "to": card.to.value} for card in dealt],
        "player": [str(card) for card in player],
        "banker": [str(card) for card in banker],
        "player_total": None,
        "banker_total": None,
        "winner": None,
        "natural": None,
        "player_pair": None,
        "banker_pair": None,
        "sevens": None,
        "void": void,
    }
    if outcome is not None:
        record.update(
            player_total=outcome.player_total,
            banker_total=outcome.banker_total,
            winner=outcome.winner.value,
            natural=outcome.natural,
            **vars(game.marks(outcome)),
        )
    return record
