"""make floor-demo: a floor of simulated tables, live, ending with records journaled vs ingested.

Every table is what runs at a real table, as separate processes: `shoectl
demo` (its simulator, driver, procedure and journal) and `shoectl uplink`
beside it; the floor is a throwaway mosquitto and PostgreSQL with one
`shoectl floor ingest`. This module only starts processes and reads the
database and the journals, so the floor package never imports a simulator.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import psycopg
from rich.console import Console, Group
from rich.live import Live
from rich.table import Table

from cardshoe.controller.errors import UserError
from cardshoe.controller.floor.broker import BrokerSettings, new_client
from cardshoe.controller.floor.local_servers import Mosquitto, Postgres
from cardshoe.controller.floor.messages import EventMessage
from cardshoe.controller.floor.schema import connect, migrate
from cardshoe.controller.floor.status import TableStatus, floor_status
from cardshoe.controller.floor.topics import Leaf, table_topic
from cardshoe.controller.journal.errors import JournalError
from cardshoe.controller.journal.store import Journal

GAMES = ("punto-banco", "macau-1", "seven-up", "macau-2")
PIT_USER = "demo-supervisor"
PIT_PASSWORD = "demo-supervisor-password"
"""The demo supervisor the pit demo prints: a throwaway database, a throwaway password."""
FOREIGN_CARD_TABLE = "T02"
"""In the pit demo, this table's simulator slips a card of another deck set into round 2."""
PIT_START_S = 30.0
"""How long the pit may take to start listening."""
FORGED_TABLE = "T05"
"""In the pit demo, a forged copy of this table's last record reaches the floor's broker."""
SITE = "demo-floor"
CATCH_UP_S = 60.0
"""How long the floor may take to verify everything once the tables have finished."""


@dataclass(frozen=True)
class DemoTable:
    table_id: str
    game: str
    automatic: bool
    folder: Path

    @property
    def config_path(self) -> Path:
        return self.folder / f"{self.table_id}.toml"

    @property
    def journal_path(self) -> Path:
        return self.folder / f"{self.table_id}.sqlite"

    def write_config(self, broker_url: str, state_dir: Path) -> None:
        kind = "auto" if self.automatic else "shoe"
        self.config_path.write_text(
            f'table_id = "{self.table_id}"\n'
            f'[game]\nname = "{self.game}"\n'
            f'[device]\nkind = "{kind}"\n'
            f'[service]\njournal_path = "{self.journal_path}"\n'
            f'[uplink]\nbroker = "{broker_url}"\nsite = "{SITE}"\nstate_dir = "{state_dir}"\n'
            "resend_after_s = 5.0\n",
            encoding="utf-8",
        )


@dataclass(frozen=True)
class Reconciliation:
    """One table at the end: what its journal holds against what the floor holds."""

    table_id: str
    game: str
    journaled: int
    ingested: int
    lost: int
    duplicated: int
    verified: bool


def _shoectl(*args: str) -> list[str]:
    return [sys.executable, "-m", "cardshoe.controller.cli", *args]


