"""The floor's parts in tests: real shoectl uplink/ingest processes, real journals, real rows.

Every uplink and ingest runs as its own `shoectl` child process, as systemd
runs them, so a test can SIGKILL one; journals are written by the real
journal writer; what the floor holds is read back from PostgreSQL itself.
"""

from __future__ import annotations

import itertools
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import psycopg

from cardshoe.controller.floor.local_servers import Mosquitto
from cardshoe.controller.floor.messages import EventMessage
from cardshoe.controller.journal.chain import GENESIS_HASH, record_hash
from cardshoe.controller.journal.store import Journal
from support.process_support import ended
from support.service_support import wait_until

FLOOR_WAIT_S = 60.0
"""The longest a floor test waits for the floor to catch up; reached only when broken."""
STOP_WAIT_S = 30.0
"""The longest an uplink or ingest may take to end after its signal; reached only when stuck."""
_process_names = itertools.count(1)


@dataclass
class FloorProcess:
    """One shoectl uplink or floor ingest child process and its log."""

    args: tuple[str, ...]
    log_path: Path
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> FloorProcess:
        command = [sys.executable, "-m", "cardshoe.controller.cli", *self.args]
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=log)
        return self

    def stop(self, number: int = signal.SIGTERM) -> int:
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(number)
        return ended(self.process, STOP_WAIT_S, lambda: self.log)

    def kill(self) -> None:
        self.stop(signal.SIGKILL)

    def restart(self) -> None:
        self.kill()
        self.start()

    @property
    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")


@dataclass
class Floor:
    """A test's floor: its broker, its database, and the processes it started."""

    folder: Path
    broker: Mosquitto
    dsn: str
    site: str = "casino-1"
    processes: list[FloorProcess] = field(default_factory=list)

    def ingest(self, client_id: str = "ingest-1", *extra: str) -> FloorProcess:
        """An ingest process, once it has subscribed (what is published before is not its)."""
        return self.ingest_over(self.broker.url, "--client-id", client_id, *extra)

    def ingest_over(self, broker_url: str, *extra: str) -> FloorProcess:
        started = self._start(
            "floor",
            "ingest",
            "--broker",
            broker_url,
            "--dsn",
            self.dsn,
            *extra,
        )
        wait_until(
            lambda: "ingest subscribed" in started.log, f"ingest to subscribe\n{started.log}"
        )
        return started

    def uplink(self, journal_path: Path, *extra: str) -> FloorProcess:
        return self.uplink_over(self.broker.url, journal_path, *extra)

    def uplink_over(self, broker_url: str, journal_path: Path, *extra: str) -> FloorProcess:
        state_dir = self.folder / "uplink-state"
        state_dir.mkdir(exist_ok=True)
        return self._start(
            "uplink",
            "--journal",
            str(journal_path),
            "--broker",
            broker_url,
            "--site",
            self.site,
            "--state-dir",
            str(state_dir),
            "--resend-after",
            "2",
            "--report-every",
            "0.5",
            *extra,
        )

    def _start(self, *args: str) -> FloorProcess:
        name = f"{args[0]}-{next(_process_names)}.log"
        started = FloorProcess(args, self.folder / name).start()
        self.processes.append(started)
        return started

    def stop_all(self) -> None:
        for started in self.processes:
            started.stop()

    def logs(self) -> str:
        return "\n".join(f"--- {p.log_path.name}\n{p.log[-3000:]}" for p in self.processes)


def floor_records(dsn: str, table_id: str) -> list[tuple[int, str]]:
    """(record_id, hash) of every row the floor holds for the table, in id order."""
    with psycopg.connect(dsn) as connection:
        return [
            (int(row[0]), row[1])
            for row in connection.execute(
                "SELECT record_id, hash FROM journal_records WHERE table_id = %s "
                "ORDER BY record_id",
                (table_id,),
            )
        ]


def floor_table(dsn: str, table_id: str) -> dict[str, Any] | None:
    with psycopg.connect(dsn) as connection:
        cursor = connection.execute(
            "SELECT contiguous_id, contiguous_hash, chain_ok, online FROM floor_tables "
            "WHERE table_id = %s",
            (table_id,),
        )
        row = cursor.fetchone()
    if row is None:
        return None
    return dict(zip(("contiguous_id", "contiguous_hash", "chain_ok", "online"), row, strict=True))


def floor_alarms(dsn: str, table_id: str | None = None) -> list[tuple[str, str, int | None]]:
    """(table_id, kind, record_id) of every alarm the floor stored."""
    with psycopg.connect(dsn) as connection:
        rows = connection.execute(
            "SELECT table_id, kind, record_id FROM floor_alarms ORDER BY id"
        ).fetchall()
    return [row for row in rows if table_id is None or row[0] == table_id]


def rejected_messages(dsn: str) -> list[tuple[str, str, str]]:
    """(table_id, body_sha256, reason) of every message the floor quarantined, in order."""
    with psycopg.connect(dsn) as connection:
        return [
            (row[0], row[1], row[2])
            for row in connection.execute(
                "SELECT table_id, body_sha256, reason FROM rejected_messages ORDER BY id"
            )
        ]


def journal_records(journal_path: Path, after_id: int = 0) -> list[tuple[int, str]]:
    with Journal.open_readonly(journal_path) as journal:
        return [(record.id, record.hash) for record in journal.records(after_id=after_id)]


def floor_has_caught_up(dsn: str, journal_path: Path) -> bool:
    """Every record of the journal in the floor, and the floor's chain verified up to its head."""
    wanted = journal_records(journal_path)
    if not wanted:
        return True
    with Journal.open_readonly(journal_path) as journal:
        table_id = journal.table_id
    state = floor_table(dsn, table_id)
    return state is not None and state["contiguous_id"] >= wanted[-1][0]


