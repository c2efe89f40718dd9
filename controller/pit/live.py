"""What changes on the floor, as it changes: PostgreSQL notifications and the tables' status.

Ingest sends a notification on FLOOR_CHANNEL with each committed batch (the
ids of the tables it touched), and each table's uplink keeps its status
retained on the broker (online, or its last will: offline). Two threads
listen, one to each, and hand every change to the asyncio loop, which
wakes each browser's event stream; the browser then reads the API again.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import paho.mqtt.client as mqtt
import psycopg

from cardshoe.controller.floor.broker import BrokerSettings, new_client
from cardshoe.controller.floor.ingest_store import FLOOR_CHANNEL
from cardshoe.controller.floor.messages import MessageError, StatusMessage
from cardshoe.controller.floor.topics import Leaf, TopicName, every_table

RETRY_S = 1.0
"""How long the listener waits before it connects again to a database that went away."""
ALL_TABLES = "*"
"""A change that may concern every table (a notification too long to name them all)."""

log = logging.getLogger(__name__)


class FloorChanges:
    """Fans each change out to every open event stream, on the asyncio loop."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._streams: set[asyncio.Queue[set[str]]] = set()
        self.online: dict[str, bool] = {}
        """Each table's online flag from its retained status, as the broker last said it."""
        self.version = 0
        """Counts the changes delivered: what was read at one version is stale at the next."""

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop

    def announce(self, table_ids: set[str]) -> None:
        """From any thread: these tables changed."""
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._deliver, table_ids)

    def _deliver(self, table_ids: set[str]) -> None:
        self.version += 1
        for stream in self._streams:
            stream.put_nowait(table_ids)

    async def stream(self) -> AsyncIterator[set[str]]:
        """The changes after the stream opened, several coalesced when the reader is slow."""
        queue: asyncio.Queue[set[str]] = asyncio.Queue()
        self._streams.add(queue)
        try:
            while True:
                changed = await queue.get()
                while not queue.empty():
                    changed |= queue.get_nowait()
                yield changed
        finally:
            self._streams.discard(queue)


class NotificationListener:
    """A thread LISTENing on the floor's channel, reconnecting after the database returns."""

    def __init__(self, dsn: str, changes: FloorChanges) -> None:
        self.dsn = dsn
        self.changes = changes
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="pit-listen", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                with psycopg.connect(self.dsn, autocommit=True, connect_timeout=10) as db:
                    db.execute(f"LISTEN {FLOOR_CHANNEL}")
                    self.changes.announce({ALL_TABLES})
                    while not self._stop.is_set():
                        for notice in db.notifies(timeout=0.5):
                            self.changes.announce(_table_ids(notice.payload))
            except psycopg.Error as exc:
                log.warning("the pit lost the floor database (%s); listening again", exc)
                time.sleep(RETRY_S)


def _table_ids(payload: str) -> set[str]:
    return set(payload.split(",")) if payload else {ALL_TABLES}


class StatusWatcher:
    """Follows every table's retained status on the broker: online the moment it changes."""

    def __init__(self, settings: BrokerSettings, client_id: str, changes: FloorChanges) -> None:
        self.settings = settings
        self.changes = changes
        self._client = new_client(settings, client_id)
        self._client.reconnect_delay_set(min_delay=1, max_delay=10)
        self._client.on_connect = self._on_connect
        self._client.on_message = self._on_message

    def start(self) -> None:
        self._client.connect_async(self.settings.host, self.settings.port)
        self._client.loop_start()

    def stop(self) -> None:
        self._client.disconnect()
        self._client.loop_stop()

    def _on_connect(self, client: mqtt.Client, *_: Any) -> None:
        client.subscribe(every_table(Leaf.STATUS), qos=1)

    def _on_message(self, client: mqtt.Client, userdata: Any, message: mqtt.MQTTMessage) -> None:
        topic = TopicName.parse(message.topic)
        if topic is None:
            return
        try:
            status = StatusMessage.decode(bytes(message.payload))
        except MessageError as exc:
            log.warning("ignored a status of table %s: %s", topic.table_id, exc)
            return
        if self.changes.online.get(topic.table_id) != status.online:
            self.changes.online[topic.table_id] = status.online
            self.changes.announce({topic.table_id})


def started_listeners(
    dsn: str, broker: BrokerSettings | None, client_id: str, changes: FloorChanges
) -> Callable[[], None]:
    """Start the listeners; returns what stops them."""
    listener = NotificationListener(dsn, changes)
    listener.start()
    watcher = None if broker is None else StatusWatcher(broker, client_id, changes)
    if watcher is not None:
        watcher.start()

    def stop() -> None:
        listener.stop()
        if watcher is not None:
            watcher.stop()

    return stop
