"""What a supervisor puts right (Art. 10): a misread card entered, a round voided.

One job of the table model (the chain of its jobs is in base.py): which card
may be entered and which round voided now, what doing it changes, and how long
the holds waiting for it (misread_card, device_cannot_replay) last. The
dealing keeps a misread card's place (dealing.py); this part fills it in.
"""

from __future__ import annotations

from transitions import EventData

from cardshoe.controller.procedure.corrections import VoidReason
from cardshoe.controller.procedure.facts import (
    ENTERED_CARD_ID,
    CardAssigned,
    CardCorrected,
    CarriedBetsEnd,
    CarriedBetsReturned,
    CorrectionMethod,
    RoundVoided,
)
from cardshoe.controller.procedure.holds import HoldReason
from cardshoe.controller.procedure.machine import ROUND_STATES, State, Trigger
from cardshoe.controller.procedure.operator_commands import EnterCard
from cardshoe.controller.procedure.shoe import CardDue, Round
from cardshoe.controller.procedure.shoe_cycle import ShoeCycle
from cardshoe.controller.rules.cards import Card, parse_card
from cardshoe.controller.rules.hands import Hand


class SupervisorCorrections(ShoeCycle):
    """The corrections a supervisor makes, and the holds that wait for them."""

    def _voidable_round(self) -> Round | None:
        """The round a supervisor may void now (Art. 10: "该局取消作废", that round).

        The round under way once a card of it is out and while it is not void yet;
        between rounds, the round just settled, until the next round's bets close
        (the correction window: nothing of the next round is dealt yet). A round
        with no card dealt has no error of the deal to cancel.
        """
        current, shoe = self.round, self.shoe
        if current is None or shoe is None or self.position not in ROUND_STATES:
            return None
        if self.position is State.BETTING:
            return shoe.settled
        return current if current.cards and current.void_reason is None else None

    def _void_target(self, named: int | None) -> Round | None:
        """The round void-round voids: the one named, or by default the voidable one."""
        voidable = self._voidable_round()
        if voidable is None or named not in (None, voidable.number):
            return None
        return voidable

    def _entered_copies_out(self, command: EnterCard) -> int | None:
        """How many copies of the entered card are out; None when no card may be entered."""
        if not self._card_may_be_entered():
            return None
        return self._open_shoe().copies[parse_card(command.card)]

    def _card_may_be_entered(self) -> bool:
        """A misread card awaits its entry, or a card is due (to a hand or a burn) where one
        may have left unheard under device_cannot_replay."""
        return self._misread_awaits() or self._missing_card_due() is not None

    def enter_misread_card(self, event: EventData) -> None:
        """A supervisor read the card the reader could not: it goes to the hand it was due,
        or, the start-of-shoe burn's first card, fixes the burn's count (Art. 2.1)."""
        command: EnterCard = event.kwargs["command"]
        shoe, card, method = self._open_shoe(), parse_card(command.card), CorrectionMethod.ENTERED
        if not self._misread_awaits():
            self._enter_missing_card(card, command)
            return
        shoe.copies[card] += 1
        if shoe.first_card_unread:
            self._fix_first_card(shoe, card, ENTERED_CARD_ID, method, command.operator)
            return
        current = self._open_round()
        misread = current.misread
        assert misread is not None
        self._place_corrected(current, misread, card, ENTERED_CARD_ID, method, command.operator)

    def _misread_awaits(self) -> bool:
        """A card that could not be read awaits its re-read or its entry: one due to a hand
        in a round not void, or the first card under the first-card burn."""
        current, shoe = self.round, self.shoe
        in_round = (
            current is not None and current.misread is not None and current.void_reason is None
        )
        return in_round or (shoe is not None and shoe.first_card_unread)

    def _missing_card_due(self) -> CardDue | None:
        """Under device_cannot_replay: what the next card is due to, a hand or a burn, where
        a supervisor enters a card the device sent while the controller was down."""
        if HoldReason.DEVICE_CANNOT_REPLAY not in self.holds:
            return None
        return self._due_at(self.position)

    def _enter_missing_card(self, card: Card, command: EnterCard) -> None:
        """The card the journal lacks goes where it was due, to a hand or to the burn under
        way; the hold ends, as the supervisor has confirmed the layout."""
        due = self._missing_card_due()
        assert due is not None
        shoe = self._open_shoe()
        shoe.copies[card] += 1
        if isinstance(due, Hand):
            self._enter_missing_hand_card(card, due, command)
        else:
            # Counted in its burn as a read one would be (the first card of a first-card burn
            # fixes the count); the command's record names who entered it.
            self._record_burn(card, ENTERED_CARD_ID, due)
        self.trigger(Trigger.RELEASE, reason=HoldReason.DEVICE_CANNOT_REPLAY)

    def _enter_missing_hand_card(self, card: Card, hand: Hand, command: EnterCard) -> None:
        """A card on the layout the journal lacks goes to the hand it was due."""
        current, shoe = self._open_round(), self._open_shoe()
        shoe.dealt += 1
        current.cards.append(card)
        dealt_to = current.deal.deal(card)
        assert dealt_to is hand, (dealt_to, hand)
        self._emit(
            CardAssigned(current.number, card, ENTERED_CARD_ID, hand, current.deal.next_recipient())
        )
        self._emit(
            CardCorrected(
                current.number,
                HoldReason.DEVICE_CANNOT_REPLAY,
                CorrectionMethod.ENTERED,
                card,
                ENTERED_CARD_ID,
                hand,
                command.operator,
            )
        )

    def _end_replay_hold_when_moot(self) -> None:
        """device_cannot_replay lasts while the shoe it is about is open and nobody has
        confirmed its layout (enter-card, void-round, clear-hold): a closed shoe leaves
        nothing to confirm."""
        if HoldReason.DEVICE_CANNOT_REPLAY not in self.holds:
            return
        if self.shoe is None:
            self.trigger(Trigger.RELEASE, reason=HoldReason.DEVICE_CANNOT_REPLAY)

    def _end_misread_hold_when_moot(self) -> None:
        """The misread_card hold lasts exactly as long as a misread card awaits correction.

        A re-read or an entered card ends it, and so does anything that voids
        the round or closes the shoe (void-round, lost events, abandon-shoe):
        nothing is left to correct then, and the void goes ahead.
        """
        # The hold first: asked after every input, and nearly always there is none.
        if HoldReason.MISREAD_CARD in self.holds and not self._misread_awaits():
            self.trigger(Trigger.RELEASE, reason=HoldReason.MISREAD_CARD)

    def void_by_supervisor(self, event: EventData) -> None:
        """The round is void from now; the automatic round_void ends a round under way.

        A round already settled is void at once: its result is cancelled, its stakes
        returned (Art. 10), and bets its tie left standing for the round now open go
        back with them.
        """
        reason = str(VoidReason(event.kwargs["reason"]))
        target, current = self._void_target(event.kwargs["round_no"]), self._open_round()
        assert target is not None
        if HoldReason.DEVICE_CANNOT_REPLAY in self.holds:  # the supervisor judged the layout
            self.trigger(Trigger.RELEASE, reason=HoldReason.DEVICE_CANNOT_REPLAY)
        if target is current:
            current.void_reason = reason
            return
        shoe = self._open_shoe()
        shoe.settled = None
        target.void_reason = reason
        self._emit(RoundVoided(target.number, reason, tuple(target.cards)), about=target.number)
        self._return_carried_bets(target)
        if current.carried_in == target.number:
            self._emit(
                CarriedBetsReturned(target.number, CarriedBetsEnd.ROUND_VOID, target.number),
                about=target.number,
            )
            current.carried_in = None
