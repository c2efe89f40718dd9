"""Random legal and illegal inputs: the procedure never leaves its defined states.

Hypothesis drives the procedure with every kind of input it can receive, in
any order: cards (good, foreign, duplicate, unreadable, reversed, double
feeds), the cut card, buttons, faults, link events, shuffles and returns,
and every operator command (dealers' sign-ins and reliefs too), whether the
state allows it or not. After every
step the invariants below must hold; at the end, replaying the same inputs
through a fresh model must give the same facts and the same state, and so must
replaying them through transitions' own generic trigger path, which the
model's compiled dispatch (dispatch.py) stands in for.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from support.generic_dispatch import through_transitions
from support.table_inputs import DECK_SET, Device, Table, tagged_shoe

from cardshoe.controller.config import (
    BurnPolicy,
    CutCardPolicy,
    DeviceConfig,
    DeviceMode,
    GameConfig,
    ShoeProcedure,
    TableConfig,
)
from cardshoe.controller.procedure.facts import AlarmKind, Burned, CardAssigned, CardSetAside
from cardshoe.controller.procedure.holds import HoldReason
from cardshoe.controller.procedure.inputs import DeviceCount
from cardshoe.controller.procedure.machine import State
from cardshoe.controller.procedure.operator_commands import (
    AbandonShoe,
    ClearHold,
    CloseBets,
    ConfirmFaceUp,
    CutDone,
    EndShoe,
    ShoeLoaded,
    SignIn,
    StartShoe,
)
from cardshoe.controller.procedure.table import TableModel
from cardshoe.controller.rules.games import GAME_NAMES
from cardshoe.drivers.api.events import (
    CardId,
    CardSeen,
    DeviceIdentity,
    DeviceKind,
    FaultKind,
    LinkLost,
    LinkRestored,
    Orientation,
    SelfTestDone,
    SequenceGap,
)

CARD_EVENTS = (Burned, CardAssigned, CardSetAside)
FAULTS = (FaultKind.DOOR_OPEN, FaultKind.JAM, FaultKind.TAMPER)
IDENTITY = DeviceIdentity(DeviceKind.SHOE, "", "", "", bytes(32), "cardshoe", "1.3", None, 1, 0)
DECKS = {"punto-banco": 4, "seven-up": 4, "macau-1": 6, "macau-2": 6}


class ProcedureMachine(RuleBasedStateMachine):
    automatic = False

    def __init__(self) -> None:
        super().__init__()
        self.table: Table | None = None
        self.cards: list[CardId] = []
        self.drawn: list[CardId] = []
        self.shoe_cards = 0
        self.card_inputs = 0

    # Setting up: one table configuration per run

    @precondition(lambda self: self.table is None)
    @rule(
        game=st.sampled_from(GAME_NAMES),
        demo_rounds=st.integers(0, 2),
        round_burn=st.integers(0, 2),
        relief_burn=st.integers(0, 2),
        burn=st.sampled_from(list(BurnPolicy)),
        cut_card=st.sampled_from(list(CutCardPolicy)),
        seed=st.integers(0, 10_000),
    )
    def configure(
        self,
        game: str,
        demo_rounds: int,
        round_burn: int,
        relief_burn: int,
        burn: BurnPolicy,
        cut_card: CutCardPolicy,
        seed: int,
    ) -> None:
        game_config = GameConfig(
            name=game,
            decks=DECKS[game],
            demo_rounds=demo_rounds,
            round_burn=round_burn,
            relief_burn=relief_burn,
        )
        if self.automatic:
            config = TableConfig(game=game_config, device=DeviceConfig(kind=DeviceMode.AUTO))
        else:
            fixed = 2 if burn is BurnPolicy.FIXED else None
            shoe = ShoeProcedure(burn=burn, burn_fixed=fixed, cut_card=cut_card, cut_card_depth=20)
            config = TableConfig(game=game_config, shoe=shoe)
        self.table = Table(config)
        self.cards = tagged_shoe(DECKS[game], seed)

    def _feed(self, *items: object) -> None:
        assert self.table is not None
        for item in items:
            shoe_open = self.table.model.shoe is not None
            another_card = isinstance(item, CardSeen) and not self._passes_a_misread_card_again()
            facts = self.table.feed(item)
            if another_card:
                self.card_inputs += 1
                self.shoe_cards += shoe_open
            if self.table.model.shoe is None:
                self.shoe_cards = 0
            kinds = [getattr(fact.event, "kind", None) for fact in facts]
            assert AlarmKind.SOFTWARE_FAULT not in kinds

    def _passes_a_misread_card_again(self) -> bool:
        """The next card read is a misread card passed through the reader again (Art. 10):
        the same physical card, no second card out of the shoe."""
        assert self.table is not None
        shoe, current = self.table.model.shoe, self.table.model.round
        awaited = current is not None and current.misread is not None
        return shoe is not None and (shoe.first_card_unread or awaited)

    @property
    def device(self) -> Device:
        assert self.table is not None
        return self.table.device

    # Cards

    @precondition(lambda self: self.table is not None and self.cards)
    @rule()
    def draw_next(self) -> None:
        card = self.cards.pop(0)
        self.drawn.append(card)
        self._feed(self.device.card(card))

    @precondition(lambda self: self.table is not None and len(self.cards) > 12)
    @rule()
    def draw_while_due(self) -> None:
        assert self.table is not None
        steps = 0
        while self.table.model.card_due() is not None and self.cards and steps < 12:
            self.draw_next()
            steps += 1

    @precondition(lambda self: self.table is not None)
    @rule(kind=st.sampled_from(["foreign", "duplicate", "misread", "reversed", "face_down"]))
    def draw_irregular(self, kind: str) -> None:
        card = CardId(1, 0, DECK_SET, 1)
        orientation = None
        if kind == "foreign":
            card = CardId(5, 2, DECK_SET + 7, 1)
        elif kind == "duplicate" and self.drawn:
            card = self.drawn[-1]
        elif kind in ("reversed", "face_down"):
            orientation = Orientation.FACE_DOWN if kind == "face_down" else Orientation.FACE_UP
        self._feed(self.device.card(None if kind == "misread" else card, orientation=orientation))

    @precondition(lambda self: self.table is not None and len(self.cards) >= 3)
    @rule(size=st.integers(2, 3))
    def double_feed(self, size: int) -> None:
        group = [self.cards.pop(0) for _ in range(size)]
        self._feed(*self.device.double_feed(group))

    # Other device and driver events

    @precondition(lambda self: self.table is not None)
    @rule(number=st.sampled_from([0, 0, 0, 1]))
    def button(self, number: int) -> None:
        self._feed(self.device.button(number))

    @precondition(lambda self: self.table is not None)
    @rule()
    def cut_card(self) -> None:
        self._feed(self.device.cut_card())

    @precondition(lambda self: self.table is not None)
    @rule()
    def shoe_empty(self) -> None:
        self._feed(self.device.shoe_empty(len(self.drawn)))

    @precondition(lambda self: self.table is not None)
    @rule(kind=st.sampled_from(FAULTS), cleared=st.booleans())
    def fault(self, kind: FaultKind, cleared: bool) -> None:
        self._feed(self.device.fault_cleared(kind) if cleared else self.device.fault(kind))

    @precondition(lambda self: self.table is not None)
    @rule(event=st.sampled_from(["lost", "restored", "gap"]))
    def link(self, event: str) -> None:
        item = {
            "lost": LinkLost("unplugged"),
            "restored": LinkRestored(IDENTITY),
            "gap": SequenceGap(self.device.seq + 1, self.device.seq + 3),
        }[event]
        self._feed(item)

    @precondition(lambda self: self.table is not None)
    @rule(passed=st.booleans())
    def self_test(self, passed: bool) -> None:
        failures = () if passed else (FaultKind.SENSOR_FAILURE,)
        self.device.seq += 1
        self._feed(SelfTestDone(self.device.seq, 0, 9, failures, bytes(32)))

    @precondition(lambda self: self.table is not None)
    @rule(ok=st.booleans(), count=st.sampled_from([0, 1, 4, 5, 6]))
    def operation_done(self, ok: bool, count: int) -> None:
        assert self.table is not None
        if self.table.model.shuffle_wanted and ok:
            self._feed(self.device.shuffled(52 * self.table.config.game.decks))
        elif ok:
            self._feed(self.device.returned(self.table.model.cards_to_return or count))
        else:
            self._feed(self.device.returned(count, "shoe_empty"))

    # Operator and host commands

    @precondition(lambda self: self.table is not None)
    @rule(
        command=st.sampled_from(
            [
                StartShoe("S", DECK_SET),
                StartShoe("S", None),
                ShoeLoaded(),
                CutDone(),
                CloseBets(),
                ConfirmFaceUp(),
                EndShoe(),
                AbandonShoe("test"),
                ClearHold(HoldReason.SEQUENCE_GAP),
                ClearHold("fault.jam"),
                SignIn("bob", "alice"),
                SignIn("alice", "bob"),
                SignIn("alice", None),
                SignIn("alice", "alice"),
            ]
        )
    )
    def command(self, command: object) -> None:
        self._feed(command)

    @precondition(lambda self: self.table is not None)
    @rule(exact=st.booleans())
    def device_count(self, exact: bool) -> None:
        assert self.table is not None
        shoe = self.table.model.shoe
        taken = 0 if shoe is None else shoe.dealt + shoe.burned
        self._feed(DeviceCount(taken if exact else taken + 1, None))

    # Invariants

    @invariant()
    def the_state_is_defined_and_not_the_fault(self) -> None:
        if self.table is None:
            return
        assert self.table.state in set(State)
        assert self.table.state != State.FAULT

    @invariant()
    def held_exactly_while_a_hold_is_active(self) -> None:
        if self.table is None:
            return
        model = self.table.model
        assert (model.state == State.HELD) == bool(model.holds)
        assert (model.state == State.HELD) == (model.held_state is not None)

    @invariant()
    def every_card_is_counted_once(self) -> None:
        if self.table is None:
            return
        counted = Counter(type(fact.event) for fact in self.table.facts)
        # A misread card due to a hand keeps its place with no card fact until it is re-read,
        # entered, or set aside with its round (dealing.py's _await_reread).
        current = self.table.model.round
        awaiting = int(current is not None and current.misread is not None)
        assert sum(counted[kind] for kind in CARD_EVENTS) == self.card_inputs - awaiting
        shoe = self.table.model.shoe
        if shoe is not None:
            assert shoe.dealt + shoe.burned == self.shoe_cards
            assert shoe.cards_out <= shoe.dealt + shoe.burned

    @invariant()
    def no_round_is_left_complete_or_void_while_dealing(self) -> None:
        if self.table is None:
            return
        model = self.table.model
        if model.state == State.DEALING and model.shoe is not None and model.shoe.feed is None:
            assert model.round is not None
            assert model.round.void_reason is None
            assert not model.round.deal.is_complete
            assert model.card_due() is not None

    @invariant()
    def a_round_never_takes_more_than_six_cards_into_hands(self) -> None:
        if self.table is None or self.table.model.round is None:
            return
        assert len(self.table.model.round.deal.dealt) <= 6

    def teardown(self) -> None:
        if self.table is None:
            return
        for replayed in (
            TableModel(self.table.config),
            through_transitions(TableModel(self.table.config)),
        ):
            facts = [fact for item in self.table.inputs for fact in replayed.apply(item)]
            assert facts == self.table.facts
            assert replayed.state == self.table.state
            assert replayed.holds == self.table.model.holds
            assert replayed.shoe == self.table.model.shoe


class AutomaticProcedureMachine(ProcedureMachine):
    automatic = True


RUN_SETTINGS = settings(max_examples=60, stateful_step_count=60, deadline=None)
TestManualShoeProcedure = ProcedureMachine.TestCase
TestManualShoeProcedure.settings = RUN_SETTINGS
TestAutomaticMachineProcedure = AutomaticProcedureMachine.TestCase
TestAutomaticMachineProcedure.settings = RUN_SETTINGS
