"""Rounds: opening one, closing its bets, settling or voiding it, and the shoe's last round.

One job of the table model (the chain of its jobs is in base.py): a round's
life from its bets to its result (Art. 8's burn, Art. 10's void, Art. 11's tie
carried) and the dealer relief that makes a burn due, kept apart from the cards
(dealing.py) and from the shoe's own life (shoe_cycle.py), which ends rounds
but does not decide them.
"""

from __future__ import annotations

from transitions import EventData

from cardshoe.controller.procedure.dealing import Dealing
from cardshoe.controller.procedure.facts import (
    Alarm,
    AlarmKind,
    BetsCarried,
    BetsClosed,
    BurnReason,
    CardSetAside,
    CardsReturned,
    CarriedBetsEnd,
    CarriedBetsReturned,
    LastRoundSet,
    ReliefBurnDue,
    RoundOpened,
    RoundResult,
    RoundVoided,
    ShoeEnding,
)
from cardshoe.controller.procedure.machine import State, Trigger
from cardshoe.controller.procedure.operator_commands import SignIn
from cardshoe.controller.procedure.shoe import Round, ShoeState
from cardshoe.controller.rules.hands import Winner
from cardshoe.controller.rules.ties import TIE_RULES
from cardshoe.drivers.api.events import OperationDone

RELIEF_BURN_STATES: tuple[State, ...] = (
    State.READY,
    State.BETTING,
    State.ROUND_BURN,
    State.DEALING,
    State.RETURNING,
)
"""Where a relief makes the house burn: the shoe has begun dealing rounds. Before that
(loading, cut, the start-of-shoe burn, the machine's shuffle) the start of the shoe is
the incoming dealer's own; once the shoe has ended no round is left to deal."""


