"""Bets, paytables and commission options, as data a casino can replace.

Odds are "x to 1" as exact Fractions: 9 to 5 is Fraction(9, 5), 1 to 2 is
Fraction(1, 2). A commission takes a fraction of the winnings of some bets
when they win with some totals; it is kept apart from the paytable because
the regulator approves the commission option separately (Macau Art. 17, 18).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from fractions import Fraction
from functools import cached_property

from cardshoe.controller.rules.hands import Winner

ALL_TOTALS = frozenset(range(10))


class Bet(Enum):
    PLAYER = "player"
    BANKER = "banker"
    TIE = "tie"
    PLAYER_PAIR = "player_pair"
    BANKER_PAIR = "banker_pair"
    SUPER_SEVENS = "super_sevens"

    # Hashed by identity, as its members compare: Enum's own __hash__ is Python, and every
    # round's net returns are looked up by bet.
    __hash__ = object.__hash__


@dataclass(frozen=True)
class WinOdds:
    """What a winning bet pays, by the total it wins with: `by_total` overrides `default`."""

    default: Fraction
    by_total: Mapping[int, Fraction] = field(default_factory=dict, hash=False)

    def for_total(self, total: int) -> Fraction:
        return self.by_total.get(total, self.default)


@dataclass(frozen=True)
class Paytable:
    """The odds each bet pays; a bet the table does not offer is None or empty."""

    name: str
    player: WinOdds
    banker: WinOdds
    tie: WinOdds
    pair: Fraction | None = None
    super_sevens: Mapping[int, Fraction] = field(default_factory=dict, hash=False)
    """Number of 7s in the round -> odds; any other count loses."""

    @cached_property
    def bets(self) -> tuple[Bet, ...]:
        """Worked out once: every round's result asks which bets the table offers."""
        offered = [Bet.PLAYER, Bet.BANKER, Bet.TIE]
        if self.pair is not None:
            offered += [Bet.PLAYER_PAIR, Bet.BANKER_PAIR]
        if self.super_sevens:
            offered.append(Bet.SUPER_SEVENS)
        return tuple(offered)


@dataclass(frozen=True)
class Commission:
    """The share of a Player or Banker bet's winnings the house keeps.

    It applies when that bet wins, its hand is in `winners`, and the winning
    total is in `totals`.
    """

    name: str
    winners: frozenset[Winner]
    totals: frozenset[int]
    rate: Fraction

    def rate_for(self, winner: Winner, winning_total: int) -> Fraction:
        if winner in self.winners and winning_total in self.totals:
            return self.rate
        return Fraction(0)


EVEN_MONEY = WinOdds(Fraction(1))

PUNTO_BANCO = Paytable(
    name="punto-banco",
    player=EVEN_MONEY,
    banker=EVEN_MONEY,
    tie=WinOdds(Fraction(8)),
    pair=Fraction(11),
)

SEVEN_UP = Paytable(
    name="seven-up-mbs-2011",
    player=WinOdds(Fraction(1), {7: Fraction(1, 2)}),
    banker=WinOdds(Fraction(1), {7: Fraction(9, 5)}),
    tie=WinOdds(Fraction(7), {7: Fraction(9)}),
    super_sevens={
        2: Fraction(2),
        3: Fraction(7),
        4: Fraction(17),
        5: Fraction(77),
        6: Fraction(777),
    },
)

SEVEN_UP_SUPER_SEVENS_2_5_17_70_700 = Paytable(
    name="seven-up-super-sevens-2-5-17-70-700",
    player=SEVEN_UP.player,
    banker=SEVEN_UP.banker,
    tie=SEVEN_UP.tie,
    super_sevens={
        2: Fraction(2),
        3: Fraction(5),
        4: Fraction(17),
        5: Fraction(70),
        6: Fraction(700),
    },
)
"""The other published Super 7's table, for a casino that has it approved."""

MACAU_METHOD_1 = Paytable(
    name="macau-2007-method-1",
    player=EVEN_MONEY,
    banker=EVEN_MONEY,
    tie=WinOdds(Fraction(14)),
    pair=Fraction(11),
)

MACAU_METHOD_2 = Paytable(
    name="macau-2007-method-2",
    player=EVEN_MONEY,
    banker=EVEN_MONEY,
    tie=WinOdds(Fraction(9)),
    pair=Fraction(11),
)

NO_COMMISSION = Commission("none", frozenset(), frozenset(), Fraction(0))

BANKER_5PCT = Commission("5pct", frozenset({Winner.BANKER}), ALL_TOTALS, Fraction(1, 20))
"""Punto Banco: the house keeps 5% of every Banker win (pays 0.95 to 1)."""

BANKER_HALF_ON_6 = Commission(
    "half-on-6", frozenset({Winner.BANKER}), frozenset({6}), Fraction(1, 2)
)
"""Punto Banco no-commission: a Banker win with 6 pays 1 to 2."""

MACAU_5PCT_ON_789 = Commission(
    "5pct-on-789", frozenset({Winner.PLAYER, Winner.BANKER}), frozenset({7, 8, 9}), Fraction(1, 20)
)
"""Macau Art. 17.1: 5% of the winnings when Banker or Player wins with 9, 8 or 7."""

MACAU_HALF_ON_4 = Commission(
    "half-on-4", frozenset({Winner.PLAYER, Winner.BANKER}), frozenset({4}), Fraction(1, 2)
)
"""Macau Art. 17.2: no commission, but a Banker or Player win with 4 pays half."""
