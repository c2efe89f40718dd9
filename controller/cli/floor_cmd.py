"""shoectl floor: the floor's side of the feed, init-db, ingest, status, demo, and software
authentication: approve, authenticate (docs/floor.md)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path

import click

from cardshoe.controller.errors import UserError
from cardshoe.controller.floor.broker import BrokerSettings
from cardshoe.controller.service.logging_setup import configure_logging
from cardshoe.controller.service.software_identity import (
    keyed_digest,
    manifest_bytes,
    manifest_sha256,
    parse_seed,
    wheel_manifest,
)
from cardshoe.controller.service.stop_signals import stop_on_signals

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
    """The floor's database: create it, register tables, fill it from the broker, report on it,
    serve the pit, or try it all on simulated tables (demo).

    These commands need the `floor` extra: pip install 'cardshoe[floor]'. Exit codes:
    0 success, 1 a table's chain is broken (status) or a demo record was lost, 2 bad input
    (a missing extra included), 3 the database cannot be reached.
    """


@floor.command("init-db")
@DSN_OPTION
def init_db(dsn: str) -> None:
    """Create or migrate the floor schema; safe to run again."""
    # Late: psycopg, the optional 'floor' extra; floor --help must work without it.
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
    # Late: psycopg, the optional 'floor' extra; floor --help must work without it.
    from cardshoe.controller.floor.ingest import Ingest, IngestSettings

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


@floor.command("register-table")
@DSN_OPTION
@click.argument("table_id")
@click.argument("public_key")
def register_table(dsn: str, table_id: str, public_key: str) -> None:
    """Register a table's signing key: ingest then stores only records it signed.

    PUBLIC_KEY is the 64 hex digits `shoectl journal key` prints on the table
    PC. Registering a table again replaces its key (rotation, docs/security.md).
    """
    # Late: psycopg, the optional 'floor' extra; floor --help must work without it.
    from cardshoe.controller.floor.schema import connect, require_current
    from cardshoe.controller.floor.table_keys import checked_key
    from cardshoe.controller.floor.table_keys import register_table as register

    key = checked_key(table_id, public_key)
    with connect(dsn) as connection:
        require_current(connection)
        replaced = register(connection, table_id, key)
    if replaced is None:
        click.echo(f"table {table_id} registered: only records it signs are stored")
    elif replaced == key:
        click.echo(f"table {table_id} was already registered with this key")
    else:
        click.echo(f"table {table_id}: key {replaced[:16]}… replaced by {key[:16]}…")


@floor.command()
@DSN_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print one JSON array of tables.")
def status(dsn: str, as_json: bool) -> None:
    """Per table: ingested, verified, gaps, chain, last seen, online, lag."""
    # Late: psycopg, the optional 'floor' extra; floor --help must work without it.
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

    if dsn is None and seed is None:
        raise UserError("give --dsn to store the release, --seed to print its digest, or both")
    seed_bytes = None if seed is None else parse_seed(seed)
    entries = wheel_manifest(wheel)
    manifest = manifest_bytes(entries)
    if dsn is not None:
        # Late: psycopg, the optional 'floor' extra; floor --help must work without it.
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
    # Late: psycopg, the optional 'floor' extra; floor --help must work without it.
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
@click.option(
    "--pit",
    "pit_listen",
    metavar="HOST:PORT",
    help="Also serve the pit there (shoectl floor web), with a demo supervisor and alarms to "
    "acknowledge; it stays up after the reconciliation until Ctrl-C.",
)
def demo(tables: int, rounds: int, speed: float, pit_listen: str | None) -> None:
    """A floor of simulated tables into a throwaway mosquitto and PostgreSQL, live.

    Each table runs shoectl demo and shoectl uplink; one shoectl floor
    ingest fills the database. Ends with every table's records journaled
    against ingested, and exits 1 if any record was lost or duplicated.
    """
    # Late: floor.demo needs psycopg (the 'floor' extra) and rich (~30 ms) only this subcommand,
    # and web.server (the whole web app, ~250 ms) only for its address parser, which ingest's
    # start-up, measured in its throughput, must not pay.
    from rich.console import Console

    from cardshoe.controller.floor.demo import FORGED_TABLE, run_floor_demo
    from cardshoe.controller.web.server import ListenAddress

    if pit_listen is not None:
        ListenAddress.parse(pit_listen, "--pit")
        if tables < int(FORGED_TABLE[1:]):
            raise click.BadParameter(
                f"the pit demo needs at least {FORGED_TABLE[1:]} tables", param_hint="--tables"
            )
    if run_floor_demo(tables, rounds, speed, Console(), pit_listen) != 0:
        raise click.exceptions.Exit(1)


@floor.group()
def user() -> None:
    """The pit's users (docs/pit.md): viewers, supervisors and surveillance."""