@contextmanager
def _process(command: list[str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("ab") as output:
        process = subprocess.Popen(command, stdout=output, stderr=output)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def run_floor_demo(
    tables: int, rounds: int, speed: float, console: Console, pit_listen: str | None = None
) -> int:
    """Run the demo; returns the records lost or duplicated over every table (0 when right).

    With pit_listen, the pit (shoectl floor web) serves the floor there from the start,
    one table deals a foreign card and another gets a forged record, so the pit has
    alarms to acknowledge; the pit stays up after the reconciliation until Ctrl-C.
    """
    folder = Path(tempfile.mkdtemp(prefix="cardshoe-floor-demo-"))
    try:
        return _run(folder, tables, rounds, speed, console, pit_listen)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _run(
    folder: Path, count: int, rounds: int, speed: float, console: Console, pit_listen: str | None
) -> int:
    broker = Mosquitto(folder / "mosquitto")
    database = Postgres(folder / "postgres")
    state_dir = folder / "uplink-state"
    state_dir.mkdir()
    demo_tables = [
        DemoTable(f"T{number:02d}", GAMES[number % len(GAMES)], number % 3 == 0, folder)
        for number in range(1, count + 1)
    ]
    with ExitStack() as stack:
        console.print(f"starting mosquitto and PostgreSQL in {folder}")
        broker.start()
        stack.callback(broker.stop)
        database.start()
        stack.callback(database.stop)
        with connect(database.dsn) as connection:
            migrate(connection)
        pit = None
        if pit_listen is not None:
            pit = stack.enter_context(_pit(folder, database.dsn, broker.url, pit_listen, console))
        stack.enter_context(
            _process(
                _shoectl("floor", "ingest", "--broker", broker.url, "--dsn", database.dsn),
                folder / "ingest.log",
            )
        )
        for table in demo_tables:
            table.write_config(broker.url, state_dir)
            _register(table, database.dsn)
        console.print(f"{count} tables registered: the floor stores only records each one signs")
        dealers, uplinks = _start_tables(stack, demo_tables, folder, rounds, speed, pit is not None)
        _watch(console, database.dsn, demo_tables, dealers, uplinks)
        ended = _reconcile(database.dsn, demo_tables)
        if pit is not None:
            forged = next(t for t in demo_tables if t.table_id == FORGED_TABLE)
            _publish_forged_record(broker.url, forged)
            console.print(_final_table(ended))
            console.print(f"the pit stays up at {pit}: log in as {PIT_USER} / {PIT_PASSWORD}")
            console.print("press Ctrl-C to end the demo")
            _wait_for_interrupt()
    console.print(_final_table(ended))
    wrong = sum(row.lost + row.duplicated for row in ended)
    console.print(
        f"{sum(row.journaled for row in ended)} records journaled at {len(ended)} tables, "
        f"{sum(row.ingested for row in ended)} in PostgreSQL: "
        f"{sum(row.lost for row in ended)} lost, {sum(row.duplicated for row in ended)} duplicated"
    )
    return wrong


def _start_tables(
    stack: ExitStack,
    demo_tables: list[DemoTable],
    folder: Path,
    rounds: int,
    speed: float,
    with_pit: bool,
) -> tuple[list[subprocess.Popen[bytes]], list[subprocess.Popen[bytes]]]:
    """Each table's uplink and dealing demo, stopped with the stack; the dealers and uplinks.

    With the pit, FOREIGN_CARD_TABLE deals a foreign card in its second round.
    """
    dealers, uplinks = [], []
    for table in demo_tables:
        config = str(table.config_path)
        uplink = _shoectl("uplink", "--config", config)
        uplinks.append(stack.enter_context(_process(uplink, folder / f"{table.table_id}-up.log")))
        deal = _shoectl("demo", "--config", config, "--transport", "inproc", "--json")
        deal += ["--journal", str(table.journal_path)]
        deal += ["--rounds", str(rounds), "--speed", str(speed)]
        if with_pit and table.table_id == FOREIGN_CARD_TABLE:
            deal += ["--inject", "foreign-card@round=2"]
        dealers.append(stack.enter_context(_process(deal, folder / f"{table.table_id}-deal.log")))
    return dealers, uplinks


def _register(table: DemoTable, dsn: str) -> None:
    """As at a real table: journal init makes the journal and its signing key, journal key
    prints the public half, and the floor registers it."""
    config = str(table.config_path)
    _table_command(table, "journal", "init", "--config", config)
    table_id, key = _table_command(table, "journal", "key", "--config", config).split()
    _table_command(table, "floor", "register-table", "--dsn", dsn, table_id, key)


def _table_command(table: DemoTable, *args: str) -> str:
    """Run one shoectl command for a table; its output, or its one-line error as ours."""
    done = subprocess.run(_shoectl(*args), capture_output=True, text=True)
    if done.returncode != 0:
        raise UserError(f"table {table.table_id}: {done.stderr.strip()}")
    return done.stdout


def _journal_head(path: Path) -> int:
    """The last record id the table's journal holds, 0 before it exists."""
    try:
        with Journal.open_readonly(path) as journal:
            last = 0
            for record in journal.records(after_id=0):
                last = record.id
            return last
    except JournalError:
        return 0


def _watch(
    console: Console,
    dsn: str,
    tables: list[DemoTable],
    dealers: list[subprocess.Popen[bytes]],
    uplinks: list[subprocess.Popen[bytes]],
) -> None:
    """The live summary, until every table has dealt and the floor has verified it all."""
    deadline: float | None = None
    with psycopg.connect(dsn, autocommit=True) as connection, Live(console=console) as live:
        while True:
            heads = {table.table_id: _journal_head(table.journal_path) for table in tables}
            status = {row.table_id: row for row in floor_status(connection)}
            rounds = _rounds(connection)
            live.update(_live_view(tables, heads, status, rounds, dealers))
            dealing = any(dealer.poll() is None for dealer in dealers)
            broken = [(t, "deal") for t, d in zip(tables, dealers, strict=True) if d.poll()]
            broken += [
                (t, "up") for t, u in zip(tables, uplinks, strict=True) if u.poll() is not None
            ]
            for table, what in broken:
                log = table.folder / f"{table.table_id}-{what}.log"
                lines = log.read_text(encoding="utf-8", errors="replace").splitlines() or ["?"]
                command = "demo" if what == "deal" else "uplink"
                raise UserError(f"table {table.table_id}'s shoectl {command} failed: {lines[-1]}")
            caught_up = all(
                table.table_id in status
                and status[table.table_id].contiguous_id >= heads[table.table_id]
                for table in tables
            )
            if not dealing and caught_up:
                return
            if not dealing and deadline is None:
                deadline = time.monotonic() + CATCH_UP_S
            if deadline is not None and time.monotonic() > deadline:
                console.print("the floor did not catch up in time; reconciling what it holds")
                return
            time.sleep(0.5)


def _rounds(connection: psycopg.Connection) -> dict[str, int]:
    rows = connection.execute(
        "SELECT table_id, count(*) FROM journal_records WHERE kind = 'round.result' "
        "GROUP BY table_id"
    ).fetchall()
    return {table_id: int(count) for table_id, count in rows}


def _live_view(
    tables: list[DemoTable],
    heads: dict[str, int],
    status: dict[str, TableStatus],
    rounds: dict[str, int],
    dealers: list[subprocess.Popen[bytes]],
) -> Group:
    view = Table(title="cardshoe floor (live)", expand=False)
    for column in ("table", "game", "dealing", "rounds", "journaled", "verified", "lag", "alarms"):
        view.add_column(column, justify="left" if column in ("table", "game") else "right")
    for table, dealer in zip(tables, dealers, strict=True):
        row = status.get(table.table_id)
        view.add_row(
            table.table_id,
            table.game + (" (auto)" if table.automatic else ""),
            "yes" if dealer.poll() is None else "done",
            str(rounds.get(table.table_id, 0)),
            str(heads[table.table_id]),
            str(row.contiguous_id if row else 0),
            str(max(0, heads[table.table_id] - (row.contiguous_id if row else 0))),
            str(row.alarms if row else 0),
        )
    total_alarms = sum(row.alarms for row in status.values())
    summary = (
        f"{len(tables)} tables, {sum(rounds.values())} rounds, "
        f"{sum(heads.values())} records journaled, "
        f"{sum(row.contiguous_id for row in status.values())} verified on the floor, "
        f"{total_alarms} alarms"
    )
    return Group(view, summary)


def _reconcile(dsn: str, tables: list[DemoTable]) -> list[Reconciliation]:
    ended = []
    with psycopg.connect(dsn) as connection:
        for table in tables:
            with Journal.open_readonly(table.journal_path) as journal:
                wanted = {record.id: record.hash for record in journal.records()}
            rows = connection.execute(
                "SELECT record_id, hash FROM journal_records WHERE table_id = %s",
                (table.table_id,),
            ).fetchall()
            held = {int(record_id): digest for record_id, digest in rows}
            lost = sum(1 for record_id, digest in wanted.items() if held.get(record_id) != digest)
            state = connection.execute(
                "SELECT contiguous_id, chain_ok FROM floor_tables WHERE table_id = %s",
                (table.table_id,),
            ).fetchone()
            verified = state is not None and state[1] and state[0] == max(wanted, default=0)
            ended.append(
                Reconciliation(
                    table_id=table.table_id,
                    game=table.game,
                    journaled=len(wanted),
                    ingested=len(held),
                    lost=lost,
                    duplicated=len(rows) - len(held) + max(0, len(held) - len(wanted)),
                    verified=verified,
                )
            )
    return ended


def _final_table(ended: list[Reconciliation]) -> Table:
    view = Table(title="records journaled vs ingested")
    for column in ("table", "game", "journaled", "ingested", "lost", "duplicated", "chain"):
        view.add_column(column, justify="left" if column in ("table", "game", "chain") else "right")
    for row in ended:
        view.add_row(
            row.table_id,
            row.game,
            str(row.journaled),
            str(row.ingested),
            str(row.lost),
            str(row.duplicated),
            "verified" if row.verified else "NOT verified",
        )
    return view


@contextmanager
def _pit(folder: Path, dsn: str, broker_url: str, listen: str, console: Console) -> Iterator[str]:
    """shoectl floor web on the demo floor, with the demo supervisor; yields its URL."""
    secret = folder / "pit-password"
    secret.write_text(PIT_PASSWORD + "\n", encoding="utf-8")
    add = _shoectl("floor", "user", "add", PIT_USER, "--role", "supervisor", "--dsn", dsn)
    subprocess.run([*add, "--password-file", str(secret)], check=True, capture_output=True)
    command = _shoectl("floor", "web", "--dsn", dsn, "--broker", broker_url, "--listen", listen)
    log = folder / "pit.log"
    with _process(command, log) as process:
        deadline = time.monotonic() + PIT_START_S
        while "serving " not in log.read_text(encoding="utf-8", errors="replace"):
            if process.poll() is not None or time.monotonic() > deadline:
                lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
                raise UserError(f"the pit did not start: {lines[-1] if lines else 'no output'}")
            time.sleep(0.1)
        url = log.read_text(encoding="utf-8").split("serving ", 1)[1].split()[0]
        console.print(f"the pit: {url} (log in as {PIT_USER} / {PIT_PASSWORD})")
        yield url


def _publish_forged_record(broker_url: str, table: DemoTable) -> None:
    """A copy of the table's last record with its payload changed and its hash kept: ingest
    finds it does not hash to its hash, stores an alarm and keeps it out of the journal."""
    with Journal.open_readonly(table.journal_path) as journal:
        last = list(journal.records())[-1]
    forged = EventMessage.from_record(last)
    forged = replace(forged, payload={**forged.payload, "forged": True})
    settings = BrokerSettings(broker_url)
    client = new_client(settings, f"demo-forger-{table.table_id}")
    client.connect(settings.host, settings.port)
    client.loop_start()
    try:
        topic = table_topic(SITE, table.table_id, Leaf.EVENTS)
        client.publish(topic, forged.encode(), qos=1).wait_for_publish(10)
    finally:
        client.disconnect()
        client.loop_stop()


def _wait_for_interrupt() -> None:
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        return
