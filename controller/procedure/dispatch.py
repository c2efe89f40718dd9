"""The procedure Machine's triggers, run through a table compiled once from its own transitions.

transitions' generic trigger path (Machine._get_trigger -> Event._trigger ->
Transition.execute -> Machine.callbacks) resolves every callback by name or
type, logs at every step and checks each guard through a Condition object: a
card that completes a round fires three triggers (the card, settle the round,
open the next) and spent about half its time there. ProcedureMachine keeps
the Machine as the procedure's definition (its events, transitions, states
and their callbacks, the queue, on_exception and finalize_event) and, when
built, resolves each (state, trigger) to its routes: the guards, actions and
state callbacks of each transition as the bound callables they are. A
trigger then runs the same steps in the same order through the Machine's own
queue. The procedure uses no other transitions feature (prepare callbacks,
machine-wide before/after_state_change, final states); compile_routes
refuses a machine that does, so none is silently skipped.

After every input the procedure asks which automatic trigger may fire
(first_step): the two routes of a trigger that one guard chooses between
(round_is_void, round_is_complete, shoe_is_finished) ask that guard once,
as guards have no side effects, and an ask that finds nothing leaves its
EventData for the next one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, NamedTuple

from transitions import Event, EventData, Machine, MachineError, State, Transition

_LOGGER = logging.getLogger(__name__)

Callback = Callable[[EventData], Any]


@dataclass(frozen=True)
class Route:
    """One transition of the Machine out of one state, its callbacks resolved."""

    transition: Transition
    """The Machine's own transition, which guards may read (event.transition)."""
    guards: tuple[tuple[Callback, bool], ...]
    """Each condition and the answer it must give (False for an `unless`), in order."""
    before: tuple[Callback, ...]
    dest: State | None
    """None: an internal transition, the state does not change."""
    leave: tuple[Callback, ...]
    """The source state's on_exit callbacks, run only when the state changes."""
    enter: tuple[Callback, ...]
    """The destination's on_enter callbacks."""
    after: tuple[Callback, ...]

    def allows(self, event: EventData) -> bool:
        # A loop, not all() over a generator: it runs several times per input.
        for guard, wanted in self.guards:  # noqa: SIM110
            if guard(event) != wanted:
                return False
        return True

    def run(self, event: EventData, model: Any, attribute: str) -> None:
        """Transition.execute after its guards held: before, change of state, after."""
        for callback in self.before:
            callback(event)
        if self.dest is not None:
            for callback in self.leave:
                callback(event)
            setattr(model, attribute, self.dest.value)
            event.state = self.dest
            for callback in self.enter:
                callback(event)
        for callback in self.after:
            callback(event)


Routes = Mapping[tuple[str, str], tuple[Route, ...]]


class Candidate(NamedTuple):
    """One route first_step tries, with what it needs to ask its guards quickly."""

    place: int
    """Its trigger's place in the triggers asked."""
    event: Event
    route: Route
    guard: Callback | None
    """The route's first guard (None: it has none) and the answer it must give."""
    wanted: bool
    rest: tuple[tuple[Callback, bool], ...]
    """The route's other guards, each with the answer it must give."""
    asks_again: bool
    """Its first guard is the previous candidate's (both routes of a trigger that its
    answer chooses between): the answer the previous one got is this one's too."""


Candidates = tuple[Candidate, ...]
_UNASKED = object()


def compile_routes(machine: Machine, model: Any) -> dict[tuple[str, str], tuple[Route, ...]]:
    """(state, trigger) -> the routes the Machine would try there, in its order."""
    unsupported = {
        "prepare_event": machine.prepare_event,
        "before_state_change": machine.before_state_change,
        "after_state_change": machine.after_state_change,
        "on_final": machine.on_final,
        "final states": [name for name, state in machine.states.items() if state.final],
        "prepare callbacks": [
            transition
            for event in machine.events.values()
            for transitions in event.transitions.values()
            for transition in transitions
            if transition.prepare
        ],
    }
    used = [name for name, found in unsupported.items() if found]
    if used:
        raise ValueError(f"the compiled dispatch does not run {', '.join(used)}")
    resolving = EventData(None, None, machine, model, (), {})

    def resolve(callbacks: Sequence[Any]) -> tuple[Callback, ...]:
        return tuple(machine.resolve_callable(callback, resolving) for callback in callbacks)

    def route(transition: Transition) -> Route:
        dest = None if transition.dest is None else machine.get_state(transition.dest)
        return Route(
            transition=transition,
            guards=tuple(
                (machine.resolve_callable(condition.func, resolving), condition.target)
                for condition in transition.conditions
            ),
            before=resolve(transition.before),
            dest=dest,
            leave=resolve(machine.get_state(transition.source).on_exit),
            enter=() if dest is None else resolve(dest.on_enter),
            after=resolve(transition.after),
        )

    return {
        (source, name): tuple(route(transition) for transition in transitions)
        for name, event in machine.events.items()
        for source, transitions in event.transitions.items()
    }


class Step(NamedTuple):
    """A trigger that may fire now, and the route its guards let through (a tuple: one is
    made for every input that moves the procedure on by itself)."""

    event: EventData
    route: Route

    @property
    def trigger(self) -> str:
        return str(self.event.event.name)


