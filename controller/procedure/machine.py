"""The dealing procedure as data: states, triggers and transitions of one flat Machine.

A shoe goes idle -> loading -> cut -> burning (manual shoe) or idle ->
shuffling (automatic machine, no cut and no burn: Macau Art. 2.3) -> ready,
then round after round: betting -> [round_burn: relief and round burns] -> dealing -> [returning]
-> ready, until the cut card's last round, an empty shoe or the house ends
it -> shoe_ended -> reconciliation -> idle. A hold (device fault, door,
jam, link lost, face-down card, sequence gap) takes the procedure from any
state to held and back to exactly that state.

The tables below are the whole procedure; guards (conditions/unless) and
actions (after) are names of TableModel methods (table.py, and the modules of
the jobs it builds on, listed in base.py). Guards have no side effects.
AUTOMATIC triggers are fired by the procedure itself whenever their guard
holds, so one device event can carry the table through several states (the
last card of a round: dealing -> returning -> ready -> betting for the next
round). The Machine is flat (a hierarchical one is about four
times slower), queued, and without auto transitions.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from cardshoe.controller.procedure.dispatch import ProcedureMachine


class State(StrEnum):
    IDLE = "idle"
    """No shoe open."""
    LOADING = "loading"
    """Manual shoe: the dealer shuffles the pack and loads the shoe."""
    CUT = "cut"
    """Manual shoe: the pack is cut and the cut card inserted (Art. 2.1)."""
    SHUFFLING = "shuffling"
    """Automatic machine: SHUFFLE under way."""
    BURNING = "burning"
    """Manual shoe: the start-of-shoe burn by the table's burn policy (Art. 2.1)."""
    READY = "ready"
    """Between rounds: the next round opens, or the shoe ends."""
    BETTING = "betting"
    """A round is open for bets."""
    ROUND_BURN = "round_burn"
    """The house's burn at the start of a round, after no more bets (Art. 8)."""
    DEALING = "dealing"
    """The initial deal and third cards, each card to the hand the rules engine names."""
    RETURNING = "returning"
    """Automatic machine: the round's cards go back in (Art. 7.2)."""
    SHOE_ENDED = "shoe_ended"
    """Waiting for the device's counts to reconcile the shoe."""
    HELD = "held"
    """Paused by one or more holds; resumes in the state it was held in."""
    FAULT = "fault"
    """The procedure itself raised an exception; only abandoning the shoe leaves it."""


STATES: Mapping[str, State] = {state.value: state for state in State}
"""Each state's value (as the Machine keeps it on the model) to its State: a lookup where
State(value) goes through Enum's call, asked several times for every card."""


class Trigger(StrEnum):
    # Operator and host commands
    START_SHOE = "start_shoe"
    SHOE_LOADED = "shoe_loaded"
    CUT_DONE = "cut_done"
    CLOSE_BETS = "close_bets"
    CONFIRM_FACE_UP = "confirm_face_up"
    END_SHOE = "end_shoe"
    ABANDON_SHOE = "abandon_shoe"
    CLEAR_HOLD = "clear_hold"
    VOID_CURRENT_ROUND = "void_current_round"
    ENTER_CARD = "enter_card"
    RECONCILE = "reconcile"
    PACK_COUNTED = "pack_counted"
    # Device and link events
    CARD = "card"
    CUT_CARD = "cut_card"
    SHOE_EMPTY = "shoe_empty"
    DEALER_BUTTON = "dealer_button"
    SHUFFLED = "shuffled"
    RETURNED = "returned"
    HOLD = "hold"
    RELEASE = "release"
    # Fired by the procedure itself (AUTOMATIC)
    BURN_DONE = "burn_done"
    NEXT_ROUND = "next_round"
    ROUND_VOID = "round_void"
    ROUND_COMPLETE = "round_complete"
    SHOE_OVER = "shoe_over"
    RESUME = "resume"
    FAIL = "fail"


AUTOMATIC: tuple[Trigger, ...] = (
    Trigger.RESUME,
    Trigger.ROUND_VOID,
    Trigger.ROUND_COMPLETE,
    Trigger.SHOE_OVER,
    Trigger.BURN_DONE,
    Trigger.NEXT_ROUND,
)
"""Tried in this order after every trigger; the first whose guard holds fires."""

SHOE_OPEN: tuple[State, ...] = (
    State.LOADING,
    State.CUT,
    State.SHUFFLING,
    State.BURNING,
    State.READY,
    State.BETTING,
    State.ROUND_BURN,
    State.DEALING,
    State.RETURNING,
    State.SHOE_ENDED,
)
HOLDABLE: tuple[State, ...] = (State.IDLE, *SHOE_OPEN)
"""States a hold can interrupt, and so the states it can resume to."""
ROUND_STATES: tuple[State, ...] = (State.BETTING, State.ROUND_BURN, State.DEALING)
"""States with a round open that has not yet completed or been voided."""
CARDS_LEAVE: tuple[State, ...] = (
    State.BURNING,
    State.READY,
    State.BETTING,
    State.ROUND_BURN,
    State.DEALING,
    State.RETURNING,
    State.HELD,
)
"""States in which cards may come out of the shoe, so the cut card may show."""


