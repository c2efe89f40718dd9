"""The shoe's statistics a scoreboard shows beside its roads, as a pure function over results.

Counts of Banker, Player and Tie wins, of Player pairs, Banker pairs and
naturals, over the settled rounds of the shoe so far (the same rounds the
roads show). A 7 Up table offers the Super 7's bet instead of pairs, so its
board counts the rounds that bet won: those with a number of 7s the
paytable pays.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from cardshoe.controller.rules.games import GAME_NAMES, get_game
from cardshoe.controller.rules.hands import Winner
from cardshoe.controller.scoreboard.roads import RoadResult


@dataclass(frozen=True)
class ShoeStats:
    banker: int
    player: int
    tie: int
    player_pair: int
    banker_pair: int
    natural: int
    super_sevens: int | None
    """Rounds the Super 7's bet won; None at a table that does not offer it."""

    def plus(self, other: ShoeStats) -> ShoeStats:
        """The statistics of both runs of rounds together (a board's earlier rounds and its
        listed ones)."""
        sevens = (
            None
            if self.super_sevens is None and other.super_sevens is None
            else (self.super_sevens or 0) + (other.super_sevens or 0)
        )
        return ShoeStats(
            banker=self.banker + other.banker,
            player=self.player + other.player,
            tie=self.tie + other.tie,
            player_pair=self.player_pair + other.player_pair,
            banker_pair=self.banker_pair + other.banker_pair,
            natural=self.natural + other.natural,
            super_sevens=sevens,
        )


NO_ROUNDS = ShoeStats(0, 0, 0, 0, 0, 0, None)
"""The statistics of no round at all."""


def shoe_stats(
    results: Sequence[RoadResult], super_seven_counts: Collection[int] = ()
) -> ShoeStats:
    """The statistics of these results; super_seven_counts: the 7s counts the Super 7's bet
    pays (the paytable's), empty where the game has no such bet."""
    winners = [result.winner for result in results]
    return ShoeStats(
        banker=winners.count(Winner.BANKER),
        player=winners.count(Winner.PLAYER),
        tie=winners.count(Winner.TIE),
        player_pair=sum(result.player_pair for result in results),
        banker_pair=sum(result.banker_pair for result in results),
        natural=sum(result.natural for result in results),
        super_sevens=(
            sum(result.sevens in super_seven_counts for result in results)
            if super_seven_counts
            else None
        ),
    )


def super_seven_counts(game: str | None) -> frozenset[int]:
    """The 7s counts the game's Super 7's bet pays; empty for a game without it (or unknown)."""
    if game not in GAME_NAMES:
        return frozenset()
    return frozenset(get_game(game).paytable.super_sevens)
