"""The four game variants, each one configured from data, and get_game() to choose one.

A Game bundles how rounds are dealt with the paytable and the commission
option the table uses; the regulator approves these choices together
(Macau Art. 18), so a Game never changes once built.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache, cached_property

from cardshoe.controller.rules.cards import MANDATORY_SEVEN
from cardshoe.controller.rules.drawing import Dealing, LowerHandDrawsFirst, Tableau
from cardshoe.controller.rules.errors import RulesError
from cardshoe.controller.rules.hands import Hand, Winner
from cardshoe.controller.rules.paytables import (
    BANKER_5PCT,
    BANKER_HALF_ON_6,
    MACAU_5PCT_ON_789,
    MACAU_HALF_ON_4,
    MACAU_METHOD_1,
    MACAU_METHOD_2,
    NO_COMMISSION,
    PUNTO_BANCO,
    SEVEN_UP,
    SEVEN_UP_SUPER_SEVENS_2_5_17_70_700,
    Bet,
    Commission,
    Paytable,
)
from cardshoe.controller.rules.rounds import Outcome, RoundInProgress
from cardshoe.controller.rules.settlement import (
    Rounding,
    Settlement,
    net_return,
    settle,
    what_returns_depend_on,
)
from cardshoe.controller.rules.ties import TieOption

PLAYER_FIRST = (Hand.PLAYER, Hand.BANKER, Hand.PLAYER, Hand.BANKER)
"""Punto Banco and Macau Art. 7.1: alternately, one card at a time, Player first."""

SEVEN_UP_SHOE_ORDER = (Hand.BANKER, Hand.PLAYER, Hand.BANKER)
"""7 Up 3.8: after the mandatory 7, shoe cards 1 and 3 to Banker, card 2 to Player."""


@dataclass(frozen=True)
class DeckRange:
    """How many decks a game may be dealt from, and the rule that says so."""

    fewest: int
    most: int
    source: str

    def __contains__(self, decks: object) -> bool:
        return isinstance(decks, int) and self.fewest <= decks <= self.most


@dataclass(frozen=True)
class Variant:
    """A game's rules as published: decks, dealing, paytables, commission options."""

    decks: DeckRange
    dealing: Dealing
    paytables: tuple[Paytable, ...]
    """The published paytables a casino may have approved; the first is the default."""
    commissions: tuple[Commission, ...]
    """The commission options the rules allow; the first is the default."""
    ties: tuple[TieOption, ...]
    """What the rules let a house do with the Banker and Player bets after a tie (Macau
    Art. 11); the first is the default."""
    drawing_method: str
    """The drawing rule by the name its text gives it (Macau Art. 9 lets a house choose)."""


MACAU_TIES = (TieOption.CANCEL, TieOption.STAND, TieOption.CHANGE)
ONLY_RETURNED = (TieOption.CANCEL,)

VARIANTS: dict[str, Variant] = {
    "punto-banco": Variant(
        DeckRange(1, 8, "customary for Punto Banco"),
        Dealing((), PLAYER_FIRST, Tableau()),
        (PUNTO_BANCO,),
        (BANKER_5PCT, BANKER_HALF_ON_6),
        ONLY_RETURNED,
        "standard tableau",
    ),
    "seven-up": Variant(
        DeckRange(4, 8, "7 Up rules 2.1"),
        Dealing((MANDATORY_SEVEN,), SEVEN_UP_SHOE_ORDER, Tableau()),
        (SEVEN_UP, SEVEN_UP_SUPER_SEVENS_2_5_17_70_700),
        (NO_COMMISSION,),
        ONLY_RETURNED,
        "7 Up 3.9 tableau",
    ),
    "macau-1": Variant(
        DeckRange(6, 12, "Macau Art. 1"),
        Dealing((), PLAYER_FIRST, LowerHandDrawsFirst(other_draws_when_equal=True)),
        (MACAU_METHOD_1,),
        (MACAU_5PCT_ON_789, MACAU_HALF_ON_4),
        MACAU_TIES,
        "Macau Art. 9 method 1",
    ),
    "macau-2": Variant(
        DeckRange(6, 12, "Macau Art. 1"),
        Dealing((), PLAYER_FIRST, LowerHandDrawsFirst(other_draws_when_equal=False)),
        (MACAU_METHOD_2,),
        (MACAU_5PCT_ON_789, MACAU_HALF_ON_4),
        MACAU_TIES,
        "Macau Art. 9 method 2",
    ),
}

