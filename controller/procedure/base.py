"""What every job of the table model stands on: the shoe and round in play, and the facts.

The table model is one object the procedure Machine drives. Its jobs live in a
chain of classes, one module each, so that each job can be read alone and a type
checker sees every name a job uses from the jobs below it:
TableBase (here) <- DeckSetWatch (deck_set.py) <- Dealing (dealing.py) <- Rounds
(rounds.py) <- ShoeCycle (shoe_cycle.py) <- SupervisorCorrections (supervisor.py)
<- TableModel (table.py). This base holds what all of them read (the shoe, the
round, the holds, where the procedure stands, what the next card is for) and the
one way a fact is established or an irregularity recorded. Like the whole model,
it does no I/O: it emits facts.
"""

from __future__ import annotations

from collections.abc import Callable

from cardshoe.controller.config import DeviceMode, TableConfig
from cardshoe.controller.procedure.facts import Alarm, AlarmKind, IrregularityFound, TableEvent
from cardshoe.controller.procedure.irregularities import (
    IRREGULARITIES,
    CardInspection,
    Consequence,
    Irregularity,
)
from cardshoe.controller.procedure.machine import STATES, State
from cardshoe.controller.procedure.shoe import CardDue, Fact, Round, ShoeState
from cardshoe.controller.rules.cards import Card


class TableBase:
    """The shoe and round in play, the holds, and the facts established so far."""

    state: str
    """Set by the Machine: a State value."""

    def __init__(self, config: TableConfig) -> None:
        self.config = config
        self.game = config.game.build_game()
        self.automatic = config.device.kind is DeviceMode.AUTO
        self.shoe: ShoeState | None = None
        self.round: Round | None = None
        self.holds: list[str] = []
        self.faults_a_person_ends: set[str] = set()
        """Device fault holds whose device never reports the fault's end (FaultRaised with
        reports_end false): a supervisor clears them, as the other OPERATOR_CLEARED_HOLDS."""
        self.held_state: State | None = None
        self._facts: list[Fact] = []

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
        return STATES[self.state]

    def card_due(self) -> CardDue | None:
        """What the next card is for, or None when no card may leave now."""
        if self.state in (State.HELD, State.FAULT):
            return None
        return self._due_at(self.position)

    def _due_at(self, position: State, *, within_ordered_feed: bool = False) -> CardDue | None:
        """What a card leaving now is for; None while a double feed's cards are still coming,
        unless within_ordered_feed: the card is one of a group read in order (FEED_IN_ORDER),
        each of whose cards goes where a single card would."""
        shoe = self.shoe
        if shoe is None:
            return None
        if shoe.feed is not None and not (within_ordered_feed and shoe.feed.in_order):
            return None
        if position in (State.BURNING, State.ROUND_BURN) and shoe.burn_remaining != 0:
            return shoe.burn_reason
        if position is State.DEALING and self.round is not None and not self.round.void_reason:
            return self.round.deal.next_recipient()
        return None

    def _record_findings(
        self, inspection: CardInspection, findings: list[Irregularity], placed_as: Consequence
    ) -> None:
        """Record each finding with what it did here; alarm once per kind of alarm."""
        if not findings:  # nearly every card
            return
        alarms: dict[AlarmKind, Irregularity] = {}
        for code in findings:
            rule = IRREGULARITIES[code]
            consequence = rule.consequence
            if placed_as is Consequence.BURN and consequence is not Consequence.RECORD:
                consequence = Consequence.BURN
            elif placed_as is Consequence.VOID_ROUND and consequence is Consequence.HOLD:
                consequence = Consequence.VOID_ROUND  # no hold: the card's round is void
            self._record_irregularity(code, inspection.card, physical_id(inspection), consequence)
            if rule.alarm is not None:
                alarms.setdefault(rule.alarm, code)
        for kind, code in alarms.items():
            self._emit(Alarm(kind, f"{code}: {physical_id(inspection) or 'unreadable card'}"))

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

    # Helpers

    def _emit(self, event: TableEvent, *, about: int | None = None) -> None:
        """Establish a fact of the round in play, or of round `about` (one already ended)."""
        self._facts.append(Fact(event, self.shoe_id, self.round_no if about is None else about))

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


def physical_id(inspection: CardInspection) -> str | None:
    return None if inspection.card_id is None else str(inspection.card_id)