@user.command("add")
@click.argument("name")
@click.option(
    "--role",
    type=click.Choice(["viewer", "supervisor", "surveillance"]),
    required=True,
    help="viewer reads; supervisor also acknowledges alarms; surveillance also sees advantage "
    "and stacked-shoe alarms.",
)
@DSN_OPTION
@click.option(
    "--password-file",
    type=FILE,
    help="Read the password from the first line of this file instead of prompting.",
)
def user_add(name: str, role: str, dsn: str, password_file: Path | None) -> None:
    """Add a user of the pit; the password is stored as a scrypt hash only."""
    # Late: psycopg, the optional 'floor' extra; floor --help must work without it.
    from cardshoe.controller.floor.schema import connect, require_current
    from cardshoe.controller.pit.accounts import Role, add_user

    if password_file is None:
        password = click.prompt("password", hide_input=True, confirmation_prompt=True)
    else:
        try:
            lines = password_file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise UserError(f"--password-file {password_file}: cannot read it ({exc})") from None
        password = lines[0] if lines else ""
    with connect(dsn, autocommit=True) as connection:
        require_current(connection)
        add_user(connection, name, Role(role), password)
    click.echo(f"pit user {name} added as {role}")


@floor.command()
@DSN_OPTION
@click.option(
    "--broker", help="mqtt://HOST:PORT or mqtts://HOST:PORT: the tables' retained status."
)
@click.option("--ca", type=FILE, help="The floor's CA certificate (mqtts://).")
@click.option("--cert", type=FILE, help="The pit's MQTT client certificate.")
@click.option("--key", type=FILE, help="The key of --cert.")
@click.option(
    "--listen",
    default="127.0.0.1:8090",
    show_default=True,
    metavar="HOST:PORT",
    help="Address to serve on; port 0 lets the system choose (the URL is printed).",
)
@click.option("--tls-cert", type=FILE, help="Serve HTTPS with this certificate (PEM).")
@click.option("--tls-key", type=FILE, help="The key of --tls-cert.")
@click.option(
    "--overdue-after",
    type=click.FloatRange(min=1),
    default=300.0,
    show_default=True,
    help="Seconds an alarm may stay unacknowledged before it is marked overdue.",
)
@click.option(
    "--client-id", default="cardshoe-pit-1", show_default=True, help="The pit's MQTT client id."
)
@click.option(
    "--time-zone",
    default="UTC",
    show_default=True,
    metavar="ZONE",
    help="The floor's time zone (IANA name, such as Asia/Macau): the pace page's days and "
    "hours of day.",
)
@click.option(
    "--proxy",
    "proxies",
    multiple=True,
    metavar="ADDRESS",
    help="A reverse proxy (an IP address or network) whose X-Forwarded-For names the client, "
    "so that failed logins are counted per client behind it; repeat for several. Default: "
    "this machine (127.0.0.1 and ::1).",
)
def web(
    dsn: str,
    broker: str | None,
    ca: Path | None,
    cert: Path | None,
    key: Path | None,
    listen: str,
    tls_cert: Path | None,
    tls_key: Path | None,
    overdue_after: float,
    client_id: str,
    time_zone: str,
    proxies: tuple[str, ...],
) -> None:
    """Serve the pit: the floor, tables, round recall, alarms and pace pages and their JSON
    API (docs/pit.md), live from the floor database. Runs until Ctrl-C or SIGTERM."""

    # Late: psycopg, the optional 'floor' extra; floor --help must work without it. web.server
    # (the whole web app, ~250 ms) too: ingest's start-up, measured in its throughput, must not.
    from cardshoe.controller.floor.schema import connect, require_current
    from cardshoe.controller.pit.app import PitSettings
    from cardshoe.controller.pit.pace import floor_zone
    from cardshoe.controller.pit.server import ServerTls, pit_url, serve, trusted_proxies
    from cardshoe.controller.web.server import ListenAddress

    address = ListenAddress.parse(listen)
    if (tls_cert is None) != (tls_key is None):
        raise UserError("give --tls-cert and --tls-key together, or neither")
    tls = None if tls_cert is None or tls_key is None else ServerTls(tls_cert, tls_key)
    trusted = trusted_proxies(proxies)
    for path in (tls_cert, tls_key):
        if path is not None and not path.is_file():
            raise UserError(f"{path}: no such file")
    settings = PitSettings(
        dsn=dsn,
        broker=None if broker is None else BrokerSettings(broker, ca=ca, cert=cert, key=key),
        client_id=client_id,
        overdue_after_s=overdue_after,
        time_zone=floor_zone(time_zone),
    )
    with connect(dsn) as connection:
        require_current(connection)
    configure_logging(level=logging.WARNING)
    sock = address.bind()
    click.echo(f"shoectl floor web: serving {pit_url(sock, tls)}", err=True)
    serve(settings, sock, tls, trusted)