GAME_NAMES: tuple[str, ...] = tuple(VARIANTS)


@dataclass(frozen=True)
class OutcomeMarks:
    """What a round's result shows beside its winner and totals, for the bets a game has."""

    player_pair: bool | None
    banker_pair: bool | None
    sevens: int | None


@dataclass(frozen=True)
class Game:
    """One game as a table runs it: its dealing, paytable and chosen commission option."""

    name: str
    dealing: Dealing
    paytable: Paytable
    commission: Commission
    rounding: Rounding = Rounding.FLOOR
    """How a win's winnings are rounded to the minor unit (settlement.Rounding)."""
    _net_returns: dict[tuple[Winner, int, OutcomeMarks], dict[str, Fraction]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _bet_returns: dict[tuple[Bet, Hashable], Fraction] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _marks: dict[tuple[bool | None, bool | None, int | None], OutcomeMarks] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    """One OutcomeMarks for each marks a round can show (a few dozen at most), shared."""
    _settled: dict[Outcome, tuple[OutcomeMarks, dict[str, Fraction]]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    """Each outcome seen, with its marks and net returns: a round's result needs both, and
    outcomes are few (rounds.py keeps one object for each)."""

    @property
    def bets(self) -> tuple[Bet, ...]:
        return self.paytable.bets

    def marks(self, outcome: Outcome) -> OutcomeMarks:
        """The outcome's side marks this game has a bet on; None where it has none.

        A 7 Up Player hand of the mandatory 7 and a shoe 7 is two cards of one
        rank, but 7 Up has no pair bet: calling it a "player pair" would show a
        result nobody can have bet on. Likewise only 7 Up counts its sevens.
        An OutcomeMarks never changes: one is kept for each marks and shared.
        """
        bets = self.paytable.bets
        marks = (
            outcome.player_pair if Bet.PLAYER_PAIR in bets else None,
            outcome.banker_pair if Bet.BANKER_PAIR in bets else None,
            outcome.sevens if Bet.SUPER_SEVENS in bets else None,
        )
        known = self._marks.get(marks)
        if known is None:
            known = self._marks[marks] = OutcomeMarks(*marks)
        return known

    @cached_property
    def _bet_names(self) -> tuple[tuple[Bet, str], ...]:
        """Each offered bet with its name, looked up once: Enum's value is a slow property."""
        return tuple((bet, bet.value) for bet in self.bets)

    def new_round(self) -> RoundInProgress:
        return RoundInProgress(self.dealing)

    def net_return(self, bet: Bet, outcome: Outcome) -> Fraction:
        """Exact gain per unit staked: -1 loss, 0 push, else the odds after commission."""
        return net_return(self.paytable, self.commission, bet, outcome)

    def net_returns(self, outcome: Outcome) -> dict[str, Fraction]:
        """Every offered bet's exact gain per unit staked on this outcome, by bet name.

        Worked out once per winner, winning total and marks (the part of an
        outcome any bet is settled on: settlement.what_returns_depend_on), not
        once per outcome: every round's result carries it, and in Punto Banco,
        where naturals and sevens settle nothing, outcomes that differ only in
        them were a quarter of the first twenty shoes' rounds, each working its
        returns out again on the card that completes the round. Each caller
        gets its own dict (settled keeps it beside the outcome's marks).
        """
        return self.settled(outcome)[1]

    def settled(self, outcome: Outcome) -> tuple[OutcomeMarks, dict[str, Fraction]]:
        """marks and net_returns of the outcome, in one lookup once it has been seen: the
        card that completes a round asks for both."""
        known = self._settled.get(outcome)
        if known is None:
            marks = self.marks(outcome)
            key = (outcome.winner, outcome.winning_total, marks)
            returns = self._net_returns.get(key)
            if returns is None:
                returns = self._net_returns[key] = self._returns_of(outcome)
            known = self._settled[outcome] = (marks, returns)
        return known[0], dict(known[1])

    def _returns_of(self, outcome: Outcome) -> dict[str, Fraction]:
        """net_return of every bet, each kept by the bet and what_returns_depend_on: an
        outcome not seen before (a quarter of the rounds of the first twenty shoes) is then
        a few lookups, not the Fraction arithmetic of every bet, which tripled the time of
        its round's last card."""
        returns, kept = {}, self._bet_returns
        for bet, name in self._bet_names:
            key = (bet, what_returns_depend_on(bet, outcome))
            known = kept.get(key)
            if known is None:
                known = kept[key] = self.net_return(bet, outcome)
            returns[name] = known
        return returns

    def settle(self, outcome: Outcome, bet: Bet, stake: int) -> Settlement:
        """Settle a stake in integer minor units; winnings are rounded by self.rounding."""
        return settle(self.paytable, self.commission, outcome, bet, stake, self.rounding)


def commission_names(game_name: str) -> tuple[str, ...]:
    """The commission options a game allows, the default first."""
    return tuple(option.name for option in _variant(game_name).commissions)


@cache
def get_game(
    name: str,
    commission: str | None = None,
    paytable: Paytable | None = None,
    rounding: Rounding = Rounding.FLOOR,
) -> Game:
    """The game `name` with a commission option (default: the rules' first), paytable and
    rounding of winnings.

    One Game per choice, shared by every table model of the process (a Game
    never changes), so each outcome's net returns are worked out once.
    """
    variant = _variant(name)
    options = {option.name: option for option in variant.commissions}
    chosen = variant.commissions[0] if commission is None else options.get(commission)
    if chosen is None:
        raise RulesError(
            f"unknown commission option {commission!r} for {name}: choose one of "
            + ", ".join(options)
        )
    return Game(name, variant.dealing, paytable or variant.paytables[0], chosen, rounding)


def deck_range(game_name: str) -> DeckRange:
    """The decks a game allows: the one source for the configuration, odds and the demo."""
    return _variant(game_name).decks


def check_decks(game_name: str, decks: int, key: str) -> None:
    """Refuse a deck count the game does not allow; key names the option as the user wrote it."""
    allowed = deck_range(game_name)
    if decks not in allowed:
        raise RulesError(
            f"{key} = {decks} is out of range: use {allowed.fewest}-{allowed.most} "
            f"({game_name}, {allowed.source})"
        )


def tie_options(game_name: str) -> tuple[str, ...]:
    """What a game lets a house do with the bets after a tie (Art. 11), the default first."""
    return tuple(str(option) for option in _variant(game_name).ties)


def drawing_method(game_name: str) -> str:
    return _variant(game_name).drawing_method


def paytable_names(game_name: str) -> tuple[str, ...]:
    """The names of the paytables published for a game; the first is the default."""
    return tuple(table.name for table in _variant(game_name).paytables)


def paytable_named(game_name: str, name: str | None) -> Paytable:
    """A game's published paytable by name (None: the default), for configuration and odds."""
    published = _variant(game_name).paytables
    if name is None:
        return published[0]
    tables = {table.name: table for table in published}
    if name not in tables:
        raise RulesError(
            f"unknown paytable {name!r} for {game_name}: choose one of " + ", ".join(tables)
        )
    return tables[name]


def _variant(name: str) -> Variant:
    variant = VARIANTS.get(name)
    if variant is None:
        raise RulesError(f"unknown game {name!r}: choose one of " + ", ".join(GAME_NAMES))
    return variant
