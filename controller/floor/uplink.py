"""shoectl uplink: a table's journal published, record by record, to the floor's broker.

The uplink is its own process: it opens the journal read-only (SQLite WAL
readers never block the writer), so the table service never waits on the
network and deals on while the broker is away. Delivery is at least once:

- records go out in id order on .../events with QoS 1, up to
  messages.BATCH_RECORDS in one message (a JSON array); the broker's PUBACKs
  move the acked position, kept in the state file (state.py);
- a PUBACK is not delivery (a broker can die before ingest has the message),
  so the floor's retained anchor is kept too, and publishing starts again
  from the anchor after every (re)connect and whenever the anchor has stayed
  behind the acked position for resend_after_s. Duplicates are the only
  possible error on the wire, and the floor ignores them.

Alongside: a retained status (offline as the last will), a retained board
(the scoreboard projection of the journal) and a copy of every alarm; and the
answer to each seed the floor sends for software authentication.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from importlib.metadata import version
from itertools import islice
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.reasoncodes import ReasonCode

from cardshoe.controller.canonical import canonical_json
from cardshoe.controller.errors import UserError
from cardshoe.controller.floor.broker import KEEPALIVE_S, BrokerSettings, new_client
from cardshoe.controller.floor.messages import (
    AnchorMessage,
    AuthenticateRequest,
    AuthenticationAnswer,
    EventMessage,
    MessageError,
    StatusMessage,
    event_bodies,
)
from cardshoe.controller.floor.topics import Leaf, table_topic
from cardshoe.controller.journal.errors import JournalError
from cardshoe.controller.journal.records import Record
from cardshoe.controller.journal.signing import TableKey, load_signing_key, signing_key_path
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.journal.uplink_state import (
    Position,
    UplinkState,
    load_state,
    save_state,
    state_path,
)
from cardshoe.controller.scoreboard.board import TableBoard
from cardshoe.controller.service.software_identity import authenticate, parse_seed

log = logging.getLogger(__name__)

ALARM_KIND = "alarm"
SESSION_STARTED_KIND = "session.started"
SHOE_STARTED_KIND = "shoe.started"


@dataclass(frozen=True)
class UplinkSettings:
    journal_path: Path
    broker: BrokerSettings
    site: str
    state_dir: Path
    resend_after_s: float = 30.0
    """How long the floor's anchor may stay behind the acked position before a resend."""
    window: int = 1000
    """Records published and not yet acknowledged, at most (in messages of up to
    messages.BATCH_RECORDS records each)."""
    poll_s: float = 0.05
    """How often the journal is looked at for new records."""
    board_interval_s: float = 1.0
    status_interval_s: float = 1.0
    """The retained status is refreshed at most this often, when something in it changed."""
    report_interval_s: float = 10.0
    """How often the lag is logged while the uplink is behind."""
    save_interval_s: float = 0.2
    """Positions are written to disk at most this often (each write is an fsync)."""


@dataclass
class _Sent:
    """One events message in flight, named by the last record it holds."""

    record_id: int
    hash: str
    records: int
    acked: bool = False