class ProcedureMachine(Machine):
    """transitions' Machine for one model, its triggers run through compiled routes."""

    def __init__(self, model: Any, **options: Any) -> None:
        super().__init__(model=model, **options)
        self.routes: Routes = compile_routes(self, model)
        resolving = EventData(None, None, self, model, (), {})
        self._exception_callbacks: tuple[Callback, ...] = tuple(
            self.resolve_callable(callback, resolving) for callback in self.on_exception
        )
        self._finalize_callbacks: tuple[Callback, ...] = tuple(
            self.resolve_callable(callback, resolving) for callback in self.finalize_event
        )
        self._automatic: dict[str, tuple[Sequence[str], Candidates]] = {}
        self._asking: EventData | None = None
        """first_step's EventData, while no step has taken it and no guard has raised."""

    def _get_trigger(self, model: Any, trigger_name: str, *args: Any, **kwargs: Any) -> bool:
        """model.trigger(name, ...): Event.trigger's queueing, the routes' steps."""
        event = self.events.get(trigger_name)
        if event is None:
            return bool(super()._get_trigger(model, trigger_name, *args, **kwargs))
        event_data = EventData(None, event, self, model, args, kwargs)
        return bool(self._process(partial(self._run, event_data)))

    def _run(self, event: EventData) -> bool:
        """Event._trigger over the routes: the first route whose guards hold runs."""
        model = event.model
        state = getattr(model, self.model_attribute)
        event.state = self.states[state]
        try:
            routes = self.routes.get((state, event.event.name))
            if routes is None:
                raise MachineError(f"Can't trigger event {event.event.name} from state {state}!")
            for route in routes:
                event.transition = route.transition
                if route.allows(event):
                    route.run(event, model, self.model_attribute)
                    event.result = True
                    break
        except BaseException as error:
            self._handle(event, error)
        finally:
            self._finalize(event)
        return bool(event.result)

    def _take(self, step: Step) -> bool:
        """_run for a step whose route is already chosen."""
        event = step.event
        try:
            step.route.run(event, event.model, self.model_attribute)
            event.result = True
        except BaseException as error:
            self._handle(event, error)
        finally:
            self._finalize(event)
        return bool(event.result)

    def _handle(self, event: EventData, error: BaseException) -> None:
        event.error = error  # type: ignore[assignment]  # transitions stores any BaseException
        if not self._exception_callbacks:
            raise error
        for callback in self._exception_callbacks:
            callback(event)

    def _finalize(self, event: EventData) -> None:
        for callback in self._finalize_callbacks:
            try:
                callback(event)
            except BaseException as error:
                # As transitions does: a finalize callback's error never hides the event's.
                _LOGGER.error("a finalize_event callback raised %r", error)

    def first_step(self, model: Any, triggers: Sequence[str]) -> Step | None:
        """The first of `triggers` whose guards hold now, as may_<trigger>() would say, with
        the route that lets it through; None when none may fire.

        The procedure asks this after every input for its AUTOMATIC triggers
        and takes the step it finds, so the guards are asked once. An exception
        in a guard is handed to on_exception, as a trigger would; the triggers
        after it are asked in the state that leaves.
        """
        state = getattr(model, self.model_attribute)
        known = self._automatic.get(state)
        candidates = known[1] if known is not None and known[0] is triggers else None
        if candidates is None:
            candidates = self._candidates(state, triggers)
        if not candidates:
            return None
        # One EventData for all the routes asked, kept for the next ask until a step takes
        # it: this runs after every input, and nearly always finds nothing.
        event = self._asking
        if event is None or event.model is not model:
            event = self._asking = EventData(None, None, self, model, (), {})
        event.state = self.states[state]
        # The place of the last trigger whose guard raised: its callbacks may have moved
        # the model (to the fault state), and the triggers after it are asked there.
        failed: int | None = None
        # The previous candidate's first guard's answer: guards have no side effects
        # (machine.py), so a candidate with the same first guard is not asked it again.
        first: object = _UNASKED
        for index, trigger_event, route, guard, wanted, rest, asks_again in candidates:
            if failed is not None and index != failed and self._moved(model, state):
                return self.first_step(model, triggers[failed + 1 :])
            event.event = trigger_event
            event.transition = route.transition
            try:
                if guard is not None:
                    if not asks_again or first is _UNASKED:
                        first = guard(event)
                    if first != wanted:
                        continue
                for later, later_wanted in rest:
                    if later(event) != later_wanted:
                        break
                else:
                    self._asking = None
                    return Step(event, route)
            except Exception as error:
                first = _UNASKED
                self._asking = None
                event.error = error
                for callback in self._exception_callbacks:
                    callback(event)
                failed = index
        if failed is not None and self._moved(model, state):
            return self.first_step(model, triggers[failed + 1 :])
        return None

    def _moved(self, model: Any, state: str) -> bool:
        return bool(getattr(model, self.model_attribute) != state)

    def _candidates(self, state: str, triggers: Sequence[str]) -> Candidates:
        """The routes first_step tries in `state` for `triggers`, in order, each with its
        trigger's place in `triggers` and its Event; kept for the state, so the next ask
        with the same tuple (AUTOMATIC_FROM's) finds them."""
        found: list[Candidate] = []
        for index, trigger in enumerate(triggers):
            for route in self.routes.get((state, trigger), ()):
                first, rest = route.guards[:1], route.guards[1:]
                previous = found[-1].route.guards[:1] if found else ()
                asks_again = bool(first) and first == previous
                guard, wanted = first[0] if first else (None, True)
                found.append(
                    Candidate(index, self.events[trigger], route, guard, wanted, rest, asks_again)
                )
        candidates = tuple(found)
        self._automatic[state] = (triggers, candidates)
        return candidates

    def take(self, step: Step) -> bool:
        """Fire the step first_step found, through the Machine's queue, as its trigger would."""
        return bool(self._process(partial(self._take, step)))