class Rounds(Dealing):
    """The round actions the procedure names."""

    # Actions: rounds

    def open_round(self, event: EventData) -> None:
        shoe = self._open_shoe()
        shoe.rounds_opened += 1
        number = shoe.rounds_opened
        demo = number <= self.config.game.demo_rounds
        self.round = Round(number, demo, self.game.new_round(), carried_in=shoe.carried_from)
        shoe.carried_from = None
        self._emit(RoundOpened(number, demo))
        machine_rounds = self.config.shoe.machine_rounds
        if self.automatic and machine_rounds and number >= machine_rounds:
            self._set_last_round(number, "house", ShoeEnding.MACHINE_ROUNDS)

    def record_bets_closed(self, event: EventData) -> None:
        shoe, current = self._open_shoe(), self._open_round()
        by = "dealer_button" if event.event.name == Trigger.DEALER_BUTTON else "command"
        self._emit(BetsClosed(current.number, by))
        shoe.settled = None
        if shoe.relief_burn_due:
            shoe.relief_burn_due = False
            shoe.burn_reason = BurnReason.DEALER_RELIEF
            shoe.burn_remaining = self.config.game.relief_burn
        elif self.config.game.round_burn:
            self.start_round_burn(event)

    def start_round_burn(self, event: EventData) -> None:
        shoe = self._open_shoe()
        shoe.burn_reason = BurnReason.START_OF_ROUND
        shoe.burn_remaining = self.config.game.round_burn

    def note_sign_in(self, sign_in: SignIn) -> None:
        """A dealer relieving another in the shoe makes a relief burn due (game.relief_burn).

        Not a trigger: signing in is possible in every state and changes none.
        The burn comes after the no more bets of the first round not yet closed
        for bets, before its deal (its own round burn, if any, follows it); a
        second relief before that burn makes it due once, not twice. Signing in
        again as the dealer signed in is no relief. On the automatic machine under
        shoe.machine_end_at_relief, a relief also makes the round on the layout
        (between rounds: the next) the shoe's last (Art. 3.2).
        """
        shoe, cards, relieved = self.shoe, self.config.game.relief_burn, sign_in.relieves
        if (
            relieved is None
            or relieved == sign_in.dealer
            or shoe is None
            or self.position not in RELIEF_BURN_STATES
        ):
            return
        if self.automatic and self.config.shoe.machine_end_at_relief:
            self._set_last_round(self._current_round_number(), "house", ShoeEnding.DEALER_RELIEF)
        if not cards or shoe.relief_burn_due:
            return
        shoe.relief_burn_due = True
        current = self.round
        if current is not None and self.position is State.BETTING:
            before = current.number
        else:
            before = shoe.rounds_opened + 1
        self._emit(ReliefBurnDue(sign_in.dealer, relieved, cards, before))

    def settle_round(self, event: EventData) -> None:
        current = self._open_round()
        outcome = current.deal.outcome()
        marks, returns = self.game.settled(outcome)
        settlement = None if current.demo else returns
        tied = outcome.winner is Winner.TIE and not current.demo
        tie_bets = self.config.game.effective_tie_bets if tied else None
        self._emit(
            RoundResult(
                current.number,
                current.demo,
                current.deal.player,
                current.deal.banker,
                outcome.player_total,
                outcome.banker_total,
                outcome.winner.value,
                outcome.natural,
                marks.player_pair,
                marks.banker_pair,
                marks.sevens,
                settlement,
                tie_bets,
            )
        )
        shoe = self._open_shoe()
        if tie_bets is not None and TIE_RULES[tie_bets].carried:
            self._carry_tied_bets(shoe, current.number, tie_bets)
        shoe.settled = current
        self._finish_round()

    def _carry_tied_bets(self, shoe: ShoeState, tied: int, tie_bets: str) -> None:
        """A new round decides after a tie (Art. 11): the bets stand for it, if one follows.

        No round follows the shoe's last round (Art. 3.1: the cut card's round, or the
        one after it, is the last; the house's end; an empty shoe): dealing one past it
        would break that rule, so the standing bets go back to the players undecided.
        """
        last_round = shoe.last_round is not None and tied >= shoe.last_round
        if shoe.empty or last_round:
            self._emit(CarriedBetsReturned(tied, CarriedBetsEnd.NO_ROUND_FOLLOWS))
            return
        shoe.carried_from = tied
        self._emit(BetsCarried(tied, tied + 1, tie_bets))

    def void_round(self, event: EventData) -> None:
        current = self._open_round()
        if current.misread is not None:
            # Never identified: set aside with its round, counted out of the shoe already.
            self._emit(CardSetAside(current.number, None, None, current.void_reason or ""))
            current.misread = None
        self._emit(RoundVoided(current.number, current.void_reason or "", tuple(current.cards)))
        self._return_carried_bets(current)
        self._open_shoe().settled = None
        self._finish_round()

    def _return_carried_bets(self, voided: Round) -> None:
        """A void returns every stake of the round, the bets a tie carried into it too."""
        if voided.carried_in is not None:
            self._emit(
                CarriedBetsReturned(voided.carried_in, CarriedBetsEnd.ROUND_VOID, voided.number),
                about=voided.number,
            )
            voided.carried_in = None

    def record_return(self, event: EventData) -> None:
        done: OperationDone = event.kwargs["done"]
        shoe = self._open_shoe()
        expected = shoe.cards_out
        self._emit(CardsReturned(expected, done.card_count))
        if not done.ok or done.card_count != expected:
            self._emit(
                Alarm(
                    AlarmKind.CARD_COUNT,
                    f"return {done.result.upper()}: the machine took back {done.card_count} "
                    f"cards, {expected} were out",
                )
            )
        shoe.returned += expected
        shoe.cards_out = 0
        shoe.seen.clear()
        shoe.copies.clear()

    def _finish_round(self) -> None:
        self._open_shoe().rounds_finished += 1
        self.round = None

    def _current_round_number(self) -> int:
        """The round under way, or between rounds the next one."""
        shoe = self._open_shoe()
        if self.round is not None:
            return self.round.number
        return shoe.rounds_opened + 1

    def _set_last_round(self, last: int, cause: str, reason: ShoeEnding | None = None) -> None:
        shoe = self._open_shoe()
        if shoe.last_round is None or last < shoe.last_round:
            shoe.last_round = last
            self._emit(LastRoundSet(last, cause, reason))