class Uplink:
    """One table's journal to one broker, until stop() is called."""

    def __init__(self, settings: UplinkSettings) -> None:
        self.settings = settings
        self._stop_requested = False
        self._lock = threading.Lock()
        self._connected = False
        self._reconnected = False
        self._in_flight: deque[_Sent] = deque()
        self._records_in_flight = 0
        """The records the messages in _in_flight hold: the window counts records."""
        self._by_mid: dict[int, _Sent] = {}
        self._anchor_seen: AnchorMessage | None = None
        self._client: mqtt.Client | None = None
        self._journal: Journal | None = None
        self._key: TableKey | None = None
        self.state = UplinkState()
        self._next_id = 1
        self._head = Position()
        self._head_time_ns: int | None = None
        self._board = TableBoard()
        self._board_id = 0
        self._board_dirty = False
        self._firmware: str | None = None
        self._fingerprint: str | None = None
        self._anchor_moved_at = time.monotonic()
        self._last_status: StatusMessage | None = None
        self._due: dict[str, float] = {}
        self._alarms_from = 0
        self._state_file: Path | None = None
        self._saved: UplinkState | None = None
        self._seeds: list[str] = []
        """The floor's seeds not yet answered (software authentication)."""
        self._version = version("cardshoe")
        """Read once: the package metadata lookup takes milliseconds, and the status is
        compared every step."""

    def stop(self) -> None:
        """Ask the loop to end after its current step; safe from a signal handler."""
        self._stop_requested = True

    @property
    def table_id(self) -> str:
        assert self._journal is not None
        return self._journal.table_id

    def topic(self, leaf: Leaf) -> str:
        return table_topic(self.settings.site, self.table_id, leaf)

    # --- the loop ---------------------------------------------------------------------

    def run(self, on_step: Callable[[], None] | None = None) -> None:
        """Publish until stop(); returns after the offline status has gone out (if it can)."""
        self._journal = self._wait_for_journal()
        if self._journal is None:
            return
        self._key = load_signing_key(self.settings.journal_path)
        if self._key is None:
            log.warning(
                "no signing key at %s: records go out unsigned, which the floor takes only "
                "while table %s is not registered (make one: shoectl journal key --new)",
                signing_key_path(self.settings.journal_path),
                self.table_id,
            )
        self._state_file = state_path(self.settings.state_dir, self.table_id)
        self.state = load_state(self._state_file)
        self._alarms_from = self.state.acked.record_id
        self._next_id = self.state.anchor.record_id + 1
        client = self._client = self._connect()
        self._due["report"] = time.monotonic() + self.settings.report_interval_s
        try:
            while not self._stop_requested:
                self._step()
                if on_step is not None:
                    on_step()
                time.sleep(self.settings.poll_s)
        finally:
            self._save(force=True)
            self._go_offline(client)
            self._journal.close()

    def _wait_for_journal(self) -> Journal | None:
        """The table service creates the journal; an uplink started first waits for it.

        A file that is not (yet) a journal is waited for too: the service may
        be creating it this moment, and the uplink must not die of that race.
        """
        reported = False
        while not self._stop_requested:
            try:
                return Journal.open_readonly(self.settings.journal_path)
            except JournalError as exc:
                if not reported:
                    log.warning("uplink waits for the journal: %s", exc)
                    reported = True
                time.sleep(self.settings.poll_s * 10)
        return None

    def _connect(self) -> mqtt.Client:
        broker = self.settings.broker
        client = new_client(broker, f"uplink-{self.settings.site}-{self.table_id}")
        offline = StatusMessage(online=False, table_id=self.table_id)
        client.will_set(self.topic(Leaf.STATUS), offline.encode(), qos=1, retain=True)
        client.reconnect_delay_set(min_delay=1, max_delay=10)
        client.max_inflight_messages_set(self.settings.window)
        client.max_queued_messages_set(0)
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_publish = self._on_publish
        client.on_message = self._on_message
        client.connect_async(broker.host, broker.port, keepalive=KEEPALIVE_S)
        client.loop_start()
        return client

    def _step(self) -> None:
        assert self._client is not None and self._journal is not None
        now = time.monotonic()
        self._follow_journal()
        with self._lock:
            connected, reconnected = self._connected, self._reconnected
            self._reconnected = False
            self._take_acks()
            anchor = self._anchor_seen
            self._anchor_seen = None
        if anchor is not None:
            self._take_anchor(anchor)
        self._answer_seeds()
        if reconnected:
            self._client.subscribe(self.topic(Leaf.ANCHOR), qos=1)
            self._client.subscribe(self.topic(Leaf.AUTHENTICATE), qos=1)
            self._resend_from_anchor("connected")
            self._last_status = None
        elif self._anchor_stale(now):
            self._resend_from_anchor(
                f"the floor's anchor stayed at {self.state.anchor.record_id} for "
                f"{self.settings.resend_after_s:g} s behind {self.state.acked.record_id}"
            )
        if connected:
            self._publish_records()
            if self._every("board", self.settings.board_interval_s, now) and self._board_dirty:
                self._publish_retained(Leaf.BOARD, canonical_json(self._board.to_json()).encode())
                self._board_dirty = False
            status = self._status()
            if status != self._last_status and self._every(
                "status", self.settings.status_interval_s, now
            ):
                self._publish_retained(Leaf.STATUS, status.encode())
                self._last_status = status
        if self._every("report", self.settings.report_interval_s, now):
            self._report_lag(connected)
        self._save()

    def _every(self, what: str, interval_s: float, now: float) -> bool:
        """True at most once every interval_s for this named chore."""
        if now < self._due.get(what, 0.0):
            return False
        self._due[what] = now + interval_s
        return True

    # --- the journal side -------------------------------------------------------------

    def _follow_journal(self) -> None:
        """New records update the board, the chain head and the status fields."""
        assert self._journal is not None
        for record in self._journal.records(after_id=self._board_id):
            self._project(record)
            self._board_id = record.id
            self._head = Position(record.id, record.hash)
            self._head_time_ns = record.time_ns
            if record.kind == SESSION_STARTED_KIND:
                self._firmware = record.payload.get("device", {}).get("firmware_version")
            elif record.kind == SHOE_STARTED_KIND:
                self._fingerprint = record.payload.get("fingerprint")
            elif record.kind == ALARM_KIND and record.id > self._alarms_from:
                self._publish_alarm(record)
        if self._board.table_id is None:
            self._board.table_id = self.table_id

    def _project(self, record: Record) -> None:
        """The board follows the record; a record it cannot take never stops delivery."""
        try:
            self._board.apply(record.kind, record.payload)
        except (KeyError, TypeError, ValueError) as exc:
            log.warning(
                "the board cannot show record %d (%s: %r); the uplink goes on without it",
                record.id,
                record.kind,
                exc,
            )
        self._board_dirty = True

    def _message(self, record: Record) -> EventMessage:
        """The record as it goes out: signed with the table's key when it has one."""
        message = EventMessage.from_record(record)
        return message if self._key is None else message.signed_with(self._key)

    def _publish_alarm(self, record: Record) -> None:
        assert self._client is not None
        body = self._message(record).encode()
        self._client.publish(self.topic(Leaf.ALARMS), body, qos=1)

    def _publish_records(self) -> None:
        assert self._client is not None and self._journal is not None
        room = self.settings.window - self._records_in_flight
        if room <= 0 or self._next_id > self._head.record_id:
            return
        records = islice(self._journal.records(after_id=self._next_id - 1), room)
        for last, body in event_bodies(self._message(record) for record in records):
            info = self._client.publish(self.topic(Leaf.EVENTS), body, qos=1)
            if info.rc != mqtt.MQTT_ERR_SUCCESS:
                return  # the connection went; the next connect resends from the anchor
            sent = _Sent(last.record_id, last.hash, last.record_id - self._next_id + 1)
            with self._lock:
                self._in_flight.append(sent)
                self._by_mid[info.mid] = sent
                self._records_in_flight += sent.records
            self._next_id = last.record_id + 1

    # --- software authentication -------------------------------------------------------

    def _take_seed(self, body: bytes) -> None:
        """A floor's seed, from paho's thread: answered by the loop (hashing takes a while)."""
        try:
            request = AuthenticateRequest.decode(body)
        except MessageError as exc:
            log.warning("ignored a software authentication request: %s", exc)
            return
        with self._lock:
            self._seeds.append(request.seed)

    def _answer_seeds(self) -> None:
        """Answer each seed with the installed files' digest as they are on disk now."""
        assert self._client is not None
        with self._lock:
            seeds, self._seeds = self._seeds, []
        for seed in seeds:
            try:
                given = authenticate(parse_seed(seed))
                answer = AuthenticationAnswer(
                    self.table_id, given.seed, given.digest, given.version, given.files
                )
            except UserError as exc:
                log.warning("the floor's software authentication request: %s", exc)
                answer = AuthenticationAnswer(self.table_id, seed, None, None, error=str(exc))
            self._client.publish(self.topic(Leaf.AUTHENTICATION), answer.encode(), qos=1)

    # --- positions ----------------------------------------------------------------------

    def _take_acks(self) -> None:
        """Move the acked position over the leading run of acknowledged records."""
        acked = self.state.acked
        while self._in_flight and self._in_flight[0].acked:
            sent = self._in_flight.popleft()
            self._records_in_flight -= sent.records
            if sent.record_id > acked.record_id:
                acked = Position(sent.record_id, sent.hash)
        if acked != self.state.acked:
            self.state = replace(self.state, acked=acked)

    def _take_anchor(self, message: AnchorMessage) -> None:
        assert self._journal is not None
        if message.record_id == self.state.anchor.record_id:
            return
        own = next(iter(self._journal.records(after_id=message.record_id - 1)), None)
        if own is not None and own.id == message.record_id and own.hash != message.hash:
            log.error(
                "the floor's anchor %s does not match this journal's record %d (%s): the "
                "journal was rewritten, or the floor holds another table's records",
                message.anchor,
                own.id,
                own.hash,
            )
            return
        self.state = replace(self.state, anchor=Position(message.record_id, message.hash))
        self._anchor_moved_at = time.monotonic()

    def _anchor_stale(self, now: float) -> bool:
        if self.state.anchor.record_id >= self.state.acked.record_id:
            self._anchor_moved_at = now
            return False
        return now - self._anchor_moved_at > self.settings.resend_after_s

    def _resend_from_anchor(self, why: str) -> None:
        with self._lock:
            self._in_flight.clear()
            self._by_mid.clear()
            self._records_in_flight = 0
        first = self.state.anchor.record_id + 1
        if first <= self._head.record_id:
            log.info("uplink resends from record %d: %s", first, why)
        self._next_id = first
        self._anchor_moved_at = time.monotonic()

    def _save(self, *, force: bool = False) -> None:
        due = force or self._every("save", self.settings.save_interval_s, time.monotonic())
        if due and self._state_file is not None and self._saved != self.state:
            save_state(self._state_file, self.state)
            self._saved = self.state

    # --- status -------------------------------------------------------------------------

    def _status(self) -> StatusMessage:
        return StatusMessage(
            online=True,
            table_id=self.table_id,
            version=self._version,
            firmware=self._firmware,
            fingerprint=self._fingerprint,
            head_id=self._head.record_id,
            head_hash=self._head.hash,
            head_time_ns=self._head_time_ns,
            acked_id=self.state.acked.record_id,
            anchor_id=self.state.anchor.record_id,
        )

    def _publish_retained(self, leaf: Leaf, body: bytes) -> None:
        assert self._client is not None
        self._client.publish(self.topic(leaf), body, qos=1, retain=True)

    def _report_lag(self, connected: bool) -> None:
        lag = self._head.record_id - self.state.acked.record_id
        if connected and lag == 0:
            return
        seconds = 0.0
        if lag and self._head_time_ns is not None:
            seconds = max(0.0, time.time() - self._behind_since_ns() / 1e9)
        log.warning(
            "uplink %s: lag %d records (%.1f s), acked %d, floor anchor %d",
            "connected" if connected else "cannot reach the broker, retrying",
            lag,
            seconds,
            self.state.acked.record_id,
            self.state.anchor.record_id,
        )

    def _behind_since_ns(self) -> int:
        """The journal time of the first record the broker has not acknowledged."""
        assert self._journal is not None
        first = next(iter(self._journal.records(after_id=self.state.acked.record_id)), None)
        return time.time_ns() if first is None else first.time_ns

    def _go_offline(self, client: mqtt.Client) -> None:
        if self._connected:
            offline = StatusMessage(online=False, table_id=self.table_id)
            client.publish(self.topic(Leaf.STATUS), offline.encode(), qos=1, retain=True)
            deadline = time.monotonic() + 2.0
            while client.want_write() and time.monotonic() < deadline:
                time.sleep(0.01)
            client.disconnect()
        client.loop_stop()

    # --- paho callbacks (its network thread) ------------------------------------------

    def _on_connect(
        self, client: mqtt.Client, userdata: Any, flags: Any, reason: ReasonCode, props: Any
    ) -> None:
        if reason.is_failure:
            log.warning("the broker refused the uplink: %s", reason)
            return
        with self._lock:
            self._connected = True
            self._reconnected = True
        log.info("uplink connected to %s", self.settings.broker.url)

    def _on_disconnect(
        self, client: mqtt.Client, userdata: Any, flags: Any, reason: ReasonCode, props: Any
    ) -> None:
        with self._lock:
            self._connected = False
        if not self._stop_requested:
            log.warning("uplink lost the broker (%s); retrying", reason)

    def _on_publish(
        self, client: mqtt.Client, userdata: Any, mid: int, reason: ReasonCode, props: Any
    ) -> None:
        with self._lock:
            sent = self._by_mid.pop(mid, None)
            if sent is not None and not reason.is_failure:
                sent.acked = True

    def _on_message(self, client: mqtt.Client, userdata: Any, message: mqtt.MQTTMessage) -> None:
        if message.topic == self.topic(Leaf.AUTHENTICATE):
            self._take_seed(bytes(message.payload))
            return
        try:
            anchor = AnchorMessage.decode(bytes(message.payload))
        except MessageError as exc:
            log.warning("ignored an anchor message on %s: %s", message.topic, exc)
            return
        with self._lock:
            self._anchor_seen = anchor
