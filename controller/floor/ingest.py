"""shoectl floor ingest: every table's records from the broker into PostgreSQL, verified.

Several ingest processes may run: they share one MQTT 5 shared subscription
(the broker hands each message to one of them), so the chain is verified
in the database, not in memory. Each batch is one transaction:

1. the records are inserted with ON CONFLICT DO NOTHING: a repeat is
   ignored, a repeat with another hash is an alarm and never an overwrite;
2. each table touched is locked (its floor_tables row, in table order, so
   two ingests never deadlock) and its chain walked on from the last
   verified record: each prev_hash must be the stored hash before it;
3. the messages are acknowledged to the broker only after the commit (paho's
   manual acks), then the new anchors go out, retained, to the tables.

A record whose own fields do not hash to its hash, or whose prev_hash does
not link, is kept in floor_alarms, not in journal_records, so the right
record can still take its place, and the table is flagged. A message that is
not a record at all (not JSON, nested too deep, NaN, a lone surrogate...), or
a registered table's record without its valid signature, is kept in
rejected_messages (the hash of its bytes and the reason), alarmed and
acknowledged: one message never stops the floor.
"""

from __future__ import annotations

import gc
import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

import paho.mqtt.client as mqtt
import psycopg
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode

from cardshoe.controller.canonical import canonical_json
from cardshoe.controller.errors import UserError
from cardshoe.controller.floor.broker import KEEPALIVE_S, BrokerSettings, new_client
from cardshoe.controller.floor.inbox import Inbox
from cardshoe.controller.floor.ingest_store import (
    Alarm,
    AlarmKind,
    Outcome,
    Rejected,
    insert_alarms,
    store_batch,
)
from cardshoe.controller.floor.messages import (
    EventMessage,
    MessageError,
    StatusMessage,
    decode_events,
)
from cardshoe.controller.floor.schema import connect, hold_schema, require_current
from cardshoe.controller.floor.topics import Leaf, TopicName, every_table, shared, table_topic
from cardshoe.controller.journal.signing import public_key, signature_verifies

log = logging.getLogger(__name__)

SESSION_EXPIRY_S = 120
"""The broker keeps an ingest's subscription and unacknowledged messages this long.

Long enough for a restart to find its messages waiting; short, because while
a stopped ingest's session lasts, the broker still hands it its share of the
shared subscription. The uplinks' resend from the anchor delivers whatever
such a session took with it, through the ingests that are running."""

READ_AHEAD = 20
"""Events messages read on arrival at most, waiting in the inbox (about one batch's worth:
an uplink's message holds up to 200 records)."""


_Result = TypeVar("_Result")


class _StopWhileRetrying(Exception):
    """Stop was asked while the database was away: the batch is left to the broker."""


@dataclass(frozen=True)
class IngestSettings:
    broker: BrokerSettings
    dsn: str
    client_id: str = "cardshoe-ingest-1"
    """Stable per process, so the broker keeps its session across restarts."""
    batch_max: int = 2000
    """Messages a transaction takes at most."""
    batch_bytes: int = 2 * 1024 * 1024
    """A transaction stops taking messages once their bodies reach this many bytes (an uplink's
    message holds up to messages.BATCH_RECORDS records)."""
    batch_wait_s: float = 0.005
    """How long a transaction waits for more after its first message: short, as a record's
    time to the floor counts it, and a backlog fills the batch without waiting."""
    gap_report_s: float = 30.0
    retry_s: float = 1.0
    inbox_bytes: int = 8 * 1024 * 1024
    """Message bodies held between paho's thread and the loop at most (inbox.py): four batches'
    worth, so the next batches are in while one is stored."""


@dataclass
class _Incoming:
    topic: TopicName
    body: bytes
    mid: int
    qos: int
    connection: int
    """Which connection delivered it: a packet id means nothing on a later one."""
    records: list[tuple[EventMessage, bool]] | MessageError | None = None
    """An events message as read on arrival: each record with whether its fields hash to its
    hash, or why the message holds no records; None for a status, or for a message that
    arrived behind READ_AHEAD others (read when its batch is taken)."""