@dataclass(frozen=True)
class Transition:
    trigger: Trigger
    source: State | tuple[State, ...]
    dest: State | None
    """None: an internal transition, the state does not change."""
    conditions: tuple[str, ...] = ()
    unless: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    before: tuple[str, ...] = ()

    def as_dict(self, callback: Callable[[str], Any] = str) -> dict[str, Any]:
        """The transition as transitions takes it; `callback` gives each guard and action."""
        # Plain strings: transitions would take an Enum member by its name, not its value.
        sources = (self.source,) if isinstance(self.source, State) else self.source
        return {
            "trigger": str(self.trigger),
            "source": [str(state) for state in sources],
            "dest": None if self.dest is None else str(self.dest),
            "conditions": [callback(name) for name in self.conditions],
            "unless": [callback(name) for name in self.unless],
            "after": [callback(name) for name in self.after],
            "before": [callback(name) for name in self.before],
        }


T = Transition

TRANSITIONS: tuple[Transition, ...] = (
    # Opening a shoe
    T(Trigger.START_SHOE, State.IDLE, State.LOADING, ("uses_cut_card",), after=("open_shoe",)),
    T(
        Trigger.START_SHOE,
        State.IDLE,
        State.SHUFFLING,
        unless=("uses_cut_card",),
        after=("open_shoe",),
    ),
    T(Trigger.SHOE_LOADED, State.LOADING, State.CUT),
    T(Trigger.DEALER_BUTTON, State.LOADING, State.CUT),
    T(Trigger.CUT_DONE, State.CUT, State.BURNING, after=("start_shoe_burn",)),
    T(Trigger.DEALER_BUTTON, State.CUT, State.BURNING, after=("start_shoe_burn",)),
    T(
        Trigger.SHUFFLED,
        State.SHUFFLING,
        State.READY,
        ("operation_succeeded",),
        after=("record_shuffle",),
    ),
    T(
        Trigger.SHUFFLED,
        State.SHUFFLING,
        State.IDLE,
        unless=("operation_succeeded",),
        after=("fail_shuffle",),
    ),
    T(Trigger.BURN_DONE, State.BURNING, State.READY, ("burn_is_finished",)),
    # Rounds
    T(Trigger.NEXT_ROUND, State.READY, State.SHOE_ENDED, ("shoe_is_finished",)),
    T(
        Trigger.NEXT_ROUND,
        State.READY,
        State.BETTING,
        unless=("shoe_is_finished",),
        after=("open_round",),
    ),
    # The pit's no-more-bets and the dealer's button close the bets alike.
    *(
        closing
        for trigger in (Trigger.CLOSE_BETS, Trigger.DEALER_BUTTON)
        for closing in (
            T(
                trigger,
                State.BETTING,
                State.ROUND_BURN,
                ("burns_before_deal",),
                after=("record_bets_closed",),
            ),
            T(
                trigger,
                State.BETTING,
                State.DEALING,
                unless=("burns_before_deal",),
                after=("record_bets_closed",),
            ),
        )
    ),
    # A relief burn first, then the round's own burn (Art. 8), then the deal.
    T(
        Trigger.BURN_DONE,
        State.ROUND_BURN,
        None,
        ("burn_is_finished", "round_burn_follows"),
        after=("start_round_burn",),
    ),
    T(
        Trigger.BURN_DONE,
        State.ROUND_BURN,
        State.DEALING,
        ("burn_is_finished",),
        unless=("round_burn_follows",),
    ),
    T(
        Trigger.ROUND_VOID,
        ROUND_STATES,
        State.RETURNING,
        ("round_is_void", "has_cards_to_return"),
        after=("void_round",),
    ),
    T(
        Trigger.ROUND_VOID,
        ROUND_STATES,
        State.READY,
        ("round_is_void",),
        unless=("has_cards_to_return",),
        after=("void_round",),
    ),
    T(
        Trigger.ROUND_COMPLETE,
        State.DEALING,
        State.RETURNING,
        ("round_is_complete", "has_cards_to_return"),
        after=("settle_round",),
    ),
    T(
        Trigger.ROUND_COMPLETE,
        State.DEALING,
        State.READY,
        ("round_is_complete",),
        unless=("has_cards_to_return",),
        after=("settle_round",),
    ),
    T(Trigger.RETURNED, State.RETURNING, State.READY, after=("record_return",)),
    T(
        Trigger.VOID_CURRENT_ROUND,
        (*ROUND_STATES, State.HELD),
        None,
        ("round_may_be_voided",),
        after=("void_by_supervisor",),
    ),
    T(
        Trigger.ENTER_CARD,
        State.HELD,
        None,
        ("entered_card_fits",),
        after=("enter_misread_card",),
    ),
    # Ending a shoe
    T(
        Trigger.SHOE_OVER,
        (State.BURNING, State.BETTING),
        State.SHOE_ENDED,
        ("shoe_is_finished",),
        after=("withdraw_open_round",),
    ),
    T(
        Trigger.END_SHOE,
        (State.LOADING, State.CUT, State.BURNING, State.BETTING),
        State.SHOE_ENDED,
        after=("withdraw_open_round",),
    ),
    T(
        Trigger.END_SHOE,
        (State.ROUND_BURN, State.DEALING, State.RETURNING),
        None,
        after=("make_round_last",),
    ),
    T(Trigger.RECONCILE, State.SHOE_ENDED, State.IDLE, after=("reconcile_shoe",)),
    T(Trigger.PACK_COUNTED, (*SHOE_OPEN, State.HELD), None, after=("check_pack_count",)),
    T(Trigger.ABANDON_SHOE, (*SHOE_OPEN, State.FAULT), State.IDLE, after=("close_abandoned_shoe",)),
    T(Trigger.ABANDON_SHOE, State.HELD, None, ("shoe_is_open",), after=("close_abandoned_shoe",)),
    # What the shoe reports at any time
    T(Trigger.CARD, (*HOLDABLE, State.HELD), None, after=("take_card",)),
    T(
        Trigger.CUT_CARD,
        CARDS_LEAVE,
        None,
        ("uses_cut_card", "shoe_is_open"),
        after=("note_cut_card",),
    ),
    T(
        Trigger.SHOE_EMPTY,
        (*SHOE_OPEN, State.HELD),
        None,
        ("shoe_is_open",),
        after=("note_shoe_empty",),
    ),
    # Holds
    T(Trigger.HOLD, HOLDABLE, State.HELD, before=("remember_state",), after=("add_hold",)),
    T(Trigger.HOLD, State.HELD, None, after=("add_hold",)),
    T(Trigger.RELEASE, (*HOLDABLE, State.HELD), None, after=("drop_hold",)),
    T(
        Trigger.CONFIRM_FACE_UP,
        State.HELD,
        None,
        ("face_down_card_pending",),
        after=("end_face_down_hold",),
    ),
    T(Trigger.CLEAR_HOLD, State.HELD, None, ("hold_is_cleared_by_operator",), after=("drop_hold",)),
    *(
        T(
            Trigger.RESUME,
            State.HELD,
            state,
            ("no_hold_left", "was_held_in_destination"),
            after=("forget_held_state",),
        )
        for state in HOLDABLE
    ),
    T(Trigger.FAIL, (*HOLDABLE, State.HELD), State.FAULT),
)


