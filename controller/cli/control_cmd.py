"""shoectl control: the operator's commands to the running service, over its socket.

The service owns the list of commands and their arguments (SESSION_COMMANDS
in service.py) and refuses an unknown one with the list, so this command
passes the name through rather than keeping a second copy of it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from cardshoe.controller.cli.options import CONFIG_OPTION, SOCKET_OPTION
from cardshoe.controller.cli.status_cmd import status_text


@click.command()
@click.argument("name")
@click.option("--reason", default=None, help="Why (abandon-shoe); the hold's name (clear-hold).")
@click.option(
    "--note", default=None, help="Free text for the journal (void-round, enter-card, clear-hold)."
)
@click.option(
    "--card",
    default=None,
    help="The card the reader could not read, as 7H or TD (enter-card, a supervisor's).",
)
@click.option("--shoe-id", default=None, help="The new shoe's id (new-shoe; default: generated).")
@click.option(
    "--deck-set",
    default=None,
    help="The loaded deck set's serial as printed on its box, 0x00BC614E or decimal "
    "(new-shoe; default: the first card's).",
)
@SOCKET_OPTION
@CONFIG_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print the status after it as JSON.")
def control(
    name: str,
    reason: str | None,
    note: str | None,
    card: str | None,
    shoe_id: str | None,
    deck_set: str | None,
    socket_path: Path | None,
    config_path: Path | None,
    as_json: bool,
) -> None:
    """Send an operator command NAME to the running `shoectl run`.

    NAME is one of sign-in, supervisor-sign-in, new-shoe, shoe-loaded, cut-done,
    no-more-bets, confirm-face-up, end-shoe, abandon-shoe, void-round, enter-card,
    clear-hold. Who may
    give which is the table's [roles] (docs/technician-guide.md). The service journals
    every command, accepted or refused, and prints the table's status after
    it. A refused command exits 2 with the service's reason on one line.
    """
    from cardshoe.controller.cli.service_access import service_socket
    from cardshoe.controller.errors import UserError
    from cardshoe.controller.service.control_socket import SUBSCRIBE, request

    if name == SUBSCRIBE:
        raise UserError(
            f"{SUBSCRIBE!r} streams events, it is not an operator command: "
            "use 'shoectl monitor --service' (or --table) to follow the table"
        )
    arguments: dict[str, Any] = {
        key: value
        for key, value in (
            ("reason", reason),
            ("note", note),
            ("card", card),
            ("shoe_id", shoe_id),
            ("deck_set", deck_set),
        )
        if value is not None
    }
    record = request(service_socket(socket_path, config_path), name, **arguments)
    click.echo(json.dumps(record) if as_json else status_text(record))
