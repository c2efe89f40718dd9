"""shoectl uplink: publish a table's journal to the floor's MQTT broker (docs/floor.md)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from cardshoe.controller.config import load_config
from cardshoe.controller.errors import UserError
from cardshoe.controller.floor.broker import BrokerSettings
from cardshoe.controller.floor.topics import check_name
from cardshoe.controller.floor.uplink import Uplink, UplinkSettings
from cardshoe.controller.service.logging_setup import configure_logging
from cardshoe.controller.service.stop_signals import stop_on_signals

if TYPE_CHECKING:
    from cardshoe.controller.config import TableConfig

FILE = click.Path(dir_okay=False, path_type=Path)


@click.command()
@click.option(
    "--config",
    "config_path",
    type=FILE,
    default=None,
    help="The table configuration, for its service.journal_path and [uplink] section "
    "(default: /etc/cardshoe/table.toml if present).",
)
@click.option("--journal", "journal_path", type=FILE, help="The table's journal [config's].")
@click.option("--broker", help="mqtt://HOST:PORT or mqtts://HOST:PORT [config's uplink.broker].")
@click.option("--ca", type=FILE, help="The floor's CA certificate (mqtts://).")
@click.option("--cert", type=FILE, help="This table's client certificate, CN = table id.")
@click.option("--key", type=FILE, help="The key of --cert.")
@click.option("--site", help="The site (casino, floor) above the table in the topics.")
@click.option(
    "--state-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where the uplink keeps its positions [config's uplink.state_dir].",
)
@click.option(
    "--resend-after",
    type=click.FloatRange(min=0.1),
    help="Seconds the floor's anchor may stay behind the broker's acks before a resend.",
)
@click.option(
    "--report-every",
    type=click.FloatRange(min=0.1),
    default=10.0,
    show_default=True,
    help="Seconds between lag reports in the log while the uplink is behind.",
)
def uplink(
    config_path: Path | None,
    journal_path: Path | None,
    broker: str | None,
    ca: Path | None,
    cert: Path | None,
    key: Path | None,
    site: str | None,
    state_dir: Path | None,
    resend_after: float | None,
    report_every: float,
) -> None:
    """Publish every journal record, in order, to the floor until stopped (SIGTERM).

    The journal is opened read-only; the table deals on while the broker is
    away, and the uplink catches up when it is back. Options override the
    [uplink] section of --config.
    """

    configured = _configured(config_path, journal_path is None)
    section = configured.uplink if configured is not None else None
    broker = broker or (section.broker if section else None)
    if broker is None:
        raise UserError("no broker: give --broker mqtt://HOST:PORT or uplink.broker in --config")
    if journal_path is None:
        assert configured is not None
        journal_path = configured.service.journal_path
    state_dir = state_dir or (section.state_dir if section else None)
    if state_dir is None:
        raise UserError("no state folder: give --state-dir or uplink.state_dir in --config")
    if not state_dir.is_dir():
        raise UserError(f"--state-dir {state_dir}: no such folder")
    settings = UplinkSettings(
        journal_path=journal_path,
        broker=BrokerSettings(
            broker,
            ca=ca or (section.ca if section else None),
            cert=cert or (section.cert if section else None),
            key=key or (section.key if section else None),
        ),
        site=check_name("site", site or (section.site if section else "site-1")),
        state_dir=state_dir,
        resend_after_s=resend_after or (section.resend_after_s if section else 30.0),
        report_interval_s=report_every,
    )
    configure_logging()
    running = Uplink(settings)
    with stop_on_signals(running.stop):
        running.run()


def _configured(config_path: Path | None, needed: bool) -> TableConfig | None:
    """The table configuration: --config, else /etc/cardshoe/table.toml if it exists."""

    if config_path is None:
        default = Path("/etc/cardshoe/table.toml")
        if not default.exists():
            if needed:
                raise UserError("no journal: give --journal PATH or --config with the table's")
            return None
        config_path = default
    return load_config(config_path)
