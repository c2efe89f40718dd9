"""The table procedure's model: the shoe's lifecycle, the rounds, the holds, the inputs.

machine.py holds the states and transitions as data; this module and
dealing.py hold what they name: dealing.py every card that leaves the shoe,
this module the rest (opening, shuffling and reconciling a shoe, opening,
settling and voiding rounds, holds). TableModel.apply(input) routes one
input (a decoded device event or a host command, see inputs.py) to its
trigger through INPUT_ROUTES, lets the procedure run on through its
automatic transitions, and returns the facts (observer events) it
established, each with the shoe and round it belongs to. The model does no
I/O: the session journals the facts and talks to the device, and recovery
replays journaled inputs through a fresh model.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, cast

from transitions import EventData, MachineError

from cardshoe.controller.config import TableConfig
from cardshoe.controller.procedure.corrections import VoidReason, void_reasons_of
from cardshoe.controller.procedure.dealing import Dealing
from cardshoe.controller.procedure.facts import (
    ENTERED_CARD_ID,
    Alarm,
    AlarmKind,
    BetsCarried,
    BetsClosed,
    BurnReason,
    CardAssigned,
    CardCorrected,
    CardSetAside,
    CardsReturned,
    CarriedBetsEnd,
    CarriedBetsReturned,
    CorrectionMethod,
    HoldEnded,
    HoldStarted,
    LastRoundSet,
    RefusedCommand,
    ReliefBurnDropped,
    ReliefBurnDue,
    RoundOpened,
    RoundResult,
    RoundVoided,
    ShoeEnded,
    ShoeEnding,
    ShoeShuffled,
    ShoeStarted,
    TableIdle,
)
from cardshoe.controller.procedure.holds import (
    EVENTS_LOST_HOLDS,
    HOLD_ALARMS,
    OPERATOR_CLEARED_HOLDS,
    HoldReason,
    fault_hold,
)
from cardshoe.controller.procedure.inputs import (
    AbandonShoe,
    ClearHold,
    CloseBets,
    ConfirmFaceUp,
    CutDone,
    DeviceCount,
    EndShoe,
    EnterCard,
    HostFinding,
    JournalBehindDevice,
    PackCount,
    ShoeLoaded,
    SignIn,
    StartShoe,
    StorageFault,
    StorageLow,
    StorageRecovered,
    VoidRound,
)
from cardshoe.controller.procedure.irregularities import (
    Irregularity,
)
from cardshoe.controller.procedure.machine import (
    AUTOMATIC,
    AUTOMATIC_FROM,
    ROUND_STATES,
    State,
    Trigger,
    build_machine,
)
from cardshoe.controller.procedure.operator_input import deck_set_text
from cardshoe.controller.procedure.refusals import (
    COMMAND_WORDS,
    clear_hold_text,
    enter_card_text,
    possible_commands,
    refusal_text,
    void_reason_text,
    void_round_text,
)
from cardshoe.controller.procedure.shoe import CARDS_PER_DECK, Fact, Round, ShoeState
from cardshoe.controller.rules.cards import Card, parse_card
from cardshoe.controller.rules.hands import Hand, Winner
from cardshoe.controller.rules.ties import TIE_RULES
from cardshoe.drivers.api.events import (
    ButtonPressed,
    CardSeen,
    CutCardSeen,
    FaultCleared,
    FaultRaised,
    LinkLost,
    LinkRestored,
    Operation,
    OperationDone,
    ProtocolViolation,
    SelfTestDone,
    SequenceGap,
    SequenceRegression,
    ShoeEmptied,
)

_LOGGER = logging.getLogger(__name__)

DEALER_BUTTON = 0
"""BUTTON number of the dealer button (docs/protocol.md); others are device-specific."""
MAX_AUTOMATIC_STEPS = 64
"""More automatic transitions than this after one input means the tables loop: a bug."""
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


class TableModel(Dealing):
    """The state of one table; the procedure Machine drives it (see procedure.py)."""

    def __init__(self, config: TableConfig) -> None:
        super().__init__(config)
        self.void_reasons = void_reasons_of(config.game.name)
        self.machine = build_machine(self)

    # The one entry point

    def apply(self, item: Any) -> list[Fact]:
        """Feed one input and run on; the facts established, in order."""
        self._dispatch(item)
        self._end_misread_hold_when_moot()
        self._end_replay_hold_when_moot()
        for _ in range(MAX_AUTOMATIC_STEPS):
            step = self.machine.first_step(self, AUTOMATIC_FROM[self.state])
            if step is None:
                break
            self.machine.take(step)
        else:
            self._fail(RuntimeError(f"automatic transitions keep firing in state {self.state}"))
        facts, self._facts = self._facts, []
        return facts

    def _dispatch(self, item: Any) -> None:
        for kind in type(item).__mro__:
            route = INPUT_ROUTES.get(kind)
            if route is not None:
                route(self, item)
                return
        raise TypeError(f"{item!r} is not an input of the table procedure")

    def _self_test(self, result: SelfTestDone) -> None:
        self.trigger(
            Trigger.HOLD if result.failures else Trigger.RELEASE,
            reason=HoldReason.SELF_TEST_FAILED,
        )
        approved = self.config.device.firmware_approved(result.firmware_hash)
        self.trigger(
            Trigger.RELEASE if approved else Trigger.HOLD,
            reason=HoldReason.FIRMWARE_NOT_APPROVED,
        )

    @property
    def shuffle_wanted(self) -> bool:
        return self.state == State.SHUFFLING

    @property
    def cards_to_return(self) -> int | None:
        """How many cards the automatic machine must take back now, if it must."""
        if self.state == State.RETURNING and self.shoe is not None:
            return self.shoe.cards_out
        return None

    @property
    def pack_count_wanted(self) -> bool:
        """A manual shoe has started and its pack has not been counted yet."""
        shoe = self.shoe
        return (
            shoe is not None
            and not self.automatic
            and not shoe.pack_checked
            and self.position in (State.BURNING, State.READY, State.BETTING)
        )

    @property
    def counts_wanted(self) -> bool:
        """The shoe has ended: the device's counts are needed to reconcile it."""
        return self.state == State.SHOE_ENDED

    # Guards: no side effects

    def uses_cut_card(self, event: EventData) -> bool:
        return not self.automatic

    def operation_succeeded(self, event: EventData) -> bool:
        return bool(event.kwargs["done"].ok)

    def burn_is_finished(self, event: EventData) -> bool:
        return self.shoe is not None and self.shoe.burn_remaining == 0 and self.shoe.feed is None

    def shoe_is_finished(self, event: EventData) -> bool:
        shoe = self.shoe
        if shoe is None:
            return False
        cut_rounds_done = shoe.last_round is not None and shoe.rounds_finished >= shoe.last_round
        return shoe.empty or cut_rounds_done

    def shoe_is_open(self, event: EventData) -> bool:
        return self.shoe is not None

    def burns_before_deal(self, event: EventData) -> bool:
        """Art. 8's round burn, or a relief burn due, comes after no more bets."""
        relief_due = self.shoe is not None and self.shoe.relief_burn_due
        return self.config.game.round_burn > 0 or relief_due

    def round_burn_follows(self, event: EventData) -> bool:
        """The relief burn came first; the round's own burn (Art. 8) is still to come."""
        shoe = self.shoe
        relief = shoe is not None and shoe.burn_reason is BurnReason.DEALER_RELIEF
        return relief and self.config.game.round_burn > 0

    def round_is_void(self, event: EventData) -> bool:
        return (
            self.round is not None
            and self.round.void_reason is not None
            and self.shoe is not None
            and self.shoe.feed is None
        )

    def round_is_complete(self, event: EventData) -> bool:
        return (
            self.round is not None
            and self.round.void_reason is None
            and self.round.deal.is_complete
            and self.shoe is not None
            and self.shoe.feed is None
        )

    def has_cards_to_return(self, event: EventData) -> bool:
        return self.automatic and self.shoe is not None and self.shoe.cards_out > 0

    def face_down_card_pending(self, event: EventData) -> bool:
        return HoldReason.FACE_DOWN_CARD in self.holds

    def hold_is_cleared_by_operator(self, event: EventData) -> bool:
        reason = event.kwargs["reason"]
        return reason in OPERATOR_CLEARED_HOLDS and reason in self.holds

    def no_hold_left(self, event: EventData) -> bool:
        return not self.holds

    def round_may_be_voided(self, event: EventData) -> bool:
        """The round named may be voided now, and the reason is one of the game's own."""
        named = self._void_target(event.kwargs["round_no"])
        return named is not None and event.kwargs["reason"] in self.void_reasons

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

    def entered_card_fits(self, event: EventData) -> bool:
        """A misread card awaits correction, and the decks still hold a copy of the card."""
        copies = self._entered_copies_out(event.kwargs["command"])
        return copies is not None and copies < self.config.game.decks

    def _entered_copies_out(self, command: EnterCard) -> int | None:
        """How many copies of the entered card are out; None when no card may be entered (no
        misread card awaits, and no card is due under device_cannot_replay)."""
        if not self._misread_awaits() and self._missing_card_hand() is None:
            return None
        return self._open_shoe().copies[parse_card(command.card)]

    def was_held_in_destination(self, event: EventData) -> bool:
        """A resume goes back to exactly the state the hold interrupted."""
        transition = event.transition
        return transition is not None and self.held_state == transition.dest

    # Actions: opening a shoe

    def open_shoe(self, event: EventData) -> None:
        command: StartShoe = event.kwargs["command"]
        decks = self.config.game.decks
        self.shoe = ShoeState(
            command.shoe_id,
            command.deck_set,
            loaded=decks * CARDS_PER_DECK,
            deck_set_declared=command.deck_set is not None,
        )
        self._emit(
            ShoeStarted(
                command.shoe_id,
                self.game.name,
                decks,
                str(self.config.device.kind),
                self.config.fingerprint,
                self.config.fingerprint_options(),
                None if command.deck_set is None else deck_set_text(command.deck_set),
            )
        )

    def start_shoe_burn(self, event: EventData) -> None:
        shoe = self._open_shoe()
        shoe.burn_reason, shoe.burn_remaining = BurnReason.START_OF_SHOE, None

    def record_shuffle(self, event: EventData) -> None:
        done: OperationDone = event.kwargs["done"]
        shoe = self._open_shoe()
        expected = shoe.loaded
        shoe.loaded, shoe.cards_out = done.card_count, 0
        self._emit(ShoeShuffled(done.card_count))
        shoe.pack_checked = True
        if done.card_count != expected:
            self._emit(
                Alarm(
                    AlarmKind.CARD_COUNT,
                    f"the machine shuffled {done.card_count} cards; "
                    f"{self.config.game.decks} decks hold {expected}: load "
                    f"{self.config.game.decks} decks, or correct game.decks and start a new shoe",
                )
            )
            self.trigger(Trigger.HOLD, reason=HoldReason.PACK_COUNT_MISMATCH)

    def check_pack_count(self, event: EventData) -> None:
        """Before the deal: the manual shoe must hold decks x 52 cards (issue 12, shoe start).

        A 6-deck table dealt an 8-deck shoe voids round after round for excess
        copies; the count names the cause before the first round.
        """
        count: PackCount = event.kwargs["count"]
        shoe = self.shoe
        if shoe is None or shoe.pack_checked:
            return
        shoe.pack_checked = True
        if count.cards_remaining is None or count.cards_dealt is None:
            return  # the device cannot count its pack: nothing to compare
        held = count.cards_remaining + count.cards_dealt
        if held == shoe.loaded:
            return
        decks = self.config.game.decks
        self._emit(
            Alarm(
                AlarmKind.CARD_COUNT,
                f"the shoe holds {held} cards; {decks} decks hold {shoe.loaded}: load {decks} "
                "decks, or correct game.decks and start a new shoe",
            )
        )
        self.trigger(Trigger.HOLD, reason=HoldReason.PACK_COUNT_MISMATCH)

    def fail_shuffle(self, event: EventData) -> None:
        done: OperationDone = event.kwargs["done"]
        self._emit(Alarm(AlarmKind.DEVICE_FAULT, f"shuffle failed: {done.result.upper()}"))
        self._close_shoe(reconciled=False)

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
        settlement = None if current.demo else self.game.net_returns(outcome)
        marks = self.game.marks(outcome)
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

    def _missing_card_hand(self) -> Hand | None:
        """Under device_cannot_replay: the hand the next card is due to, where a supervisor
        enters a card the device sent while the controller was down."""
        if HoldReason.DEVICE_CANNOT_REPLAY not in self.holds:
            return None
        due = self._due_at(self.position)
        return due if isinstance(due, Hand) else None

    def _enter_missing_card(self, card: Card, command: EnterCard) -> None:
        """The card on the layout the journal lacks goes to the hand due; the hold ends, as
        the supervisor has confirmed the layout."""
        hand = self._missing_card_hand()
        assert hand is not None
        current, shoe = self._open_round(), self._open_shoe()
        shoe.copies[card] += 1
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
        self.trigger(Trigger.RELEASE, reason=HoldReason.DEVICE_CANNOT_REPLAY)

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
        if not self._misread_awaits() and HoldReason.MISREAD_CARD in self.holds:
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

    # Actions: ending a shoe

    def withdraw_open_round(self, event: EventData) -> None:
        if self.round is not None:
            reason = Irregularity.INSUFFICIENT_CARDS if self._open_shoe().empty else "shoe_closed"
            self.round.void_reason = reason
            self.void_round(event)

    def make_round_last(self, event: EventData) -> None:
        self._set_last_round(self._current_round_number(), "house", event.kwargs["reason"])

    def reconcile_shoe(self, event: EventData) -> None:
        count: DeviceCount = event.kwargs["count"]
        shoe = self._open_shoe()
        taken = shoe.dealt + shoe.burned
        problems = []
        if count.cards_dealt is not None and count.cards_dealt != taken:
            problems.append(
                f"the device counted {count.cards_dealt} cards out, the journal {taken}"
            )
        if count.cards_remaining is not None:
            accounted = taken - shoe.returned + count.cards_remaining
            if accounted != shoe.loaded + shoe.intruders:
                problems.append(
                    f"loaded {shoe.loaded} + intruders {shoe.intruders} != dealt {shoe.dealt} "
                    f"+ burned {shoe.burned} - returned {shoe.returned} "
                    f"+ remaining {count.cards_remaining}"
                )
        if problems:
            self._emit(Alarm(AlarmKind.RECONCILIATION, "; ".join(problems)))
        self._close_shoe(
            reconciled=not problems,
            remaining=count.cards_remaining,
            device_cards_dealt=count.cards_dealt,
        )

    def close_abandoned_shoe(self, event: EventData) -> None:
        reason = event.kwargs["reason"]
        if self.round is not None:
            self.round.void_reason = "shoe_abandoned"
            self.void_round(event)
        self._emit(Alarm(AlarmKind.SHOE_ABANDONED, reason))
        if self.shoe is not None:
            self._close_shoe(reconciled=False)
        if self.state == State.HELD:
            self.held_state = State.IDLE

    def _close_shoe(
        self,
        *,
        reconciled: bool,
        remaining: int | None = None,
        device_cards_dealt: int | None = None,
    ) -> None:
        shoe = self._open_shoe()
        if shoe.relief_burn_due:
            self._emit(ReliefBurnDropped(self.config.game.relief_burn))
        self._emit(
            ShoeEnded(
                shoe.shoe_id,
                shoe.rounds_finished,
                shoe.loaded,
                shoe.dealt,
                shoe.burned,
                shoe.returned,
                shoe.intruders,
                remaining,
                device_cards_dealt,
                reconciled,
            )
        )
        self.shoe = None

    def on_enter_idle(self, event: EventData) -> None:
        self._emit(TableIdle())

    # Actions: what the shoe reports

    def note_cut_card(self, event: EventData) -> None:
        last = self._current_round_number() + self.config.shoe.rounds_after_cut_card - 1
        self._set_last_round(last, "cut_card")
        self._check_cut_card_position()

    def _check_cut_card_position(self) -> None:
        """An early or late cut card ends the shoe where nobody cut it: the pit must look.

        A manual shoe gives nothing back, so the cards still in it are what was
        loaded (with any intruders) less what came out.
        """
        shoe, rules = self._open_shoe(), self.config.shoe
        left = shoe.loaded + shoe.intruders - shoe.dealt - shoe.burned
        if abs(left - rules.cut_card_depth) > rules.cut_card_tolerance:
            self._emit(
                Alarm(
                    AlarmKind.CUT_CARD,
                    f"the cut card came out with {left} cards left in the shoe; "
                    f"shoe.cut_card_depth is {rules.cut_card_depth} "
                    f"(tolerance {rules.cut_card_tolerance}): check how the pack was cut",
                )
            )

    def note_shoe_empty(self, event: EventData) -> None:
        shoe = self._open_shoe()
        shoe.empty = True
        current = self.round
        if (
            self.position in (State.ROUND_BURN, State.DEALING)
            and current is not None
            and current.void_reason is None
            and not current.deal.is_complete
        ):
            current.void_reason = Irregularity.INSUFFICIENT_CARDS
            self._record_irregularity(Irregularity.INSUFFICIENT_CARDS, None, None)

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

    # Actions: holds

    def remember_state(self, event: EventData) -> None:
        self.held_state = State(self.state)

    def forget_held_state(self, event: EventData) -> None:
        self.held_state = None

    def add_hold(self, event: EventData) -> None:
        reason = str(event.kwargs["reason"])
        if reason in self.holds:
            return
        self.holds.append(reason)
        self._emit(HoldStarted(reason, str(self.position)))
        if reason in HOLD_ALARMS:
            self._emit(Alarm(HOLD_ALARMS[reason], f"hold: {reason}"))
        if reason in EVENTS_LOST_HOLDS:
            self._lose_cards(reason)

    def _lose_cards(self, reason: str) -> None:
        """Events were lost: the round under way may be missing cards, so it is void."""
        if self.shoe is not None:
            self.shoe.feed = None
        current = self.round
        if current is not None and current.void_reason is None and self.position in ROUND_STATES:
            current.void_reason = reason
            self._record_irregularity(Irregularity.SEQUENCE_GAP, None, None)

    def drop_hold(self, event: EventData) -> None:
        reason = str(event.kwargs["reason"])
        if reason in self.holds:
            self.holds.remove(reason)
            self._emit(HoldEnded(reason, tuple(self.holds)))

    def end_face_down_hold(self, event: EventData) -> None:
        self.holds.remove(HoldReason.FACE_DOWN_CARD)
        self._emit(HoldEnded(HoldReason.FACE_DOWN_CARD, tuple(self.holds)))

    # Machine callbacks

    def on_procedure_exception(self, event: EventData) -> None:
        error = event.error
        if isinstance(error, MachineError):
            self._not_allowed(event)
            return
        self._fail(error)

    def after_every_trigger(self, event: EventData) -> None:
        """finalize_event: a trigger that no guard let through is a violation, never ignored."""
        if event.error is None and not event.result and event.event.name not in AUTOMATIC:
            self._not_allowed(event)

    def _not_allowed(self, event: EventData) -> None:
        """An operator's command is refused in their words; anything else is a violation."""
        trigger = Trigger(event.event.name)
        if trigger not in COMMAND_WORDS:
            self._violation(f"{trigger} is not allowed in state {self.state}")
            return
        state = State(self.state)
        if (
            trigger is Trigger.VOID_CURRENT_ROUND
            and event.kwargs["reason"] not in self.void_reasons
        ):
            named = str(event.kwargs["reason"])
            reason = void_reason_text(named, self.void_reasons, self.config.game.name)
        elif trigger is Trigger.VOID_CURRENT_ROUND and self.round is not None:
            voidable = self._voidable_round()
            reason = void_round_text(
                event.kwargs["round_no"],
                self.round.number,
                self.round.void_reason is not None,
                None if voidable is None else voidable.number,
            )
        elif trigger is Trigger.ENTER_CARD:
            command: EnterCard = event.kwargs["command"]
            copies = self._entered_copies_out(command)
            reason = enter_card_text(command.card, copies, self.config.game.decks)
        elif trigger is Trigger.CLEAR_HOLD:
            clearable = [hold for hold in self.holds if hold in OPERATOR_CLEARED_HOLDS]
            reason = clear_hold_text(str(event.kwargs["reason"]), clearable)
        else:
            reason = refusal_text(trigger, state, self.position, self.holds, self._applies())
        self._emit(RefusedCommand(COMMAND_WORDS[trigger], reason))

    def possible_commands(self) -> list[str]:
        """The operator commands the table accepts now, as typed: what a console offers."""
        return possible_commands(cast(State, self.state), self._applies())

    def _applies(self) -> dict[Trigger, bool]:
        """Whether each command that depends on more than the state has anything to act on:
        a refusal offers only what the table would accept now."""
        return {
            Trigger.CONFIRM_FACE_UP: HoldReason.FACE_DOWN_CARD in self.holds,
            Trigger.ENTER_CARD: self._misread_awaits(),
            Trigger.VOID_CURRENT_ROUND: self._voidable_round() is not None,
            Trigger.CLEAR_HOLD: any(hold in OPERATOR_CLEARED_HOLDS for hold in self.holds),
        }

    def _violation(self, detail: str) -> None:
        _LOGGER.warning("procedure violation: %s", detail)
        self._emit(Alarm(AlarmKind.PROCEDURE_VIOLATION, detail))

    def _fail(self, error: BaseException | None) -> None:
        _LOGGER.error("the procedure raised; the table stops in the fault state", exc_info=error)
        self._emit(Alarm(AlarmKind.SOFTWARE_FAULT, repr(error)))
        if self.state != State.FAULT:
            self.trigger(Trigger.FAIL)


