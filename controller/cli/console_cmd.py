"""shoectl console: the table's console for the dealer, and the PINs people sign in with."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from cardshoe.controller.cli.options import CONFIG_OPTION, SOCKET_OPTION
from cardshoe.controller.config import load_config
from cardshoe.controller.errors import UserError
from cardshoe.controller.service.pins import (
    PinRole,
    check_name,
    check_pin,
    make_entry,
    read_pins,
    write_pins,
)

ROLE_CHOICE = click.Choice(["dealer", "supervisor"])


@click.group(invoke_without_command=True)
@SOCKET_OPTION
@CONFIG_OPTION
@click.pass_context
def console(ctx: click.Context, socket_path: Path | None, config_path: Path | None) -> None:
    """The running table, full screen, with the dealer's commands on keys (docs/console.md).

    People sign in with their name and PIN (`shoectl console pin set`); a supervisor's
    command asks for a supervisor's name and PIN at that moment. Run it as the user the
    table's [roles] console names (systemd's cardshoe-console unit does, on tty1).
    """
    if ctx.invoked_subcommand is not None:
        return
    # Late: the dealer's screen (~250 ms of imports) is only this command's, not pin set's.
    from cardshoe.controller.cli.console_app import run_console

    run_console(socket_path, config_path)


@console.group()
def pin() -> None:
    """The PINs people sign in at the console with ([roles] pins_file)."""


@pin.command("set")
@click.argument("name")
@click.option("--role", type=ROLE_CHOICE, required=True, help="What the person does at the table.")
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="The table configuration whose [roles] pins_file holds the PINs.",
)
def pin_set(name: str, role: str, config_path: Path) -> None:
    """Add NAME, or give NAME a new PIN or role: the PIN is asked twice (read as two lines
    from standard input when it is not a terminal) and only its salted scrypt hash is kept."""

    check_name(name)
    pins_file = load_config(config_path).roles.pins_file
    if pins_file is None:
        raise UserError(
            f'{config_path}: [roles] names no pins_file: add pins_file = "pins.json" to its '
            "[roles] section, then run this again"
        )
    first, second = _two_pins(name)
    if first != second:
        raise UserError("the two PINs differ: nothing changed; run the command again")
    check_pin(first)
    people = read_pins(pins_file)
    known = name.lower() in people
    people[name.lower()] = make_entry(PinRole(role), first)
    write_pins(pins_file, people)
    click.echo(f"{'changed' if known else 'added'} {name.lower()} ({role}) in {pins_file}")


def _two_pins(name: str) -> tuple[str, str]:
    """The PIN typed twice, hidden at a terminal; else two lines of standard input."""

    if sys.stdin.isatty():
        first = click.prompt(f"PIN for {name}", hide_input=True, err=True)
        second = click.prompt("the same PIN again", hide_input=True, err=True)
        return first, second
    lines = sys.stdin.read().splitlines()
    if len(lines) < 2:
        raise UserError(
            "give the PIN twice, one line each, on standard input (or run at a terminal)"
        )
    return lines[0], lines[1]
