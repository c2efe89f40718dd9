"""Ingest holds a bounded amount of what the broker sends, on real mosquitto and PostgreSQL.

Mosquitto 2.0.11 sends a resumed session's queue as fast as the socket takes
it (controller/floor/inbox.py), so these hold ingest's database back with a
lock and pour a backlog in: what ingest holds must stay within its inbox, the
rest must wait in the broker, a stop must still end the process, and every
record must reach PostgreSQL once the database is back.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from support.floor_support import chained_messages, floor_records, floor_table, publish
from support.service_support import wait_until

from cardshoe.controller.floor.broker import BrokerSettings
from cardshoe.controller.floor.ingest import Ingest, IngestSettings
from cardshoe.controller.floor.local_servers import Mosquitto
from cardshoe.controller.floor.messages import event_bodies
from cardshoe.controller.floor.schema import connect
from cardshoe.controller.floor.topics import Leaf, table_topic

TABLE = "T-INBOX"
MESSAGES = 30
RECORDS = MESSAGES * 200


class _Subscribed(logging.Handler):
    """Set once an ingest logs that its subscriptions were granted."""

    def __init__(self) -> None:
        super().__init__()
        self.seen = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if "ingest subscribed" in record.getMessage():
            self.seen.set()


@contextmanager
def running(ingest: Ingest) -> Iterator[threading.Thread]:
    """ingest.run() in a thread, started once the broker granted its subscriptions."""
    subscribed = _Subscribed()
    logger = logging.getLogger("cardshoe.controller.floor.ingest")
    logger.addHandler(subscribed)
    previous_level = logger.level
    logger.setLevel(logging.INFO)
    thread = threading.Thread(target=ingest.run, name="ingest-under-test", daemon=True)
    thread.start()
    try:
        assert subscribed.seen.wait(20), "ingest never subscribed"
        yield thread
    finally:
        logger.removeHandler(subscribed)
        logger.setLevel(previous_level)
        ingest.stop()
        thread.join(30)


@contextmanager
def database_held(dsn: str) -> Iterator[None]:
    """Another session locks floor_tables: ingest's next batch waits at its first statement."""
    with connect(dsn) as holder:
        holder.execute("LOCK TABLE floor_tables IN ACCESS EXCLUSIVE MODE")
        yield
        holder.commit()


@pytest.fixture
def backlog() -> list[bytes]:
    return [body for _, body in event_bodies(chained_messages(TABLE, RECORDS))]


def test_ingest_holds_no_more_than_its_inbox_and_stores_every_record_after_a_stop(
    broker: Mosquitto, dsn: str, backlog: list[bytes]
) -> None:
    assert len(backlog) == MESSAGES
    budget = 3 * max(len(body) for body in backlog)
    settings = IngestSettings(BrokerSettings(broker.url), dsn, "ingest-inbox", inbox_bytes=budget)
    first = Ingest(settings)
    with running(first) as thread, database_held(dsn):
        publish(broker.url, table_topic("casino-1", TABLE, Leaf.EVENTS), backlog)
        held = []
        wait_until(lambda: first._inbox.held_bytes > budget - len(backlog[0]), "the inbox to fill")
        for _ in range(20):  # a second: paho's thread would go on reading if it did not wait
            held.append(first._inbox.held_bytes)
            time.sleep(0.05)
        assert max(held) <= budget
        assert len(first._inbox) < MESSAGES // 2
        # The stop comes while paho's thread waits for room: the run must still end.
        first.stop()
    thread.join(30)
    assert not thread.is_alive(), "ingest did not end while its inbox was full"

    second = Ingest(IngestSettings(BrokerSettings(broker.url), dsn, "ingest-inbox"))
    with running(second):
        wait_until(lambda: _verified(dsn) == RECORDS, "every record verified", timeout=60)
    assert [record_id for record_id, _ in floor_records(dsn, TABLE)] == list(range(1, RECORDS + 1))


def _verified(dsn: str) -> int:
    table = floor_table(dsn, TABLE)
    return 0 if table is None else int(table["contiguous_id"])
