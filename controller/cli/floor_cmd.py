"""shoectl floor: the floor's side of the feed, init-db, ingest, status, demo (docs/floor.md)."""

from __future__ import annotations

import json
from pathlib import Path

import click

FILE = click.Path(dir_okay=False, path_type=Path)
DSN_OPTION = click.option(
    "--dsn", required=True, help="The floor database, postgresql://USER@HOST:PORT/DB."
)


@click.group()
def floor() -> None:
    """The floor's database: create it, fill it from the broker, report on it, or try it all
    on simulated tables (demo).

    These commands need the `floor` extra: pip install 'cardshoe[floor]'. Exit codes:
    0 success, 1 a table's chain is broken (status) or a demo record was lost, 2 bad input
    (a missing extra included), 3 the database cannot be reached.
    """


@floor.command("init-db")
@DSN_OPTION
def init_db(dsn: str) -> None:
    """Create or migrate the floor schema; safe to run again."""
    from cardshoe.controller.floor.schema import connect, migrate

    with connect(dsn) as connection:
        before, after = migrate(connection)
    if before == after:
        click.echo(f"floor database already at schema {after}")
    else:
        click.echo(f"floor database migrated from schema {before} to {after}")


@floor.command()
@click.option("--broker", required=True, help="mqtt://HOST:PORT or mqtts://HOST:PORT.")
@DSN_OPTION
@click.option("--ca", type=FILE, help="The floor's CA certificate (mqtts://).")
@click.option("--cert", type=FILE, help="The ingest client certificate.")
@click.option("--key", type=FILE, help="The key of --cert.")
@click.option(
    "--client-id",
    default="cardshoe-ingest-1",
    show_default=True,
    help="Unique per ingest process and stable across its restarts.",
)
@click.option(
    "--gap-after",
    type=click.FloatRange(min=0.1),
    default=30.0,
    show_default=True,
    help="Seconds a gap in a table's records may stay open before it is an alarm.",
)
def ingest(
    broker: str,
    dsn: str,
    ca: Path | None,
    cert: Path | None,
    key: Path | None,
    client_id: str,
    gap_after: float,
) -> None:
    """Write every table's records into PostgreSQL, verifying each chain, until stopped."""
    from cardshoe.controller.floor.broker import BrokerSettings
    from cardshoe.controller.floor.ingest import Ingest, IngestSettings
    from cardshoe.controller.service.logging_setup import configure_logging
    from cardshoe.controller.service.stop_signals import stop_on_signals

    settings = IngestSettings(
        broker=BrokerSettings(broker, ca=ca, cert=cert, key=key),
        dsn=dsn,
        client_id=client_id,
        gap_report_s=gap_after,
    )
    configure_logging()
    running = Ingest(settings)
    with stop_on_signals(running.stop):
        running.run()


@floor.command()
@DSN_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print one JSON array of tables.")
def status(dsn: str, as_json: bool) -> None:
    """Per table: ingested, verified, gaps, chain, last seen, online, lag."""
    from cardshoe.controller.floor.schema import connect
    from cardshoe.controller.floor.status import floor_status, status_lines

    with connect(dsn) as connection:
        tables = floor_status(connection)
    if as_json:
        click.echo(json.dumps([table.to_json() for table in tables]))
    else:
        for line in status_lines(tables):
            click.echo(line)
    if any(not table.chain_verified for table in tables):
        raise click.exceptions.Exit(1)


@floor.command()
@click.option(
    "--tables",
    type=click.IntRange(1, 50),
    default=12,
    show_default=True,
    help="Simulated tables, each with its simulator, journal and uplink.",
)
@click.option(
    "--rounds", type=click.IntRange(min=1), default=20, show_default=True, help="Rounds a table."
)
@click.option(
    "--speed",
    type=click.FloatRange(min=0),
    default=0.01,
    show_default=True,
    help="Seconds between cards at each table.",
)
def demo(tables: int, rounds: int, speed: float) -> None:
    """A floor of simulated tables into a throwaway mosquitto and PostgreSQL, live.

    Each table runs shoectl demo and shoectl uplink; one shoectl floor
    ingest fills the database. Ends with every table's records journaled
    against ingested, and exits 1 if any record was lost or duplicated.
    """
    from rich.console import Console

    from cardshoe.controller.floor.demo import run_floor_demo

    if run_floor_demo(tables, rounds, speed, Console()) != 0:
        raise click.exceptions.Exit(1)
