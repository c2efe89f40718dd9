"""The table procedure's model: shoe and round state, the guards and the actions.

procedure.py holds the states and transitions as data; this module holds
what they name. TableModel.apply(input) turns one input (a decoded device
event or a host command, see inputs.py) into triggers, lets the procedure
run on through its automatic transitions, and returns the facts (observer
events) it established, each with the shoe and round it belongs to. The
model does no I/O: the session journals the facts and talks to the device,
and recovery replays journaled inputs through a fresh model.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, NamedTuple

from transitions import EventData, MachineError

from cardshoe.controller.config import BurnPolicy, DeviceMode, TableConfig
from cardshoe.controller.procedure.facts import (
    Alarm,
    AlarmKind,
    BetsClosed,
    Burned,
    BurnReason,
    CardAssigned,
    CardSetAside,
    CardsReturned,
    DeckSetAdopted,
    HoldEnded,
    HoldStarted,
    IrregularityFound,
    LastRoundSet,
    RoundOpened,
    RoundResult,
    RoundVoided,
    ShoeEnded,
    ShoeShuffled,
    ShoeStarted,
    TableEvent,
    TableIdle,
)
from cardshoe.controller.procedure.inputs import (
    AbandonShoe,
    ClearHold,
    CloseBets,
    ConfirmFaceUp,
    CutDone,
    DeviceCount,
    EndShoe,
    ShoeLoaded,
    StartShoe,
)
from cardshoe.controller.procedure.irregularities import (
    INTRUDER_FINDINGS,
    IRREGULARITIES,
    CardInspection,
    Consequence,
    Irregularity,
    inspect_card,
)
from cardshoe.controller.procedure.machine import (
    AUTOMATIC,
    AUTOMATIC_FROM,
    HOLDABLE,
    ROUND_STATES,
    State,
    Trigger,
    build_machine,
)
from cardshoe.controller.rules.cards import Card
from cardshoe.controller.rules.hands import Hand
from cardshoe.controller.rules.rounds import RoundInProgress
from cardshoe.drivers.link_events import (
    LinkLost,
    LinkRestored,
    ProtocolViolation,
    SequenceGap,
    SequenceRegression,
)
from cardshoe.drivers.protocol.cardid import CardId
from cardshoe.drivers.protocol.error_codes import ErrorCode
from cardshoe.drivers.protocol.messages import (
    ButtonPressed,
    CardRead,
    CutCard,
    Fault,
    FaultCleared,
    FaultKind,
    MessageType,
    OperationDone,
    SelfTestResult,
    SensorFlag,
    ShoeEmpty,
)

_LOGGER = logging.getLogger(__name__)

DEALER_BUTTON = 0
"""BUTTON number of the dealer button (docs/protocol.md); others are device-specific."""
MAX_AUTOMATIC_STEPS = 64
"""More automatic transitions than this after one input means the tables loop: a bug."""
CARDS_PER_DECK = 52


class HoldReason(StrEnum):
    """Holds other than device faults, which are named fault.<kind> (fault_hold)."""

    LINK_LOST = "link_lost"
    SEQUENCE_GAP = "sequence_gap"
    SEQUENCE_REGRESSION = "sequence_regression"
    FACE_DOWN_CARD = "face_down_card"
    SELF_TEST_FAILED = "self_test_failed"
    FIRMWARE_NOT_APPROVED = "firmware_not_approved"


OPERATOR_CLEARED_HOLDS = frozenset({HoldReason.SEQUENCE_GAP, HoldReason.SEQUENCE_REGRESSION})
"""Holds no device event can end: a person must look and clear them (ClearHold)."""


def fault_hold(kind: FaultKind) -> str:
    return f"fault.{kind.name.lower()}"


HOLD_ALARMS: dict[str, AlarmKind] = {
    HoldReason.SEQUENCE_GAP: AlarmKind.SEQUENCE_GAP,
    HoldReason.SEQUENCE_REGRESSION: AlarmKind.SEQUENCE_GAP,
    HoldReason.SELF_TEST_FAILED: AlarmKind.DEVICE_FAULT,
    HoldReason.FIRMWARE_NOT_APPROVED: AlarmKind.FIRMWARE,
    fault_hold(FaultKind.TAMPER): AlarmKind.TAMPER,
    fault_hold(FaultKind.FIRMWARE_HASH_MISMATCH): AlarmKind.FIRMWARE,
    fault_hold(FaultKind.CARD_COUNT_MISMATCH): AlarmKind.CARD_COUNT,
    fault_hold(FaultKind.MEMORY_FAILURE): AlarmKind.DEVICE_FAULT,
}
"""Holds that are also alarms: the pit must look, not only wait for the device."""


class Fact(NamedTuple):
    """An established fact with the shoe and round it belongs to, for the journal."""

    event: TableEvent
    shoe_id: str | None
    round_no: int | None


CardDue = Hand | BurnReason
"""What the next card from the shoe is for: a hand, or a burn."""


@dataclass
class FeedGroup:
    """A double feed whose remaining cards are still to be reported."""

    group: int
    remaining: int
    burn: BurnReason | None
    """The group's cards are burned for this reason; None: set aside in the round."""


