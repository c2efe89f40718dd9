"""Shell completion of the words shoectl knows: games, device URLs, operator commands, holds.

click calls each function with the word typed so far, from the bash or zsh script that
`make completion` and udev/install.sh write. Each reads the project's own table (the games,
the service's operator commands, the hold names, the devices attached), so completion never
keeps a second list that could fall behind.
"""

from __future__ import annotations

from collections.abc import Iterable

import click
from click.shell_completion import CompletionItem


def _starting_with(words: Iterable[str], incomplete: str) -> list[CompletionItem]:
    return [CompletionItem(word) for word in words if word.startswith(incomplete)]


def complete_game(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """The game variants (punto-banco, seven-up, macau-1, macau-2)."""
    from cardshoe.controller.rules.games import GAME_NAMES

    return _starting_with(GAME_NAMES, incomplete)


def complete_device_url(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """The serial devices attached (as `shoectl list` names them), then the simulator's."""
    from cardshoe.drivers.discovery import serial_candidates
    from cardshoe.firmware_sim.profiles import load_profiles

    attached = [candidate.url for candidate in serial_candidates()]
    simulated = [f"sim://{name}" for name in load_profiles()]
    return _starting_with([*attached, *simulated], incomplete)


def complete_operator_command(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """The operator commands the service takes (shoectl control NAME)."""
    from cardshoe.controller.service.table_service import SESSION_COMMANDS

    return _starting_with(SESSION_COMMANDS, incomplete)


def complete_hold(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """The names of the holds, the table's own and the devices', for clear-hold's --reason
    (abandon-shoe's --reason is free text: nothing is offered for it)."""
    # While an option's value is being completed, click leaves the arguments before it unparsed.
    command = ctx.params.get("name") or next(iter(ctx.args), None)
    if command not in (None, "clear-hold"):
        return []
    from cardshoe.controller.procedure.holds import HoldReason, fault_hold
    from cardshoe.drivers.protocol.messages import FaultKind

    names = [*HoldReason, *(fault_hold(kind) for kind in FaultKind)]
    return _starting_with(names, incomplete)
