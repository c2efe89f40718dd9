"""shoectl control: the operator's commands to the running service, over its socket.

The commands, their arguments and their help are the rows of
procedure/operator_commands.py: the options here are the arguments of every
row, each with the help of the rows that take it, so this command keeps no
second copy of the list. The service checks the name and the arguments and
refuses a wrong one with what the command takes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import click

from cardshoe.controller.cli.completion import complete_hold, complete_operator_command
from cardshoe.controller.cli.options import CONFIG_OPTION, SOCKET_OPTION
from cardshoe.controller.cli.service_access import service_socket
from cardshoe.controller.cli.status_cmd import status_text
from cardshoe.controller.errors import UserError
from cardshoe.controller.procedure.operator_commands import (
    CONTROL_COMMANDS,
    Parameter,
    option_name,
)
from cardshoe.controller.service.control_client import request
from cardshoe.controller.service.control_socket import SUBSCRIBE

CLICK_TYPES: Mapping[str, click.ParamType] = {
    "round": click.IntRange(min=1),
    "image": click.Path(dir_okay=False, path_type=Path),
}
"""Arguments that the command line checks or resolves before they are sent (a path is sent
resolved, since the service does not share the caller's working directory)."""
COMPLETERS: Mapping[str, Callable[..., Any]] = {"reason": complete_hold}


def option_help(name: str) -> str:
    """An option's help: what it is for each command that takes it."""
    helps: dict[str, list[str]] = {}
    for command in CONTROL_COMMANDS:
        for parameter in command.parameters:
            if parameter.name == name:
                helps.setdefault(parameter.help, []).append(command.name)
    text = "; ".join(f"{text} ({', '.join(names)})" for text, names in helps.items())
    return text[:1].upper() + text[1:] + "."


def control_parameters() -> tuple[Parameter, ...]:
    """Every argument of the `shoectl control` commands, once each, in the table's order."""
    seen: dict[str, Parameter] = {}
    for command in CONTROL_COMMANDS:
        for parameter in command.parameters:
            seen.setdefault(parameter.name, parameter)
    return tuple(seen.values())


def with_command_options(function: Callable[..., None]) -> Callable[..., None]:
    """The command's options, one per argument of the table's rows."""
    for parameter in reversed(control_parameters()):
        function = click.option(
            option_name(parameter.name),
            parameter.name,
            type=CLICK_TYPES.get(parameter.name),
            default=None,
            shell_complete=COMPLETERS.get(parameter.name),
            help=option_help(parameter.name),
        )(function)
    return function


COMMAND_LINES = "\n".join(f"  {command.name}: {command.help}" for command in CONTROL_COMMANDS)


@click.command(
    help=f"""Send an operator command NAME to the running `shoectl run`.

\b
NAME is one of:
{COMMAND_LINES}

Who may give which is the table's [roles] (docs/technician-guide.md). The service journals
every command, accepted or refused, and prints the table's status after it. A refused
command exits 2 with the service's reason on one line."""
)
@click.argument("name", shell_complete=complete_operator_command)
@with_command_options
@SOCKET_OPTION
@CONFIG_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print the status after it as JSON.")
def control(
    name: str,
    socket_path: Path | None,
    config_path: Path | None,
    as_json: bool,
    **options: Any,
) -> None:
    if name == SUBSCRIBE:
        raise UserError(
            f"{SUBSCRIBE!r} streams events, it is not an operator command: "
            "use 'shoectl monitor --service' (or --table) to follow the table"
        )
    arguments: dict[str, Any] = {
        key: str(value.resolve()) if isinstance(value, Path) else value
        for key, value in options.items()
        if value is not None
    }
    record = request(service_socket(socket_path, config_path), name, **arguments)
    click.echo(json.dumps(record) if as_json else status_text(record))
