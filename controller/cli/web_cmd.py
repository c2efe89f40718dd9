"""shoectl web: the scoreboard page for the table's display screen and the pit."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import click

from cardshoe.controller.config import load_config
from cardshoe.controller.errors import UserError
from cardshoe.controller.service.logging_setup import configure_logging
from cardshoe.controller.web.app import MAX_CLIENTS
from cardshoe.controller.web.console_page import WebConsole
from cardshoe.controller.web.server import ListenAddress, ScoreboardServer

DEFAULT_LISTEN = "127.0.0.1:8080"


@click.command()
@click.option(
    "--journal",
    "journal_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The table's journal, opened read-only [default: the config's service.journal_path]",
)
@click.option(
    "--listen",
    default=DEFAULT_LISTEN,
    show_default=True,
    metavar="HOST:PORT",
    help="Address to serve on; port 0 lets the system choose (the URL is printed).",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Table configuration: the page then shows the approved options of shoes whose "
    "recorded fingerprint matches it.",
)
@click.option(
    "--max-clients",
    type=click.IntRange(min=1),
    help="Screens served /events at once; more get 503 and retry (each costs the table's PC "
    "memory and CPU) [default: 200].",
)
@click.option(
    "--console",
    "with_console",
    is_flag=True,
    help="Also serve /console, the table's touchscreen console, to this PC's own browser "
    "only (needs --config; run as the user [roles] console names).",
)
def web(
    journal_path: Path | None,
    listen: str,
    config_path: Path | None,
    max_clients: int | None,
    with_console: bool,
) -> None:
    """Serve the scoreboard: GET / the page, /board.json the board of the current shoe
    (as `shoectl roads --json`), /events the journal's records as server-sent events.

    The journal is only read, so the page cannot command the table and goes
    on across restarts of the table service. Runs until Ctrl-C or SIGTERM.
    """

    address = ListenAddress.parse(listen)
    config = load_config(config_path) if config_path is not None else None
    if journal_path is None:
        if config is None:
            raise UserError("give --journal PATH, or --config naming service.journal_path")
        journal_path = config.service.journal_path
    console = None
    if with_console:
        if config is None:
            raise UserError("--console needs --config: the table's control socket and [roles]")
        console = WebConsole(
            config.service.control_socket,
            config.roles.console_idle_s,
            time.monotonic,
            config.console.language,
        )
    configure_logging(level=logging.WARNING)
    server = ScoreboardServer(
        journal_path, address.bind(), config, max_clients or MAX_CLIENTS, console
    )
    click.echo(f"shoectl web: serving {server.url} from {journal_path} (read-only)", err=True)
    server.run()
