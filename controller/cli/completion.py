"""Shell completion of the words shoectl knows: games, device URLs, operator commands, holds.

click calls each completer with the word typed so far, from the bash or zsh script that
`make completion` and udev/install.sh write. Each reads the project's own table (the games,
the service's operator commands, the hold names, the devices attached), so completion never
keeps a second list that could fall behind. The tables are imported only when asked, so
shoectl's start-up stays fast.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import click
from click.shell_completion import CompletionItem

Completer = Callable[[click.Context, click.Parameter, str], list[CompletionItem]]


def _completer(words: Callable[[click.Context], Iterable[str]]) -> Completer:
    """A click shell_complete callback offering those of words() that start as typed."""

    def complete(
        ctx: click.Context, param: click.Parameter, incomplete: str
    ) -> list[CompletionItem]:
        return [CompletionItem(word) for word in words(ctx) if word.startswith(incomplete)]

    return complete


def _games(ctx: click.Context) -> Iterable[str]:
    # Late: each completer's table loads only when its word is completed (module docstring).
    from cardshoe.controller.rules.games import GAME_NAMES

    return GAME_NAMES


def _device_urls(ctx: click.Context) -> Iterable[str]:
    """The serial devices attached (as `shoectl list` names them), then the simulator's."""
    # Late: each completer's table loads only when its word is completed (module docstring).
    from cardshoe.drivers.discovery import serial_candidates
    from cardshoe.firmware_sim.profiles import load_profiles

    attached = [candidate.url for candidate in serial_candidates()]
    return [*attached, *(f"sim://{name}" for name in load_profiles())]


def _operator_commands(ctx: click.Context) -> Iterable[str]:
    # Late: each completer's table loads only when its word is completed (module docstring).
    from cardshoe.controller.procedure.operator_commands import CONTROL_COMMANDS

    return [command.name for command in CONTROL_COMMANDS]


def _holds(ctx: click.Context) -> Iterable[str]:
    """The names of the holds, the table's own and the devices', for clear-hold's --reason
    (abandon-shoe's --reason is free text: nothing is offered for it)."""
    # Late: each completer's table loads only when its word is completed (module docstring).
    from cardshoe.controller.procedure.holds import HoldReason, fault_hold
    from cardshoe.drivers.api.events import FaultKind

    # While an option's value is being completed, click leaves the arguments before it unparsed.
    command = ctx.params.get("name") or next(iter(ctx.args), None)
    if command not in (None, "clear-hold"):
        return []
    return [*HoldReason, *(fault_hold(kind) for kind in FaultKind)]


complete_game = _completer(_games)
complete_device_url = _completer(_device_urls)
complete_operator_command = _completer(_operator_commands)
complete_hold = _completer(_holds)
