"""Playing consecutive rounds from a known shoe order, as a check of the rules engine.

No card is burned. A round that runs out of cards is void (7 Up 5.5) and
ends the shoe; running out exactly at a round boundary simply ends it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from cardshoe.controller.rules.cards import Card
from cardshoe.controller.rules.games import Game
from cardshoe.controller.rules.rounds import RoundInProgress, VoidReason


@dataclass(frozen=True)
class PlayedRound:
    """A round played from the shoe order: complete, or void with its reason."""

    number: int
    """1-based."""
    round: RoundInProgress
    void: VoidReason | None


def play_shoe_order(game: Game, cards: Sequence[Card]) -> Iterator[PlayedRound]:
    """Deal `cards` in order into as many rounds of `game` as they make."""
    position = 0
    number = 0
    while position < len(cards):
        number += 1
        current = game.new_round()
        while position < len(cards) and not current.is_complete:
            current.deal(cards[position])
            position += 1
        if not current.is_complete:
            yield PlayedRound(number, current, VoidReason.INSUFFICIENT_CARDS)
            return
        yield PlayedRound(number, current, None)