class Ingest:
    """One ingest process: broker messages in, PostgreSQL rows and anchors out."""

    def __init__(self, settings: IngestSettings) -> None:
        self.settings = settings
        self._stop_requested = False
        self._inbox: Inbox[_Incoming] = Inbox(settings.inbox_bytes)
        self._client: mqtt.Client | None = None
        self._db: psycopg.Connection | None = None
        self._connection = 0
        self.inserted = 0

    def stop(self) -> None:
        """Ask the loop to end after the batch under way; safe from a signal handler."""
        self._stop_requested = True

    def run(self) -> None:
        self._db = connect(self.settings.dsn)
        require_current(self._db)
        self._db.commit()
        # Start-up's objects (modules, classes, the libraries' tables) live as long as the
        # process: frozen, the collector's full passes no longer walk them again and again.
        # A backlog of 200,000 records spent 0.5-0.8 s in those passes, 0.1 s frozen.
        gc.freeze()
        client = self._client = self._connect()
        next_gap_check = 0.0
        try:
            while not self._stop_requested:
                batch = self._take_batch()
                if batch:
                    self._handle(batch)
                if time.monotonic() >= next_gap_check:
                    self._publish(self._with_database(self._report_gaps))
                    next_gap_check = time.monotonic() + 1.0
        except _StopWhileRetrying:
            log.warning("ingest stops with a batch not stored; the broker delivers it again")
        finally:
            self._inbox.close()  # first: paho's thread may be waiting for room, and must end
            client.disconnect()
            client.loop_stop()
            if self._db is not None:
                self._db.close()

    # --- MQTT ---------------------------------------------------------------------------

    def _connect(self) -> mqtt.Client:
        broker = self.settings.broker
        client = new_client(broker, self.settings.client_id)
        client.manual_ack_set(True)
        client.reconnect_delay_set(min_delay=1, max_delay=10)
        client.on_connect = self._on_connect
        client.on_message = self._on_message
        client.on_disconnect = self._on_disconnect
        client.on_subscribe = self._on_subscribe
        properties = Properties(PacketTypes.CONNECT)
        properties.SessionExpiryInterval = SESSION_EXPIRY_S
        client.connect_async(
            broker.host,
            broker.port,
            keepalive=KEEPALIVE_S,
            clean_start=False,
            properties=properties,
        )
        client.loop_start()
        return client

    def _on_connect(
        self, client: mqtt.Client, userdata: Any, flags: Any, reason: ReasonCode, props: Any
    ) -> None:
        if reason.is_failure:
            log.warning("the broker refused ingest: %s", reason)
            return
        self._connection += 1
        client.subscribe([(shared(every_table(Leaf.EVENTS)), 1), (every_table(Leaf.STATUS), 1)])
        log.info("ingest connected to %s", self.settings.broker.url)

    def _on_subscribe(
        self, client: mqtt.Client, userdata: Any, mid: int, reasons: list[ReasonCode], props: Any
    ) -> None:
        refused = [str(reason) for reason in reasons if reason.is_failure]
        if refused:
            log.error("the broker refused ingest's subscriptions: %s", ", ".join(refused))
        else:
            log.info("ingest subscribed to every table's events and status")

    def _on_disconnect(
        self, client: mqtt.Client, userdata: Any, flags: Any, reason: ReasonCode, props: Any
    ) -> None:
        if not self._stop_requested:
            log.warning("ingest lost the broker (%s); retrying", reason)

    def _on_message(self, client: mqtt.Client, userdata: Any, message: mqtt.MQTTMessage) -> None:
        topic = TopicName.parse(message.topic)
        if topic is None:
            client.ack(message.mid, message.qos)
            return
        body = bytes(message.payload)
        # Read and hashed here, in paho's thread, while the loop waits on PostgreSQL with the
        # batch before: the two overlap, and a record's cost is no longer their sum. Only a
        # few messages ahead: a backlog read whole would hold millions of objects, and the
        # garbage collector's passes over them stalled paho past its keepalive.
        ahead = topic.leaf == Leaf.EVENTS and len(self._inbox) < READ_AHEAD
        records = _read_events(body) if ahead else None
        incoming = _Incoming(topic, body, message.mid, message.qos, self._connection, records)
        # Waits while the inbox is full; a message dropped at a stop is never acknowledged,
        # so the broker delivers it again.
        self._inbox.put(incoming, len(body))

    def _take_batch(self) -> list[_Incoming]:
        """What has arrived, waiting batch_wait_s after the first message for more.

        The inbox is drained without waiting while it holds messages, so a
        backlog costs one lock a message, not a timed wait.
        """
        first = self._inbox.get(timeout=0.2)
        if first is None:
            return []
        batch = [first]
        size = len(first.body)
        deadline = time.monotonic() + self.settings.batch_wait_s
        while len(batch) < self.settings.batch_max and size < self.settings.batch_bytes:
            incoming = self._inbox.get_nowait()
            if incoming is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                incoming = self._inbox.get(timeout=left)
                if incoming is None:
                    break
            batch.append(incoming)
            size += len(incoming.body)
        return batch

    def _publish(self, outcome: Outcome) -> None:
        assert self._client is not None
        for (site, table_id), anchor in outcome.anchors.items():
            topic = table_topic(site, table_id, Leaf.ANCHOR)
            self._client.publish(topic, anchor.encode(), qos=1, retain=True)
        for alarm in outcome.alarms:
            log.error("floor alarm, table %s: %s: %s", alarm.table_id, alarm.kind, alarm.detail)
            if alarm.site is not None:
                body = canonical_json(
                    {"kind": alarm.kind, "detail": alarm.detail, "record_id": alarm.record_id}
                ).encode()
                topic = table_topic(alarm.site, alarm.table_id, Leaf.FLOOR_ALARMS)
                self._client.publish(topic, body, qos=1)

    # --- one batch ----------------------------------------------------------------------

    def _handle(self, batch: list[_Incoming]) -> None:
        events: list[tuple[str, EventMessage]] = []
        statuses: dict[tuple[str, str], StatusMessage] = {}
        early = Outcome()
        tables = sorted({incoming.topic.table_id for incoming in batch})
        keys = self._with_database(lambda db: _registered_keys(db, tables))
        for incoming in batch:
            site, table_id = incoming.topic.site, incoming.topic.table_id
            if incoming.topic.leaf == Leaf.STATUS:
                try:
                    statuses[(site, table_id)] = StatusMessage.decode(incoming.body)
                except MessageError as exc:
                    early.alarms.append(_refused(incoming, AlarmKind.MALFORMED, f"a status {exc}"))
                continue
            taken, alarms = _checked_events(incoming, keys.get(table_id))
            early.alarms.extend(alarms)
            events.extend((site, event) for event in taken)
        try:
            outcome = self._with_database(lambda db: store_batch(db, events, statuses, early))
        except psycopg.DataError:
            outcome = self._store_one_by_one(events, statuses, early)
        assert self._client is not None
        for incoming in batch:
            # A message of an earlier connection is not acknowledged on this one, where its
            # packet id may name another message: the broker delivers it again, a duplicate.
            if incoming.connection == self._connection:
                self._client.ack(incoming.mid, incoming.qos)
        self.inserted += outcome.inserted
        self._publish(outcome)

    def _store_one_by_one(
        self,
        events: list[tuple[str, EventMessage]],
        statuses: dict[tuple[str, str], StatusMessage],
        early: Outcome,
    ) -> Outcome:
        """A batch PostgreSQL refused (a payload jsonb cannot hold, such as a NUL character):
        each record alone, and one it refuses becomes a stored alarm, never a crash loop."""
        outcome = self._with_database(lambda db: store_batch(db, [], statuses, early))
        for site, event in events:
            try:
                alone = partial(store_batch, events=[(site, event)], statuses={}, early=Outcome())
                part = self._with_database(alone)
            except psycopg.DataError as exc:
                detail = f"record {event.record_id}: PostgreSQL cannot store it ({exc})"
                alarm = Alarm(
                    event.table_id,
                    AlarmKind.MALFORMED,
                    " ".join(detail.split()),
                    event.record_id,
                    None,
                    site,
                )
                part = self._with_database(
                    partial(store_batch, events=[], statuses={}, early=Outcome(alarms=[alarm]))
                )
            outcome.anchors.update(part.anchors)
            outcome.alarms.extend(part.alarms)
            outcome.inserted += part.inserted
        return outcome

    def _with_database(self, work: Callable[[psycopg.Connection], _Result]) -> _Result:
        """Run one transaction, retrying through a database restart until it commits; each
        first holds the schema (schema.hold_schema), so none writes into one it does not know.

        A stop requested meanwhile ends the retries: nothing of the batch was
        acknowledged, so the broker hands it to ingest again. The first attempt
        goes ahead even when a stop is asked: the loop ends after it, and a
        batch stored and acknowledged is one the broker need not hand out again.
        """
        retrying = False
        while True:
            if retrying and self._stop_requested:
                raise _StopWhileRetrying
            retrying = True
            if self._db is None or self._db.closed:
                try:
                    self._db = connect(self.settings.dsn)
                except UserError as exc:
                    log.warning("floor database unreachable (%s); retrying", exc)
                    time.sleep(self.settings.retry_s)
                    continue
            try:
                with self._db.transaction():
                    hold_schema(self._db)
                    return work(self._db)
            except psycopg.OperationalError as exc:
                log.warning("floor database failed (%s); retrying the batch", exc)
                self._db.close()
                time.sleep(self.settings.retry_s)

    def _report_gaps(self, db: psycopg.Connection) -> Outcome:
        outcome = Outcome()
        rows = db.execute(
            "UPDATE floor_tables SET gap_reported = true "
            "WHERE gap_since < now() - make_interval(secs => %s) AND NOT gap_reported "
            "RETURNING table_id, site, contiguous_id",
            (self.settings.gap_report_s,),
        ).fetchall()
        for table_id, site, contiguous_id in rows:
            alarm = Alarm(
                table_id,
                AlarmKind.GAP,
                f"records after {contiguous_id} have been missing for over "
                f"{self.settings.gap_report_s:g} s",
                contiguous_id + 1,
                site=site,
            )
            insert_alarms(db, [alarm])
            outcome.alarms.append(alarm)
        return outcome


