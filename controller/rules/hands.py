"""The two hands of baccarat and how a hand is counted (Macau Art. 5, 7 Up 3.3-3.4)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import Enum


class Hand(Enum):
    """A hand that can receive a card."""

    PLAYER = "player"
    BANKER = "banker"


class Winner(Enum):
    """Who won a round; Player and Banker bets push on a tie in every game here."""

    PLAYER = "player"
    BANKER = "banker"
    TIE = "tie"

    # Hashed by identity, as its members compare: Enum's own __hash__ is Python, and every
    # round's net returns and commission are looked up by winner.
    __hash__ = object.__hash__


NATURAL_TOTALS = frozenset({8, 9})
"""A first-two-card total that decides the round at once in every game here."""


def point_total(values: Iterable[int]) -> int:
    """The right digit of the sum of the card values."""
    return sum(values) % 10


def is_natural(values: Sequence[int]) -> bool:
    """Whether a hand's first two cards make a natural."""
    return point_total(values[:2]) in NATURAL_TOTALS


def winner_of(player_total: int, banker_total: int) -> Winner:
    """The higher total wins and equal totals tie, under every drawing method here."""
    if player_total > banker_total:
        return Winner.PLAYER
    if banker_total > player_total:
        return Winner.BANKER
    return Winner.TIE
