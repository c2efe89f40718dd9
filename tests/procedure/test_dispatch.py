"""The compiled dispatch is the Machine's procedure: every route checked against machine.py's
tables, and a machine using what the dispatch does not run is refused, never half-run.

Whole shoes of every game, and every random run of the stateful test
(test_machine_stateful.py), give the same facts through transitions' own
generic trigger path.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.generic_dispatch import through_transitions
from support.table_inputs import MANUAL, Table, tagged_shoe
from transitions import Machine

from cardshoe.controller.config import DeviceConfig, DeviceMode, GameConfig, TableConfig
from cardshoe.controller.procedure.corrections import VoidReason
from cardshoe.controller.procedure.dispatch import compile_routes
from cardshoe.controller.procedure.facts import (
    HoldStarted,
    RefusedCommand,
    RoundResult,
    RoundVoided,
    ShoeEnded,
)
from cardshoe.controller.procedure.machine import TRANSITIONS, State
from cardshoe.controller.procedure.operator_commands import CloseBets, ShoeLoaded, VoidRound
from cardshoe.controller.procedure.table import TableModel
from cardshoe.controller.rules.games import GAME_NAMES
from cardshoe.drivers.protocol.cardid import CardId
from cardshoe.drivers.protocol.messages import FaultKind

DECKS = 6


def _sources(source: State | tuple[State, ...]) -> tuple[State, ...]:
    return (source,) if isinstance(source, State) else source


def test_every_route_is_the_transition_machine_py_defines_in_its_order() -> None:
    model = TableModel(MANUAL)
    expected: dict[tuple[str, str], list[tuple[object, ...]]] = {}
    for transition in TRANSITIONS:
        for source in _sources(transition.source):
            dest = transition.dest
            enter = getattr(model, f"on_enter_{dest}", None) if dest is not None else None
            leave = getattr(model, f"on_exit_{source}", None) if dest is not None else None
            expected.setdefault((str(source), str(transition.trigger)), []).append(
                (
                    tuple((getattr(model, name), True) for name in transition.conditions)
                    + tuple((getattr(model, name), False) for name in transition.unless),
                    tuple(getattr(model, name) for name in transition.before),
                    None if dest is None else str(dest),
                    () if leave is None else (leave,),
                    () if enter is None else (enter,),
                    tuple(getattr(model, name) for name in transition.after),
                )
            )
    compiled = {
        key: [
            (
                route.guards,
                route.before,
                None if route.dest is None else route.dest.name,
                route.leave,
                route.enter,
                route.after,
            )
            for route in routes
        ]
        for key, routes in model.machine.routes.items()
    }
    assert compiled == expected
    # The one state callback the procedure has is in the routes that enter idle.
    assert any(route.enter for (_, _), routes in model.machine.routes.items() for route in routes)


@pytest.mark.parametrize(
    "extra",
    [
        {"prepare_event": "noop"},
        {"before_state_change": "noop"},
        {"after_state_change": "noop"},
        {"on_final": "noop"},
    ],
    ids=lambda extra: next(iter(extra)),
)
def test_a_machine_with_callbacks_the_dispatch_does_not_run_is_refused(
    extra: dict[str, str],
) -> None:
    class Model:
        def noop(self, event: object) -> None:
            """A callback the dispatch would have to run."""

    model = Model()
    machine = Machine(model=model, states=["a", "b"], initial="a", send_event=True, **extra)
    machine.add_transition("go", "a", "b")
    with pytest.raises(ValueError, match=next(iter(extra))):
        compile_routes(machine, model)


def test_a_transition_with_prepare_callbacks_is_refused() -> None:
    class Model:
        def noop(self, event: object) -> None:
            """A callback the dispatch would have to run."""

    model = Model()
    machine = Machine(model=model, states=["a", "b"], initial="a", send_event=True)
    machine.add_transition("go", "a", "b", prepare="noop")
    with pytest.raises(ValueError, match="prepare callbacks"):
        compile_routes(machine, model)


def _play_whole_shoe(table: Table, shoe: Iterator[CardId]) -> None:
    """A whole shoe with what a table meets: a door opened mid-round and shut, a refused
    command, voided and settled rounds, the machine's returns, the cut card or the shoe's end."""
    manual = table.config.uses_cut_card_and_burn
    if manual:
        table.open_manual_shoe()
    else:
        table.open_auto_shoe()
    drawn = 0
    while table.state not in (State.SHOE_ENDED, State.IDLE):
        model = table.model
        if table.state == State.BETTING:
            table.feed(CloseBets())
            if model.round_no == 3:
                table.feed(table.device.fault(FaultKind.DOOR_OPEN), ShoeLoaded())
                table.feed(table.device.fault_cleared(FaultKind.DOOR_OPEN))
            if model.round_no == 5:
                table.draw([next(shoe)])
                drawn += 1
                table.feed(VoidRound(VoidReason.FOREIGN_CARD_FOUND))
        elif table.state == State.RETURNING:
            table.feed(table.device.returned(model.cards_to_return or 0))
        else:
            card = next(shoe, None)
            if card is None:
                table.feed(table.device.shoe_empty(drawn))
                continue
            table.draw([card])
            drawn += 1
            if manual and drawn == 52 * table.config.game.decks - 14:
                table.feed(table.device.cut_card())
    table.count(drawn, None)


@pytest.mark.parametrize("automatic", [False, True], ids=["manual", "automatic"])
@pytest.mark.parametrize("game", GAME_NAMES)
def test_a_whole_shoe_gives_the_same_facts_through_transitions_generic_path(
    game: str, automatic: bool
) -> None:
    device = DeviceConfig(kind=DeviceMode.AUTO) if automatic else DeviceConfig()
    config = TableConfig(game=GameConfig(name=game, decks=DECKS), device=device)
    table = Table(config)
    _play_whole_shoe(table, iter(tagged_shoe(DECKS, seed=5)))
    kinds = {type(fact.event) for fact in table.facts}
    assert {RoundResult, RoundVoided, HoldStarted, RefusedCommand, ShoeEnded} <= kinds
    generic = through_transitions(TableModel(config))
    assert [fact for item in table.inputs for fact in generic.apply(item)] == table.facts
    assert generic.state == table.state == State.IDLE