@dataclass
class Round:
    number: int
    demo: bool
    deal: RoundInProgress
    void_reason: str | None = None
    cards: list[Card | None] = field(default_factory=list)
    """Every card the round took: assigned or set aside."""


@dataclass
class ShoeState:
    shoe_id: str
    deck_set: int | None
    loaded: int
    seen: set[CardId] = field(default_factory=set)
    copies: Counter[Card] = field(default_factory=Counter)
    """Cards out of the shoe; an automatic machine takes them back, and may deal them again,
    after each return (continuous shuffling)."""
    dealt: int = 0
    """Cards a round took (assigned to a hand or set aside in a void round)."""
    burned: int = 0
    intruders: int = 0
    """Cards that came out but were never loaded: foreign, a physical card seen twice, or a
    copy more than the decks hold. The shoe held them on top of what was loaded."""
    returned: int = 0
    cards_out: int = 0
    """Cards taken out of the automatic machine since its last shuffle or return."""
    burn_reason: BurnReason | None = None
    burn_remaining: int | None = 0
    """Cards still to burn; None until the first card of the start-of-shoe burn is seen."""
    rounds_opened: int = 0
    rounds_finished: int = 0
    last_round: int | None = None
    empty: bool = False
    feed: FeedGroup | None = None


class TableModel:
    """The state of one table; the procedure Machine drives it (see procedure.py)."""

    state: str
    """Set by the Machine: a State value."""

    def __init__(self, config: TableConfig) -> None:
        self.config = config
        self.game = config.game.build_game()
        self.automatic = config.device.kind is DeviceMode.AUTO
        self.shoe: ShoeState | None = None
        self.round: Round | None = None
        self.holds: list[str] = []
        self.held_state: State | None = None
        self._facts: list[Fact] = []
        self.machine = build_machine(self)

    # The one entry point

    def apply(self, item: Any) -> list[Fact]:
        """Feed one input and run on; the facts established, in order."""
        self._dispatch(item)
        for _ in range(MAX_AUTOMATIC_STEPS):
            step = self.machine.first_allowed(self, AUTOMATIC_FROM[self.state])
            if step is None:
                break
            self.trigger(step)
        else:
            self._fail(RuntimeError(f"automatic transitions keep firing in state {self.state}"))
        facts, self._facts = self._facts, []
        return facts

    def _dispatch(self, item: Any) -> None:
        match item:
            case CardRead():
                self.trigger(Trigger.CARD, event=item)
            case CutCard():
                self.trigger(Trigger.CUT_CARD)
            case ShoeEmpty():
                self.trigger(Trigger.SHOE_EMPTY)
            case ButtonPressed(button=button) if button == DEALER_BUTTON:
                self.trigger(Trigger.DEALER_BUTTON)
            case ButtonPressed():
                return
            case Fault(kind=kind):
                self.trigger(Trigger.HOLD, reason=fault_hold(kind))
            case FaultCleared(kind=kind):
                self.trigger(Trigger.RELEASE, reason=fault_hold(kind))
            case SelfTestResult():
                self._self_test(item)
            case OperationDone(operation=MessageType.SHUFFLE):
                self.trigger(Trigger.SHUFFLED, done=item)
            case OperationDone():
                self.trigger(Trigger.RETURNED, done=item)
            case StartShoe():
                self.trigger(Trigger.START_SHOE, command=item)
            case ShoeLoaded():
                self.trigger(Trigger.SHOE_LOADED)
            case CutDone():
                self.trigger(Trigger.CUT_DONE)
            case CloseBets():
                self.trigger(Trigger.CLOSE_BETS)
            case ConfirmFaceUp():
                self.trigger(Trigger.CONFIRM_FACE_UP)
            case EndShoe():
                self.trigger(Trigger.END_SHOE)
            case AbandonShoe(reason=reason):
                self.trigger(Trigger.ABANDON_SHOE, reason=reason)
            case ClearHold(reason=reason):
                self.trigger(Trigger.CLEAR_HOLD, reason=reason)
            case DeviceCount():
                self.trigger(Trigger.RECONCILE, count=item)
            case LinkLost():
                self.trigger(Trigger.HOLD, reason=HoldReason.LINK_LOST)
            case LinkRestored():
                self.trigger(Trigger.RELEASE, reason=HoldReason.LINK_LOST)
            case SequenceGap():
                self.trigger(Trigger.HOLD, reason=HoldReason.SEQUENCE_GAP)
            case SequenceRegression():
                self.trigger(Trigger.HOLD, reason=HoldReason.SEQUENCE_REGRESSION)
            case ProtocolViolation(reason=reason):
                self._emit(
                    Alarm(AlarmKind.DEVICE_FAULT, f"the device broke the protocol: {reason}")
                )
            case _:
                raise TypeError(f"{item!r} is not an input of the table procedure")

    def _self_test(self, result: SelfTestResult) -> None:
        self.trigger(
            Trigger.HOLD if result.failures else Trigger.RELEASE,
            reason=HoldReason.SELF_TEST_FAILED,
        )
        approved = self.config.device.firmware_approved(result.firmware_hash)
        self.trigger(
            Trigger.RELEASE if approved else Trigger.HOLD,
            reason=HoldReason.FIRMWARE_NOT_APPROVED,
        )

    # What the session and the displays read

    @property
    def shoe_id(self) -> str | None:
        return None if self.shoe is None else self.shoe.shoe_id

    @property
    def round_no(self) -> int | None:
        return None if self.round is None else self.round.number

    @property
    def position(self) -> State:
        """Where the procedure stands, or stood when a hold interrupted it."""
        if self.state == State.HELD and self.held_state is not None:
            return self.held_state
        return State(self.state)

    def card_due(self) -> CardDue | None:
        """What the next card is for, or None when no card may leave now."""
        if self.state in (State.HELD, State.FAULT):
            return None
        return self._due_at(self.position)

    def _due_at(self, position: State) -> CardDue | None:
        shoe = self.shoe
        if shoe is None or shoe.feed is not None:
            return None
        if position in (State.BURNING, State.ROUND_BURN) and shoe.burn_remaining != 0:
            return shoe.burn_reason
        if position is State.DEALING and self.round is not None and not self.round.void_reason:
            return self.round.deal.next_recipient()
        return None

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
    def counts_wanted(self) -> bool:
        """The shoe has ended: the device's counts are needed to reconcile it."""
        return self.state == State.SHOE_ENDED

    # Guards: no side effects

    def uses_cut_card(self, event: EventData) -> bool:
        return not self.automatic

    def operation_succeeded(self, event: EventData) -> bool:
        return event.kwargs["done"].result is ErrorCode.OK

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

    def burns_each_round(self, event: EventData) -> bool:
        return self.config.game.round_burn > 0

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

    # Actions: opening a shoe

    def open_shoe(self, event: EventData) -> None:
        command: StartShoe = event.kwargs["command"]
        decks = self.config.game.decks
        self.shoe = ShoeState(command.shoe_id, command.deck_set, loaded=decks * CARDS_PER_DECK)
        self._emit(
            ShoeStarted(
                command.shoe_id,
                self.game.name,
                decks,
                str(self.config.device.kind),
                self.config.fingerprint,
                command.deck_set,
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
        if done.card_count != expected:
            self._emit(
                Alarm(
                    AlarmKind.CARD_COUNT,
                    f"the machine shuffled {done.card_count} cards; "
                    f"{self.config.game.decks} decks hold {expected}",
                )
            )

    def fail_shuffle(self, event: EventData) -> None:
        done: OperationDone = event.kwargs["done"]
        self._emit(Alarm(AlarmKind.DEVICE_FAULT, f"shuffle failed: {done.result.name}"))
        self._close_shoe(reconciled=False)

    # Actions: rounds

    def open_round(self, event: EventData) -> None:
        shoe = self._open_shoe()
        shoe.rounds_opened += 1
        number = shoe.rounds_opened
        demo = number <= self.config.game.demo_rounds
        self.round = Round(number, demo, self.game.new_round())
        self._emit(RoundOpened(number, demo))

    def record_bets_closed(self, event: EventData) -> None:
        shoe, current = self._open_shoe(), self._open_round()
        by = "dealer_button" if event.event.name == Trigger.DEALER_BUTTON else "command"
        self._emit(BetsClosed(current.number, by))
        if self.config.game.round_burn:
            shoe.burn_reason = BurnReason.START_OF_ROUND
            shoe.burn_remaining = self.config.game.round_burn

    def settle_round(self, event: EventData) -> None:
        current = self._open_round()
        outcome = current.deal.outcome()
        settlement = None if current.demo else self.game.net_returns(outcome)
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
                outcome.player_pair,
                outcome.banker_pair,
                outcome.sevens,
                settlement,
            )
        )
        self._finish_round()

    def void_round(self, event: EventData) -> None:
        current = self._open_round()
        self._emit(RoundVoided(current.number, current.void_reason or "", tuple(current.cards)))
        self._finish_round()

    def record_return(self, event: EventData) -> None:
        done: OperationDone = event.kwargs["done"]
        shoe = self._open_shoe()
        expected = shoe.cards_out
        self._emit(CardsReturned(expected, done.card_count))
        if done.result is not ErrorCode.OK or done.card_count != expected:
            self._emit(
                Alarm(
                    AlarmKind.CARD_COUNT,
                    f"return {done.result.name}: the machine took back {done.card_count} "
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
        self._set_last_round(self._current_round_number(), "house")

    def reconcile_shoe(self, event: EventData) -> None:
        count: DeviceCount = event.kwargs["count"]
        shoe = self._open_shoe()
        taken = shoe.dealt + shoe.burned
        problems = []
        if count.cards_dealt != taken:
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

    def _set_last_round(self, last: int, cause: str) -> None:
        shoe = self._open_shoe()
        if shoe.last_round is None or last < shoe.last_round:
            shoe.last_round = last
            self._emit(LastRoundSet(last, cause))

    def take_card(self, event: EventData) -> None:
        card_event: CardRead = event.kwargs["event"]
        shoe = self.shoe
        if shoe is None:
            self._take_card_without_shoe(card_event)
            return
        if shoe.deck_set is None:
            self._adopt_deck_set(shoe, card_event)
        feed = shoe.feed
        continuing = feed is not None and card_event.feed_group == feed.group
        if feed is not None and not continuing:
            shoe.feed = feed = None
        starts_group = bool(card_event.flags & SensorFlag.DOUBLE_FEED_SUSPECTED) and not continuing
        due = self._due_at(self.position)
        inspection = inspect_card(
            card_event,
            automatic=self.automatic,
            deck_set=shoe.deck_set,
            decks=self.config.game.decks,
            seen=shoe.seen,
            copies=shoe.copies,
            starts_feed_group=starts_group,
        )
        findings = list(inspection.findings)
        if self.state == State.HELD:
            findings.append(Irregularity.CARD_DURING_HOLD)
        self._count_card(shoe, inspection)
        if feed is not None:
            self._take_group_card(shoe, feed, inspection)
        elif isinstance(due, Hand) and not inspection.voids:
            self._assign(inspection, findings)
        elif isinstance(due, Hand):
            self._set_aside(inspection, inspection.voids[0], findings)
        else:
            self._burn(inspection, due, findings)
        if starts_group:
            group_burn = None if isinstance(due, Hand) else (due or BurnReason.IRREGULAR)
            shoe.feed = FeedGroup(card_event.feed_group, card_event.feed_size - 1, group_burn)
            if shoe.feed.remaining <= 0:
                shoe.feed = None

    def _take_card_without_shoe(self, card_event: CardRead) -> None:
        card_id = card_event.card
        inspection = CardInspection(card_id, ())
        findings = [Irregularity.CARD_OUTSIDE_ROUND]
        if self.state == State.HELD:
            findings.append(Irregularity.CARD_DURING_HOLD)
        self._burn(inspection, BurnReason.IRREGULAR, findings)

    def _adopt_deck_set(self, shoe: ShoeState, card_event: CardRead) -> None:
        card_id = card_event.card
        if card_id is not None:
            shoe.deck_set = card_id.deck_set
            self._emit(DeckSetAdopted(card_id.deck_set))

    def _count_card(self, shoe: ShoeState, inspection: CardInspection) -> None:
        shoe.cards_out += 1
        if any(code in INTRUDER_FINDINGS for code in inspection.findings):
            shoe.intruders += 1
        card_id, card = inspection.card_id, inspection.card
        if card_id is not None and card is not None and inspection.belongs_to_shoe:
            if card_id.tagged:
                shoe.seen.add(card_id)
            shoe.copies[card] += 1

    def _take_group_card(
        self, shoe: ShoeState, feed: FeedGroup, inspection: CardInspection
    ) -> None:
        feed.remaining -= 1
        if feed.remaining <= 0:
            shoe.feed = None
        extra = [code for code in inspection.findings if code is not Irregularity.DOUBLE_FEED]
        if feed.burn is None and self.round is not None:
            self._set_aside(inspection, Irregularity.DOUBLE_FEED, extra)
        else:
            self._burn(inspection, feed.burn or BurnReason.IRREGULAR, extra)

    def _assign(self, inspection: CardInspection, findings: list[Irregularity]) -> None:
        current, card, card_id = self._open_round(), inspection.card, inspection.card_id
        assert card is not None and card_id is not None
        hand = current.deal.deal(card)
        current.cards.append(card)
        self._open_shoe().dealt += 1
        self._emit(
            CardAssigned(current.number, card, str(card_id), hand, current.deal.next_recipient())
        )
        self._record_findings(inspection, findings, Consequence.RECORD)
        if Irregularity.FACE_DOWN_CARD in findings:
            self.trigger(Trigger.HOLD, reason=HoldReason.FACE_DOWN_CARD)

    def _set_aside(
        self, inspection: CardInspection, reason: str, findings: list[Irregularity]
    ) -> None:
        current = self._open_round()
        current.cards.append(inspection.card)
        self._open_shoe().dealt += 1
        if current.void_reason is None:
            current.void_reason = reason
        self._emit(
            CardSetAside(current.number, inspection.card, _physical(inspection), str(reason))
        )
        self._record_findings(inspection, findings, Consequence.RECORD)

    def _burn(
        self,
        inspection: CardInspection,
        reason: BurnReason | None,
        findings: list[Irregularity],
    ) -> None:
        shoe = self.shoe
        if reason is None:
            reason = BurnReason.IRREGULAR
            findings = [
                *findings,
                Irregularity.CARD_AFTER_ROUND
                if self._after_a_round()
                else Irregularity.CARD_OUTSIDE_ROUND,
            ]
        remaining = None
        if shoe is not None:
            shoe.burned += 1
            remaining = self._count_burn(shoe, reason, inspection.card)
        self._emit(Burned(inspection.card, _physical(inspection), reason, remaining))
        self._record_findings(inspection, findings, Consequence.BURN)

    def _after_a_round(self) -> bool:
        """A card that comes when its round is complete (or void) and no other is dealing."""
        position = self.position
        if position in (State.DEALING, State.RETURNING):
            return True
        return position in (State.READY, State.BETTING) and bool(
            self.shoe and self.shoe.rounds_finished
        )

    def _count_burn(self, shoe: ShoeState, reason: BurnReason, card: Card | None) -> int | None:
        if reason is BurnReason.IRREGULAR or reason is not shoe.burn_reason:
            return shoe.burn_remaining
        if shoe.burn_remaining is None:
            shoe.burn_remaining = self._start_burn_total(card)
        shoe.burn_remaining = max(0, shoe.burn_remaining - 1)
        return shoe.burn_remaining

    def _start_burn_total(self, first: Card | None) -> int:
        """Cards the start-of-shoe burn takes, the first card included.

        An unreadable first card cannot say how many cards follow it under
        the first-card policy; the burn then takes one card per deck, the
        rule Art. 2.1 states first. The other policies do not look at it.
        """
        decks, rules = self.config.game.decks, self.config.shoe
        if first is not None:
            return rules.start_burn_count(decks, first)
        if rules.burn is BurnPolicy.FIXED and rules.burn_fixed is not None:
            return rules.burn_fixed
        return decks

    def _record_findings(
        self, inspection: CardInspection, findings: list[Irregularity], placed_as: Consequence
    ) -> None:
        """Record each finding with what it did here; alarm once per kind of alarm."""
        alarms: dict[AlarmKind, Irregularity] = {}
        for code in findings:
            rule = IRREGULARITIES[code]
            consequence = rule.consequence
            if placed_as is Consequence.BURN and consequence is not Consequence.RECORD:
                consequence = Consequence.BURN
            self._record_irregularity(code, inspection.card, _physical(inspection), consequence)
            if rule.alarm is not None:
                alarms.setdefault(rule.alarm, code)
        for kind, code in alarms.items():
            self._emit(Alarm(kind, f"{code}: {_physical(inspection) or 'unreadable card'}"))

    def _record_irregularity(
        self,
        code: Irregularity,
        card: Card | None,
        physical: str | None,
        consequence: Consequence | None = None,
    ) -> None:
        rule = IRREGULARITIES[code]
        self._emit(
            IrregularityFound(
                code.value,
                self.round_no,
                card,
                physical,
                (consequence or rule.consequence).value,
                rule.meaning,
            )
        )

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
        if reason in OPERATOR_CLEARED_HOLDS:
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
            self._violation(f"{event.event.name} is not allowed in state {self.state}")
            return
        self._fail(error)

    def after_every_trigger(self, event: EventData) -> None:
        """finalize_event: a trigger that no guard let through is a violation, never ignored."""
        if event.error is None and not event.result and event.event.name not in AUTOMATIC:
            self._violation(f"{event.event.name} is not allowed now (state {self.state})")

    def _violation(self, detail: str) -> None:
        _LOGGER.warning("procedure violation: %s", detail)
        self._emit(Alarm(AlarmKind.PROCEDURE_VIOLATION, detail))

    def _fail(self, error: BaseException | None) -> None:
        _LOGGER.error("the procedure raised; the table stops in the fault state", exc_info=error)
        self._emit(Alarm(AlarmKind.SOFTWARE_FAULT, repr(error)))
        if self.state != State.FAULT:
            self.trigger(Trigger.FAIL)

    # Helpers

    def _emit(self, event: TableEvent) -> None:
        self._facts.append(Fact(event, self.shoe_id, self.round_no))

    def _open_shoe(self) -> ShoeState:
        if self.shoe is None:
            raise RuntimeError(f"no shoe is open in state {self.state}")
        return self.shoe

    def _open_round(self) -> Round:
        if self.round is None:
            raise RuntimeError(f"no round is open in state {self.state}")
        return self.round

    # Bound by the Machine (declared for type checkers)
    trigger: Callable[..., bool]


def _physical(inspection: CardInspection) -> str | None:
    return None if inspection.card_id is None else str(inspection.card_id)


def _held_in(state: State) -> Callable[[TableModel, EventData], bool]:
    def guard(self: TableModel, event: EventData) -> bool:
        return self.held_state == state

    guard.__name__ = f"was_held_in_{state}"
    return guard


for _state in HOLDABLE:
    setattr(TableModel, f"was_held_in_{_state}", _held_in(_state))
