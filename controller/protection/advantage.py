"""Which bets of a remaining shoe favour the player: the advantage alert's decision.

A card counter beats a side bet (Super 7's, the pairs, the tie) when the
cards left turn rich in what it needs. The exact price of the remaining
shoe (rules/odds.py, a few milliseconds) tells surveillance when that has
happened, with no sampling and no counting system to trust.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

from cardshoe.controller.rules.cards import Card, ShoeComposition
from cardshoe.controller.rules.games import Game
from cardshoe.controller.rules.odds import price_shoe
from cardshoe.controller.rules.paytables import Bet


@dataclass(frozen=True)
class ShoeEdges:
    """Each bet's expected return to the player per unit staked on the shoe left."""

    edges: dict[Bet, Fraction]
    cards_left: int

    def above(self, threshold: float) -> dict[Bet, Fraction]:
        return {bet: edge for bet, edge in self.edges.items() if edge > threshold}


def player_edges(game: Game, decks: int, seen: Iterable[Card]) -> ShoeEdges:
    """Every bet priced for the shoe left once `seen` is out (no bet when a round may not fit).

    An unreadable card is simply not in `seen`: it stays counted in the shoe, as
    nobody knows which card it was.
    """
    left = ShoeComposition(decks).remaining(seen)
    cards_left = sum(left.values())
    if cards_left < game.dealing.max_shoe_cards:
        return ShoeEdges({}, cards_left)
    report = price_shoe(game, decks, left)
    return ShoeEdges({bet: -odds.house_edge for bet, odds in report.bets.items()}, cards_left)