def _leaves(transition: Transition, state: State) -> bool:
    return transition.source == state or (
        isinstance(transition.source, tuple) and state in transition.source
    )


AUTOMATIC_FROM: Mapping[str, tuple[Trigger, ...]] = {
    state: tuple(
        trigger
        for trigger in AUTOMATIC
        if any(t.trigger is trigger and _leaves(t, state) for t in TRANSITIONS)
    )
    for state in State
}
"""The AUTOMATIC triggers that have a transition out of each state, in AUTOMATIC's order:
the only ones worth asking about there."""


def machine_options(model: Any, *, bind: bool = True) -> dict[str, Any]:
    """The Machine settings the procedure runs with; bind=False names the callbacks instead.

    Bound, every guard and action is the model's method itself: given a name,
    transitions looks it up on the model each time it calls it, two dozen
    times for a card that completes a round. The diagram draws from the names.
    """

    def callback(name: str) -> Any:
        return getattr(model, name) if bind else name

    return {
        "model": model,
        "states": [state.value for state in State],
        "transitions": [transition.as_dict(callback) for transition in TRANSITIONS],
        "initial": State.IDLE.value,
        "auto_transitions": False,
        "queued": True,
        "ignore_invalid_triggers": False,
        "send_event": True,
        "on_exception": callback("on_procedure_exception"),
        "finalize_event": callback("after_every_trigger"),
    }


def build_machine(model: Any) -> ProcedureMachine:
    """A queued flat Machine over the tables above, bound to `model` (a TableModel), its
    triggers run through routes compiled from it (dispatch.py)."""
    logging.getLogger("transitions").setLevel(logging.WARNING)
    return ProcedureMachine(**machine_options(model))


def guard_and_action_names(transitions: Sequence[Transition] = TRANSITIONS) -> set[str]:
    """Every model method the tables name, so a test can check the model has them all."""
    names: set[str] = set()
    for transition in transitions:
        names.update(transition.conditions, transition.unless, transition.after, transition.before)
    return names
