"""shoectl floor: the floor's side of the feed, init-db, ingest, status, demo, and software
authentication: approve, authenticate (docs/floor.md)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import click

FILE = click.Path(dir_okay=False, path_type=Path)
DSN_OPTION = click.option(
    "--dsn", required=True, help="The floor database, postgresql://USER@HOST:PORT/DB."
)


def _broker_options(command: Callable[..., None]) -> Callable[..., None]:
    """The broker and the client's TLS files, shared by the commands that reach the broker."""
    command = click.option("--key", type=FILE, help="The key of --cert.")(command)
    command = click.option("--cert", type=FILE, help="This client's certificate (the ingest's).")(
        command
    )
    command = click.option("--ca", type=FILE, help="The floor's CA certificate (mqtts://).")(
        command
    )
    return click.option("--broker", required=True, help="mqtt://HOST:PORT or mqtts://HOST:PORT.")(
        command
    )


@click.group()
def floor() -> None:
    """The floor's database: create it, fill it from the broker, report on it.

    Exit codes: 0 success, 1 a table's chain is broken (status), 2 bad input,
    3 the database cannot be reached.
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
@_broker_options
@DSN_OPTION
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
    if any(not (table.chain_verified and table.software_verified) for table in tables):
        raise click.exceptions.Exit(1)


@floor.command()
@click.option("--version", "release", required=True, help="The release's version, as 0.1.0.")
@click.option("--wheel", type=FILE, required=True, help="The release's cardshoe .whl file.")
@click.option("--dsn", default=None, help="Store the release's manifest in this floor database.")
@click.option("--seed", default=None, help="Print the digest the release gives for this hex seed.")
def approve(release: str, wheel: Path, dsn: str | None, seed: str | None) -> None:
    """Make a release the reference for software authentication.

    The manifest of the wheel's files (docs/security.md) is what every table's answer is
    compared with: --dsn stores it for `floor authenticate`; --seed prints the digest the
    genuine release gives for one seed, for a lab's own check.
    """
    from cardshoe.controller.errors import UserError
    from cardshoe.controller.service.software_identity import (
        keyed_digest,
        manifest_bytes,
        manifest_sha256,
        parse_seed,
        wheel_manifest,
    )

    if dsn is None and seed is None:
        raise UserError("give --dsn to store the release, --seed to print its digest, or both")
    seed_bytes = None if seed is None else parse_seed(seed)
    entries = wheel_manifest(wheel)
    manifest = manifest_bytes(entries)
    if dsn is not None:
        from cardshoe.controller.floor.schema import connect
        from cardshoe.controller.floor.software_check import approve_release

        with connect(dsn) as connection:
            approve_release(connection, release, entries)
        click.echo(
            f"approved cardshoe {release}: {len(entries)} files, manifest sha256 "
            f"{manifest_sha256(manifest)}"
        )
    if seed_bytes is not None:
        click.echo(f"seed {seed_bytes.hex()} digest {keyed_digest(seed_bytes, manifest)}")


@floor.command()
@click.argument("table_id", required=False)
@click.option("--all", "every_table", is_flag=True, help="Every table the floor knows.")
@_broker_options
@DSN_OPTION
@click.option(
    "--wait",
    type=click.FloatRange(min=0.1),
    default=10.0,
    show_default=True,
    help="Seconds to wait for the tables' answers.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON array of checks.")
def authenticate(
    table_id: str | None,
    every_table: bool,
    broker: str,
    dsn: str,
    ca: Path | None,
    cert: Path | None,
    key: Path | None,
    wait: float,
    as_json: bool,
) -> None:
    """Send TABLE_ID (or --all tables) a fresh seed and check each answer against the
    approved release's (`floor approve`). Every check is stored, and one that is not
    verified is a floor alarm. Exit 1 when any table is not verified."""
    from cardshoe.controller.errors import UserError
    from cardshoe.controller.floor.broker import BrokerSettings
    from cardshoe.controller.floor.schema import connect
    from cardshoe.controller.floor.software_check import (
        Verdict,
        authenticate_tables,
        record_checks,
        tables_to_check,
    )

    if every_table == (table_id is not None):
        raise UserError("name one TABLE_ID or give --all")
    with connect(dsn) as connection:
        tables = tables_to_check(connection, table_id)
        if not tables:
            raise UserError("the floor has heard from no table yet: nothing to authenticate")
        exchanges = authenticate_tables(
            BrokerSettings(broker, ca=ca, cert=cert, key=key), tables, wait
        )
        checks = record_checks(connection, exchanges)
    if as_json:
        click.echo(json.dumps([check.to_json() for check in checks]))
    else:
        for check in checks:
            click.echo(f"{check.table_id}: software {check.verdict}: {check.detail}")
    if any(check.verdict is not Verdict.VERIFIED for check in checks):
        raise click.exceptions.Exit(1)


@floor.command()
@click.option("--tables", type=click.IntRange(1, 50), default=12, show_default=True)
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