Route = Callable[[TableModel, Any], object]


def _button(model: TableModel, item: ButtonPressed) -> None:
    """Only the dealer button is a procedure input; other buttons are the device's own."""
    if item.button == DEALER_BUTTON:
        model.trigger(Trigger.DEALER_BUTTON)


def _operation_done(model: TableModel, done: OperationDone) -> None:
    shuffled = done.operation is Operation.SHUFFLE
    model.trigger(Trigger.SHUFFLED if shuffled else Trigger.RETURNED, done=done)


def _protocol_violation(model: TableModel, item: ProtocolViolation) -> None:
    model._emit(Alarm(AlarmKind.DEVICE_FAULT, f"the device broke the protocol: {item.reason}"))


INPUT_ROUTES: Mapping[type, Route] = {
    # Device events
    CardSeen: lambda model, item: model.trigger(Trigger.CARD, event=item),
    CutCardSeen: lambda model, item: model.trigger(Trigger.CUT_CARD),
    ShoeEmptied: lambda model, item: model.trigger(Trigger.SHOE_EMPTY),
    ButtonPressed: _button,
    FaultRaised: lambda model, item: model.trigger(Trigger.HOLD, reason=fault_hold(item.kind)),
    FaultCleared: lambda model, item: model.trigger(Trigger.RELEASE, reason=fault_hold(item.kind)),
    SelfTestDone: lambda model, item: model._self_test(item),
    OperationDone: _operation_done,
    # Operator and host commands
    StartShoe: lambda model, item: model.trigger(Trigger.START_SHOE, command=item),
    SignIn: lambda model, item: model.note_sign_in(item),
    ShoeLoaded: lambda model, item: model.trigger(Trigger.SHOE_LOADED),
    CutDone: lambda model, item: model.trigger(Trigger.CUT_DONE),
    CloseBets: lambda model, item: model.trigger(Trigger.CLOSE_BETS),
    ConfirmFaceUp: lambda model, item: model.trigger(Trigger.CONFIRM_FACE_UP),
    EndShoe: lambda model, item: model.trigger(Trigger.END_SHOE, reason=ShoeEnding(item.reason)),
    AbandonShoe: lambda model, item: model.trigger(Trigger.ABANDON_SHOE, reason=item.reason),
    ClearHold: lambda model, item: model.trigger(Trigger.CLEAR_HOLD, reason=item.reason),
    VoidRound: lambda model, item: model.trigger(
        Trigger.VOID_CURRENT_ROUND, reason=item.reason, round_no=item.round_no
    ),
    EnterCard: lambda model, item: model.trigger(Trigger.ENTER_CARD, command=item),
    DeviceCount: lambda model, item: model.trigger(Trigger.RECONCILE, count=item),
    PackCount: lambda model, item: model.trigger(Trigger.PACK_COUNTED, count=item),
    HostFinding: lambda model, item: model.trigger(Trigger.HOLD, reason=item.hold),
    # The link's own events
    LinkLost: lambda model, item: model.trigger(Trigger.HOLD, reason=HoldReason.LINK_LOST),
    LinkRestored: lambda model, item: model.trigger(Trigger.RELEASE, reason=HoldReason.LINK_LOST),
    SequenceGap: lambda model, item: model.trigger(Trigger.HOLD, reason=HoldReason.SEQUENCE_GAP),
    SequenceRegression: lambda model, item: model.trigger(
        Trigger.HOLD, reason=HoldReason.SEQUENCE_REGRESSION
    ),
    ProtocolViolation: _protocol_violation,
    # The journal's storage, as the session watches it
    JournalBehindDevice: lambda model, item: model.trigger(
        Trigger.HOLD, reason=HoldReason.JOURNAL_BEHIND_DEVICE
    ),
    StorageFault: lambda model, item: model.trigger(
        Trigger.HOLD, reason=HoldReason.JOURNAL_STORAGE
    ),
    StorageLow: lambda model, item: model.trigger(
        Trigger.HOLD, reason=HoldReason.JOURNAL_SPACE_LOW
    ),
    StorageRecovered: lambda model, item: model.trigger(
        Trigger.RELEASE, reason=HoldReason.JOURNAL_SPACE_LOW
    ),
}
"""Each input's type -> what it does to the procedure: mostly one trigger, with its data."""
