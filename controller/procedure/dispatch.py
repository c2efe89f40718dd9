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
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from transitions import EventData, Machine, MachineError, State, Transition

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


@dataclass(frozen=True)
class Step:
    """A trigger that may fire now, and the route its guards let through."""

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
        in a guard is handed to on_exception, as a trigger would.
        """
        event: EventData | None = None
        for trigger in triggers:
            state = getattr(model, self.model_attribute)
            routes = self.routes.get((state, trigger))
            if not routes:
                continue
            # One EventData for all the triggers asked: this runs after every input.
            if event is None or event.state.name != state:
                event = EventData(self.states[state], None, self, model, (), {})
            event.event = self.events[trigger]
            for route in routes:
                event.transition = route.transition
                try:
                    if route.allows(event):
                        return Step(event, route)
                except Exception as error:
                    event.error = error
                    for callback in self._exception_callbacks:
                        callback(event)
        return None

    def take(self, step: Step) -> bool:
        """Fire the step first_step found, through the Machine's queue, as its trigger would."""
        return bool(self._process(partial(self._take, step)))