def _registered_keys(db: psycopg.Connection, tables: list[str]) -> dict[str, Ed25519PublicKey]:
    """The public keys of the tables registered with shoectl floor register-table."""
    rows = db.execute(
        "SELECT table_id, public_key FROM table_keys WHERE table_id = ANY(%s)", (tables,)
    ).fetchall()
    return {table_id: public_key(key) for table_id, key in rows}


def _checked_events(
    incoming: _Incoming, key: Ed25519PublicKey | None
) -> tuple[list[EventMessage], list[Alarm]]:
    """The records the message carries, and the alarms (and quarantine) of those it refuses.

    A message that is not records at all is refused whole. Each record is
    then checked alone: one of another table, one whose fields do not hash to
    its hash and, for a registered table, one without the table's signature of
    its hash are refused, the others go on (an unregistered table's record is
    taken on its chain alone, as before signing keys: docs/floor.md).
    """
    records = incoming.records if incoming.records is not None else _read_events(incoming.body)
    if isinstance(records, MessageError):
        detail = f"an events message {records}"
        return [], [_refused(incoming, AlarmKind.MALFORMED, detail, records.record_id)]
    taken, alarms = [], []
    for event, hash_ok in records:
        alarm = _refusal(incoming, event, hash_ok, key)
        if alarm is None:
            taken.append(event)
        else:
            alarms.append(alarm)
    return taken, alarms


