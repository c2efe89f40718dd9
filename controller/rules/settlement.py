"""Settling a bet on an outcome, in exact money.

Stakes are integers in the currency's minor unit (cents, avos). A winning
bet's winnings are computed exactly as a Fraction, stake x odds, less the
commission (that amount x the commission rate), and then rounded to the
minor unit by the table's Rounding: by default DOWN, the house keeping the
fraction. Neither rule text says how (Macau Art. 17 and 7 Up give rates, not
rounding), so it is an approved option like the others (Art. 18). The stake
itself is always returned whole on a win or a push.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass
from enum import Enum, StrEnum
from fractions import Fraction

from cardshoe.controller.rules.errors import RulesError
from cardshoe.controller.rules.hands import Winner
from cardshoe.controller.rules.paytables import Bet, Commission, Paytable
from cardshoe.controller.rules.rounds import Outcome

HAND_BETS = frozenset({Bet.PLAYER, Bet.BANKER})
PUSH_RETURN = Fraction(0)
LOSS_RETURN = Fraction(-1)


class Rounding(StrEnum):
    """How a win's exact winnings become whole minor units; the first is the default."""

    FLOOR = "floor"
    """Down to the minor unit: the house keeps the fraction."""
    HALF_UP = "half-up"
    """To the nearest minor unit, a half up: 12.5 pays 13."""


def to_minor_units(exact: Fraction, rounding: Rounding) -> int:
    """Exact winnings as the whole minor units paid."""
    if rounding is Rounding.HALF_UP:
        return math.floor(exact + Fraction(1, 2))
    return math.floor(exact)


class BetResult(Enum):
    WIN = "win"
    PUSH = "push"
    LOSS = "loss"


@dataclass(frozen=True)
class Settlement:
    """How one bet ended, in minor units."""

    bet: Bet
    stake: int
    result: BetResult
    winnings: int
    """Paid on top of the returned stake: exact_winnings rounded (down by default)."""
    exact_winnings: Fraction
    """Stake x odds less commission, before rounding."""
    commission: Fraction
    """What the commission option took from stake x odds, exactly."""

    @property
    def returned(self) -> int:
        """What the player gets back in total: stake and winnings, the stake alone, or nothing."""
        if self.result is BetResult.LOSS:
            return 0
        return self.stake + self.winnings

    @property
    def net(self) -> int:
        """The player's gain (negative for a loss)."""
        return self.returned - self.stake


def is_push(bet: Bet, outcome: Outcome) -> bool:
    """Player and Banker bets neither win nor lose on a tie."""
    return bet in HAND_BETS and outcome.winner is Winner.TIE


def gross_odds(paytable: Paytable, bet: Bet, outcome: Outcome) -> Fraction | None:
    """Odds the bet pays on this outcome before commission, or None when it does not win."""
    winner = outcome.winner
    match bet:
        case Bet.PLAYER | Bet.BANKER:
            if winner.value != bet.value:
                return None
            win_odds = paytable.player if bet is Bet.PLAYER else paytable.banker
            return win_odds.for_total(outcome.winning_total)
        case Bet.TIE:
            return paytable.tie.for_total(outcome.winning_total) if winner is Winner.TIE else None
        case Bet.PLAYER_PAIR:
            return paytable.pair if outcome.player_pair else None
        case Bet.BANKER_PAIR:
            return paytable.pair if outcome.banker_pair else None
        case Bet.SUPER_SEVENS:
            return paytable.super_sevens.get(outcome.sevens)


def commission_rate(commission: Commission, bet: Bet, outcome: Outcome) -> Fraction:
    """The share of this bet's winnings the house keeps (Player and Banker bets only)."""
    if bet not in HAND_BETS:
        return Fraction(0)
    return commission.rate_for(outcome.winner, outcome.winning_total)


def what_returns_depend_on(bet: Bet, outcome: Outcome) -> Hashable:
    """The part of an outcome a bet's net return is worked out from: is_push, gross_odds and
    commission_rate read nothing else of it, so outcomes that agree on it return the same.

    A hand or tie bet reads the winner and the winning total, a pair bet its hand's pair,
    Super 7's the sevens: a few dozen answers in all, where outcomes number thousands.
    """
    match bet:
        case Bet.PLAYER | Bet.BANKER | Bet.TIE:
            return outcome.winner, outcome.winning_total
        case Bet.PLAYER_PAIR:
            return outcome.player_pair
        case Bet.BANKER_PAIR:
            return outcome.banker_pair
        case Bet.SUPER_SEVENS:
            return outcome.sevens


def net_return(paytable: Paytable, commission: Commission, bet: Bet, outcome: Outcome) -> Fraction:
    """The player's exact gain per unit staked: -1 loss, 0 push, else the odds after commission."""
    if is_push(bet, outcome):
        return PUSH_RETURN
    odds = gross_odds(paytable, bet, outcome)
    if odds is None:
        return LOSS_RETURN
    rate = commission_rate(commission, bet, outcome)
    # Fraction arithmetic is slow Python: with no commission the odds are the answer.
    return odds * (1 - rate) if rate else odds


def settle(
    paytable: Paytable,
    commission: Commission,
    outcome: Outcome,
    bet: Bet,
    stake: int,
    rounding: Rounding = Rounding.FLOOR,
) -> Settlement:
    """Settle `stake` minor units on `bet`; see the module docstring for the rounding."""
    if bet not in paytable.bets:
        offered = ", ".join(offered_bet.value for offered_bet in paytable.bets)
        raise RulesError(f"bet {bet.value!r} is not offered by paytable {paytable.name}: {offered}")
    if isinstance(stake, bool) or not isinstance(stake, int) or stake <= 0:
        raise RulesError(f"a stake is a positive whole number of minor units, not {stake!r}")
    if is_push(bet, outcome):
        return Settlement(bet, stake, BetResult.PUSH, 0, Fraction(0), Fraction(0))
    odds = gross_odds(paytable, bet, outcome)
    if odds is None:
        return Settlement(bet, stake, BetResult.LOSS, 0, Fraction(0), Fraction(0))
    gross = stake * odds
    commission_taken = gross * commission_rate(commission, bet, outcome)
    exact = gross - commission_taken
    paid = to_minor_units(exact, rounding)
    return Settlement(bet, stake, BetResult.WIN, paid, exact, commission_taken)
