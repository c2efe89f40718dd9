"""How each operator command reaches the session, and its arguments checked on the way.

The commands themselves are rows of procedure/operator_commands.py; this module
is the service's side of that table: which session method carries each one, and
the check of a request's arguments against the row's parameters, so a wrong
argument is refused in one line before anything is journaled. It is separate from
table_service.py, which runs the table, because it is the one place a new
command's way to the session would change.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from cardshoe.controller.errors import UserError
from cardshoe.controller.procedure.operator_commands import (
    OPERATOR_COMMANDS,
    OperatorCommand,
    Parameter,
    option_name,
)
from cardshoe.controller.service.session import TableSession

SessionRoute = Callable[[TableSession, dict[str, Any]], object]
"""Gives the command to the session with its checked arguments."""

SESSION_SIDE: Mapping[str, Callable[..., object]] = {
    "new-shoe": TableSession.start_shoe,
    "sign-in": TableSession.sign_in,
    "supervisor-sign-in": TableSession.supervisor_sign_in,
    "enter-card": TableSession.enter_card,
    "clear-hold": TableSession.clear_hold,
}
"""The commands the session handles with a method of its own, since each needs more than
its input: a new shoe's id checked against the journal and its pack's custody recorded,
who holds the table (sign-in, supervisor-sign-in), the entered card checked and its
operator named, a hold's device stream taken up again. Every other command with a
procedure input goes through TableSession.operate."""


def session_route(command: OperatorCommand) -> SessionRoute | None:
    """How the command reaches the session; None for one the service answers itself."""
    method = SESSION_SIDE.get(command.name)
    if method is not None:
        return lambda session, arguments: method(session, **arguments)
    if command.procedure_input is not None:
        return lambda session, arguments: session.operate(command, **arguments)
    return None


SESSION_COMMANDS: tuple[OperatorCommand, ...] = tuple(
    command for command in OPERATOR_COMMANDS if session_route(command) is not None
)
"""The commands that reach the session, in the table's order. The session journals each
as an input, accepted or refused, like the dealer's button; the supervisor's sign-in,
which changes no card's way, as a session record."""


def command_arguments(
    name: str, parameters: tuple[Parameter, ...], request: Mapping[str, Any]
) -> dict[str, Any]:
    """The request's arguments for the command, each checked; UserError names the wrong one."""
    known = {parameter.name for parameter in parameters}
    unknown = sorted(set(request) - known - {"cmd"})
    if unknown:
        takes = ", ".join(sorted(map(option_name, known))) or "no arguments"
        raise UserError(f"{name} takes {takes}, not {', '.join(map(option_name, unknown))}")
    arguments = {}
    for parameter in parameters:
        value = request.get(parameter.name)
        if value is None:
            if parameter.required:
                raise UserError(f"{name} needs {option_name(parameter.name)}")
            continue
        if isinstance(value, bool) or not isinstance(value, parameter.kind):
            raise UserError(
                f"{name}: {option_name(parameter.name)} must be a {parameter.kind_text}"
            )
        if isinstance(value, str) and not is_text(value):
            raise UserError(
                f"{name}: {option_name(parameter.name)} is not text (it holds a lone surrogate "
                "or bytes that are not UTF-8): type it again"
            )
        arguments[parameter.name] = value
    return arguments


def is_text(value: str) -> bool:
    """Whether value can be journaled: JSON may carry a lone surrogate (\\ud800) and a
    non-UTF-8 argument reaches Python as one, but neither can be written as UTF-8."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