def assert_floor_holds(dsn: str, journal_path: Path, *, from_id: int = 1) -> None:
    """The floor holds each journal record once, with the journal's hash, its chain verified."""
    with Journal.open_readonly(journal_path) as journal:
        table_id = journal.table_id
    held = floor_records(dsn, table_id)
    wanted = journal_records(journal_path, from_id - 1)
    held_from = [row for row in held if row[0] >= from_id]
    assert held_from[: len(wanted)] == wanted
    assert len({record_id for record_id, _ in held}) == len(held)
    ids = [record_id for record_id, _ in held]
    assert ids == list(range(1, len(ids) + 1)), "the floor's ids are not 1..N without gaps"
    state = floor_table(dsn, table_id)
    assert state is not None and state["contiguous_id"] == ids[-1]


def wait_for_floor(floor: Floor, journal_paths: list[Path]) -> None:
    for path in journal_paths:
        wait_until(
            lambda path=path: floor_has_caught_up(floor.dsn, path),
            f"the floor to hold all of {path.name}\n{floor.logs()}",
            FLOOR_WAIT_S,
        )


class TableWriter:
    """A table writing its journal at a steady pace in a thread, through the real writer."""

    SHOE_RECORDS = 100
    """A shoe.ended record closes every 100th record, so prune has whole shoes to delete."""

    def __init__(self, path: Path, table_id: str, interval_s: float = 0.01) -> None:
        self.path = path
        self.table_id = table_id
        self.interval_s = interval_s
        with Journal.open(path, table_id=table_id, create=True) as journal:
            ids = [record.id for record in journal.records()]
            checkpoint = journal.checkpoint()
        self.written = ids[-1] if ids else (checkpoint.record_id if checkpoint else 0)
        """Records the journal holds or held: the id of the last one."""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"writer-{table_id}")

    def start(self) -> TableWriter:
        self._thread.start()
        return self

    def _run(self) -> None:
        with Journal.open(self.path, table_id=self.table_id) as journal:
            while not self._stop.is_set():
                shoe, position = divmod(self.written, self.SHOE_RECORDS)
                with journal.transaction() as transaction:
                    transaction.append(
                        "shoe.ended" if position == self.SHOE_RECORDS - 1 else "test.tick",
                        {"n": self.written},
                        shoe_id=f"{self.table_id}-S{shoe + 1}",
                        round_no=position // 10,
                        device_serial=None,
                    )
                self.written += 1
                time.sleep(self.interval_s)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


def retained(broker_url: str, topic: str, timeout: float = 10.0) -> bytes:
    """The retained message on a topic, read by a fresh subscriber."""
    from cardshoe.controller.floor.broker import BrokerSettings, new_client

    settings = BrokerSettings(broker_url)
    got: list[bytes] = []
    arrived = threading.Event()

    def on_message(client: mqtt.Client, userdata: Any, message: mqtt.MQTTMessage) -> None:
        got.append(message.payload)
        arrived.set()

    client = new_client(settings, f"probe-{next(_process_names)}")
    client.on_message = on_message
    client.on_connect = lambda c, *_: c.subscribe(topic, qos=1)
    client.connect(settings.host, settings.port)
    client.loop_start()
    try:
        assert arrived.wait(timeout), f"nothing retained on {topic}"
    finally:
        client.disconnect()
        client.loop_stop()
    return got[-1]


def take_over_client_id(broker_url: str, client_id: str) -> None:
    """Connect with another client's id, as a takeover would, so the broker drops that client."""
    from cardshoe.controller.floor.broker import BrokerSettings, new_client

    settings = BrokerSettings(broker_url)
    accepted = threading.Event()
    client = new_client(settings, client_id)
    client.on_connect = lambda c, u, f, reason, p: reason.is_failure or accepted.set()
    client.connect(settings.host, settings.port)
    client.loop_start()
    try:
        assert accepted.wait(10), f"the broker refused client id {client_id}"
    finally:
        client.disconnect()
        client.loop_stop()


def chained_messages(table_id: str, count: int, *, first_id: int = 1) -> list[EventMessage]:
    """Records 1..count of a table as its uplink would send them, hashed by the journal's recipe."""
    messages, previous = [], GENESIS_HASH
    for record_id in range(1, first_id + count):
        unhashed = EventMessage(
            table_id=table_id,
            record_id=record_id,
            time_ns=1_700_000_000_000_000_000 + record_id,
            shoe_id="S1",
            round_no=None,
            device_serial=None,
            device_seq=None,
            kind="test.tick",
            payload={"n": record_id},
            prev_hash=previous,
            hash="",
        )
        digest = record_hash(previous, unhashed.hashed_values())
        messages.append(replace(unhashed, hash=digest))
        previous = digest
    return messages[first_id - 1 :]


def publish(broker_url: str, topic: str, bodies: list[bytes], *, retain: bool = False) -> None:
    """Publish with QoS 1 and wait for every PUBACK, as a table's uplink would."""
    publish_each(broker_url, [(topic, body, retain) for body in bodies])


def publish_each(broker_url: str, messages: list[tuple[str, bytes, bool]]) -> None:
    """Publish (topic, body, retain) each with QoS 1 through one client, in order, acked."""
    from cardshoe.controller.floor.broker import BrokerSettings, new_client

    settings = BrokerSettings(broker_url)
    client = new_client(settings, f"publisher-{next(_process_names)}")
    client.connect(settings.host, settings.port)
    client.loop_start()
    try:
        for topic, body, retain in messages:
            client.publish(topic, body, qos=1, retain=retain).wait_for_publish(10)
    finally:
        client.disconnect()
        client.loop_stop()
