"""shoectl run: the table service that systemd runs (service/table_service.py does the work)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from cardshoe.controller.cli.options import TABLE_CONFIG_OPTION
from cardshoe.controller.config import load_config
from cardshoe.controller.errors import UserError
from cardshoe.controller.service.sdnotify import Notifier
from cardshoe.controller.service.stop_signals import stop_on_signals


@click.command()
@TABLE_CONFIG_OPTION
@click.option(
    "--betting-time",
    type=click.FloatRange(min=0),
    default=None,
    metavar="SECONDS",
    help="Close bets this long after each round opens (default: the dealer button "
    "or the no-more-bets command).",
)
@click.option(
    "--auto-shoe",
    is_flag=True,
    help="Open a new shoe whenever none is open, a manual shoe counting as loaded and cut "
    "(simulator, unattended tables); otherwise wait for the new-shoe command.",
)
@click.option(
    "--device-wait",
    type=click.FloatRange(min=0),
    default=30.0,
    show_default=True,
    metavar="SECONDS",
    help="How long start-up waits for an absent or busy device before exit 3.",
)
@click.option(
    "--log-format",
    type=click.Choice(["json", "console"]),
    default="json",
    show_default=True,
    help="JSON lines on stdout for journald, or readable lines for a person.",
)
def run(
    config_path: Path,
    betting_time: float | None,
    auto_shoe: bool,
    device_wait: float,
    log_format: str,
) -> None:
    """Run the table: device, journal and procedure, served on the control socket.

    Logs go to stdout. The control socket (service.control_socket) answers
    `shoectl status` and `shoectl monitor --service`. SIGTERM or Ctrl-C stops
    after the event under way is journaled; the next start resumes the shoe.
    Under systemd it sends READY=1, WATCHDOG=1, STATUS= and STOPPING=1.
    The journal must exist: `shoectl journal init` makes a new table's.
    Exit 0 stopped cleanly, 2 bad configuration or no journal, 3 device absent,
    busy or not permitted or another service running, 1 the journal failed its
    check or cannot be written (one line naming the path), or the service failed
    (see the log).
    """

    # Late: heavy (rich, structlog, pyserial, pyusb or sqlite3), which loading this module for
    # --help must not pull in (tests/cli/test_technician_cli.py).
    import structlog

    from cardshoe.controller.service.logging_setup import configure_logging
    from cardshoe.controller.service.table_service import ServiceOptions, TableService

    configure_logging(json_lines=log_format == "json", stream=sys.stdout)
    config = load_config(config_path)
    try:
        notifier = Notifier.from_environment()
    except ValueError as exc:
        raise UserError(f"systemd's environment is unusable: {exc}") from None
    options = ServiceOptions(
        betting_time_s=betting_time, auto_shoe=auto_shoe, device_wait_s=device_wait
    )
    service = TableService(config, options, notifier)
    with stop_on_signals(service.request_stop):
        try:
            service.run()
        except UserError:
            raise
        except Exception:
            structlog.get_logger("cardshoe.service").exception("the service failed")
            raise click.exceptions.Exit(1) from None
