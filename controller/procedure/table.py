"""The table procedure's model: one input in, the facts it established out.

machine.py holds the states and transitions as data; the guards and actions
they name are the model's, one job per module in a chain of classes (base.py
lists it): dealing.py every card that leaves the shoe, deck_set.py the loaded
pack, rounds.py the rounds, shoe_cycle.py the shoe's life, supervisor.py a
supervisor's corrections. This module is the top of the chain: the entry
point, the guards, the hold actions, the Machine's own callbacks (a refused
command in the operator's words) and INPUT_ROUTES, the one place where each
input, every operator command among them (SignIn, CloseBets, VoidRound...),
is applied to the procedure. TableModel.apply(input) routes one input (a
decoded device event or a host command, see inputs.py) to its trigger
through INPUT_ROUTES, lets the procedure run on through its automatic
transitions, and returns the facts (observer events) it established, each
with the shoe and round it belongs to. The model does no I/O: the session
journals the facts and talks to the device, and recovery replays journaled
inputs through a fresh model.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, cast

from transitions import EventData, MachineError

from cardshoe.controller.config import TableConfig
from cardshoe.controller.procedure.corrections import void_reasons_of
from cardshoe.controller.procedure.facts import (
    Alarm,
    AlarmKind,
    BurnReason,
    HoldEnded,
    HoldStarted,
    RefusedCommand,
    ShoeEnding,
)
from cardshoe.controller.procedure.holds import (
    EVENTS_LOST_HOLDS,
    HOLD_ALARMS,
    OPERATOR_CLEARED_HOLDS,
    HoldReason,
    fault_hold,
)
from cardshoe.controller.procedure.inputs import (
    DeviceCount,
    HostFinding,
    JournalBehindDevice,
    PackCount,
    StorageFault,
    StorageLow,
    StorageRecovered,
)
from cardshoe.controller.procedure.irregularities import Irregularity
from cardshoe.controller.procedure.machine import (
    AUTOMATIC,
    AUTOMATIC_FROM,
    ROUND_STATES,
    State,
    Trigger,
    build_machine,
)
from cardshoe.controller.procedure.operator_commands import (
    AbandonShoe,
    ClearHold,
    CloseBets,
    ConfirmFaceUp,
    CutDone,
    EndShoe,
    EnterCard,
    ShoeLoaded,
    SignIn,
    StartShoe,
    VoidRound,
)
from cardshoe.controller.procedure.refusals import (
    COMMAND_WORDS,
    clear_hold_text,
    enter_card_text,
    possible_commands,
    refusal_text,
    void_reason_text,
    void_round_text,
)
from cardshoe.controller.procedure.shoe import Fact
from cardshoe.controller.procedure.supervisor import SupervisorCorrections
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


class TableModel(SupervisorCorrections):
    """The state of one table; the procedure Machine drives it (see machine.py)."""

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
        return event.kwargs["reason"] in self.clearable_holds()

    def no_hold_left(self, event: EventData) -> bool:
        return not self.holds

    def round_may_be_voided(self, event: EventData) -> bool:
        """The round named may be voided now, and the reason is one of the game's own."""
        named = self._void_target(event.kwargs["round_no"])
        return named is not None and event.kwargs["reason"] in self.void_reasons

    def entered_card_fits(self, event: EventData) -> bool:
        """A misread card awaits correction, and the decks still hold a copy of the card."""
        copies = self._entered_copies_out(event.kwargs["command"])
        return copies is not None and copies < self.config.game.decks

    def was_held_in_destination(self, event: EventData) -> bool:
        """A resume goes back to exactly the state the hold interrupted."""
        transition = event.transition
        return transition is not None and self.held_state == transition.dest

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
            self.faults_a_person_ends.discard(reason)
            self._emit(HoldEnded(reason, tuple(self.holds)))

    def clearable_holds(self) -> list[str]:
        """The active holds a person clears (clear-hold), in the order they began."""
        return [
            hold
            for hold in self.holds
            if hold in OPERATOR_CLEARED_HOLDS or hold in self.faults_a_person_ends
        ]

    def _fault_raised(self, fault: FaultRaised) -> None:
        """A device fault holds the table; one whose end the device never reports is
        remembered as a hold a person clears."""
        reason = fault_hold(fault.kind)
        if not fault.reports_end:
            self.faults_a_person_ends.add(reason)
        self.trigger(Trigger.HOLD, reason=reason)

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
            reason = clear_hold_text(str(event.kwargs["reason"]), self.clearable_holds())
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
            Trigger.ENTER_CARD: self._card_may_be_entered(),
            Trigger.VOID_CURRENT_ROUND: self._voidable_round() is not None,
            Trigger.CLEAR_HOLD: bool(self.clearable_holds()),
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
    FaultRaised: lambda model, item: model._fault_raised(item),
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