def _read_events(body: bytes) -> list[tuple[EventMessage, bool]] | MessageError:
    """The records of an events message, each with whether its fields hash to its hash."""
    try:
        events = decode_events(body)
    except MessageError as exc:
        return exc
    return [(event, event.hash_matches()) for event in events]


def _refusal(
    incoming: _Incoming, event: EventMessage, hash_ok: bool, key: Ed25519PublicKey | None
) -> Alarm | None:
    """The alarm refusing one record of an events message, or None when it is taken."""
    if event.table_id != incoming.topic.table_id:
        detail = f"record {event.record_id} of table {event.table_id} on this table's topic"
        return _refused(incoming, AlarmKind.WRONG_TABLE, detail, event.record_id)
    if key is not None and (
        event.signature is None or not signature_verifies(key, event.hash, event.signature)
    ):
        wrong = "is unsigned" if event.signature is None else "has a signature that fails"
        detail = f"record {event.record_id} {wrong}: not the registered table's, kept out"
        return _refused(incoming, AlarmKind.BAD_SIGNATURE, detail, event.record_id, event.to_json())
    if not hash_ok:
        detail = f"record {event.record_id}'s fields do not hash to the hash it carries"
        return _refused(incoming, AlarmKind.HASH_MISMATCH, detail, event.record_id, event.to_json())
    return None


def _refused(
    incoming: _Incoming,
    kind: str,
    detail: str,
    record_id: int | None = None,
    message: dict[str, Any] | None = None,
) -> Alarm:
    """The alarm for a message refused whole, with the quarantine row that keeps its trace."""
    topic = incoming.topic
    rejected = Rejected(
        topic.site,
        topic.table_id,
        str(topic.leaf),
        hashlib.sha256(incoming.body).hexdigest(),
        len(incoming.body),
        f"{kind}: {detail}",
    )
    return Alarm(topic.table_id, kind, detail, record_id, message, topic.site, rejected)
