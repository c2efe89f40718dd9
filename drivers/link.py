"""The host side of the shoe link: one session per device, across unplugs.

A Link owns a transport and a reader thread that decodes every frame as it
arrives, so device events are buffered while the caller is busy and never
reordered. The reader thread (link_reader.py) and the handshake
(link_handshake.py) are mixins of Link, each one job on the Link's state;
this module holds that state, the commands, the writes and the supervisor.
It applies the host rules of docs/protocol.md:

- events: link_sequencing.py decides, as pure functions of the stream
  position, what each event and HELLO means (duplicate: acknowledge again
  and drop; retransmission: drop; next: queue for the controller; a jump:
  a SequenceGap event, the later event held back); this module only keeps
  the position under its lock and does what the decision says;
- commands: one outstanding at a time, resent with the same request id
  after COMMAND_REPLY_TIMEOUT_S, at most COMMAND_ATTEMPTS sends;
- supervision: GET_STATUS after HOST_POLL_INTERVAL_S of silence, link
  down after LINK_DOWN_AFTER_S without a valid frame or at once on an
  unplug; then reconnection with backoff, a new GET_INFO handshake that
  checks the device is the same one, and the device's replay of its
  unacknowledged events through the same rules.

Acknowledgement is the controller's explicit step (ack), after its journal
commit. Bad frames and undecodable payloads are counted and logged, never
raised; an undecodable payload is also reported once as ProtocolViolation.

With a key store (keys), a device that reports AUTH_REQUIRED is authenticated
after GET_INFO (protocol 1.1): AUTH_CHALLENGE with a fresh nonce, and its
sealed AUTH_RESPONSE must open under the session key the pairing key gives;
a device that answers in a protocol minor below the one pinned with its key
at pairing is refused before the challenge (ProtocolDowngrade), since the
version travels in clear. Its HELLO is taken only then. From then on every
frame is sealed both ways; one that fails to open, or comes unsealed, is
dropped before it is decoded, counted and reported as AuthFailure. Without
a key store the link is exactly protocol 1.0.
"""

from __future__ import annotations

import logging
import math
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields

from cardshoe.drivers import link_sequencing as sequencing
from cardshoe.drivers.api.events import AuthFailure, LinkLost, ProtocolViolation, SequenceGap
from cardshoe.drivers.errors import (
    AuthenticationFailed,
    DeviceGone,
    DriverError,
    LinkProtocolError,
)
from cardshoe.drivers.link_commands import PendingCommand, exchange, next_request_id
from cardshoe.drivers.link_events import DeviceEvent
from cardshoe.drivers.link_reader import LinkReader
from cardshoe.drivers.link_stream import EventStream, LinkCounters
from cardshoe.drivers.link_supervision import Backoff, LinkState, Observed, Watch, watch
from cardshoe.drivers.protocol.auth import (
    KeyLookup,
    LinkAuth,
    LinkKey,
)
from cardshoe.drivers.protocol.framing import FrameDecoder, encode_frame
from cardshoe.drivers.protocol.link_constants import (
    COMMAND_ATTEMPTS,
    COMMAND_REPLY_TIMEOUT_S,
    HOST_POLL_INTERVAL_S,
    LINK_DOWN_AFTER_S,
    PROTOCOL_MINOR,
)
from cardshoe.drivers.protocol.message_codec import encode_message
from cardshoe.drivers.protocol.messages import (
    Ack,
    Answer,
    AuthChallenge,
    Command,
    Event,
    GetInfo,
    GetStatus,
    Hello,
)
from cardshoe.drivers.transports.base import Transport

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LinkTiming:
    """The host's timers; the defaults are the protocol's (link_constants.py)."""

    reply_timeout_s: float = COMMAND_REPLY_TIMEOUT_S
    attempts: int = COMMAND_ATTEMPTS
    poll_interval_s: float = HOST_POLL_INTERVAL_S
    link_down_after_s: float = LINK_DOWN_AFTER_S
    backoff_initial_s: float = 0.1
    backoff_max_s: float = 2.0
    supervise_tick_s: float = 0.05


class Link(LinkReader):
    """One device's session: transport, reader thread, supervisor thread, event queue."""

    def __init__(
        self,
        connect: Callable[[], Transport],
        *,
        url: str,
        timing: LinkTiming,
        reconnect: bool,
        keys: KeyLookup | None = None,
    ) -> None:
        self.url = url
        self.counters = LinkCounters()
        self._stream = EventStream(url, self.counters)
        self._connect_transport = connect
        self._timing = timing
        self._reconnect = reconnect
        self._decoder = FrameDecoder()
        self._cond = threading.Condition()
        self._command_lock = threading.RLock()
        """One exchange at a time, and a whole handshake (GET_INFO, then AUTH_CHALLENGE)
        as one: a second handshake begun between the two would replace the challenge
        the device is answering, leaving it and this host in different sessions."""
        self._write_lock = threading.RLock()
        self._closing = threading.Event()
        self._state = LinkState.CONNECTING
        self._gone_reason = "never connected"
        self._transport: Transport | None = None
        self._reader: threading.Thread | None = None
        self._reader_stop = threading.Event()
        self._reader_error: str | None = None
        self._supervisor: threading.Thread | None = None
        self._pending: PendingCommand | None = None
        self._request_id = secrets.randbelow(0xFFFF)
        self._hello: Hello | None = None
        self._lost = False
        self._rehandshake_wanted = False
        self._reported_failures: set[str] = set()
        """Reasons a reconnect failed for in this outage: each is told once, not per attempt."""
        self._last_bad_payload: bytes | None = None
        self._last_rx = self._last_tx = time.monotonic()
        self._keys = keys
        self._key: LinkKey | None = None
        """This device's link key, looked up once, at the first handshake."""
        self._key_looked_up = False
        self._auth: LinkAuth | None = None
        """The authenticated session; sealing happens under the write lock."""
        self._challenge: tuple[bytes, Hello, bytes] | None = None
        """Our nonce, the HELLO it vouches for and the key, until AUTH_RESPONSE proves it."""
        self._last_rejected: bytes | None = None

    # --- session lifecycle -------------------------------------------------

    def open(self, handshake_timeout: float) -> Hello:
        """Connect and handshake, or raise; then supervise the link until close()."""
        try:
            attempts = max(1, math.ceil(handshake_timeout / self._timing.reply_timeout_s))
            hello = self._connect(attempts)
        except DriverError as exc:
            with self._cond:
                self._state = LinkState.GONE
                self._gone_reason = str(exc)
            raise
        self._supervisor = threading.Thread(
            target=self._supervise, name=f"cardshoe-link-supervisor {self.url}", daemon=True
        )
        self._supervisor.start()
        return hello

    def close(self) -> None:
        """Stop both threads and release the transport; waiting callers get DeviceGone."""
        self._closing.set()
        supervisor = self._supervisor
        if supervisor is not None and supervisor is not threading.current_thread():
            supervisor.join()
        with self._cond:
            if self._state is not LinkState.GONE:
                self._state = LinkState.GONE
                self._gone_reason = f"{self.url} was closed"
            pending = self._pending
            self._cond.notify_all()
        if pending is not None:
            pending.fail(DeviceGone(self._gone_reason))
        self._drop_transport()

    @property
    def state(self) -> LinkState:
        return self._state

    @property
    def hello(self) -> Hello:
        """The device's latest HELLO (identity, capabilities, stream position)."""
        if self._hello is None:
            raise DeviceGone(f"{self.url} has not completed a handshake")
        return self._hello

    @property
    def protocol_minor(self) -> int:
        return min(PROTOCOL_MINOR, self.hello.protocol_minor)

    @property
    def authenticated(self) -> bool:
        """Whether the device proved it holds its pairing key in this session."""
        return self._auth is not None

    def counter_values(self) -> dict[str, int]:
        """Stream position, frame and link counters together, for `shoectl info` and monitoring."""
        with self._cond:
            position = {
                "last_acked_seq": self._stream.position.device_acked,
                "next_seq": self._stream.position.device_next_seq,
                "delivered_seq": self._stream.position.queued_upto,
            }
        frames = self._decoder.counters
        values = {item.name: getattr(frames, item.name) for item in fields(frames)}
        return position | values | asdict(self.counters)

    # --- events --------------------------------------------------------------

    def next_event(self, timeout: float | None) -> DeviceEvent | None:
        """The next event in order, or None after timeout; DeviceGone once nothing can come."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while not self._stream.queue:
                if self._state is LinkState.GONE:
                    raise DeviceGone(self._gone_reason)
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return None
                self._cond.wait(remaining)
            return self._stream.queue.popleft()

    def event_mark(self) -> int:
        """A point in the accepted-event history; wait_for_event looks only after it."""
        with self._cond:
            return self._stream.accepted

    def wait_for_event(
        self, wanted: Callable[[Event], bool], *, after: int, timeout: float
    ) -> Event | None:
        """The first accepted device event after `after` that `wanted` picks, left in the queue.

        Lets a command that reports its outcome as an event (SELF_TEST) return
        that outcome, while the controller still receives, journals and
        acknowledges the event like any other.
        """
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for index, event in self._stream.recent:
                    if index > after and wanted(event):
                        return event
                if self._state is LinkState.GONE:
                    raise DeviceGone(self._gone_reason)
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self._cond.wait(remaining)

    def ack(self, seq: int) -> None:
        """Acknowledge every event up to seq: call only after the journal commit."""
        with self._cond:
            position = sequencing.acknowledged(self._stream.position, seq)
            if position is None:
                return
            self._stream.position = position
        self._send_ack(seq)

    @property
    def stream_epoch(self) -> int | None:
        """The epoch (protocol 1.2) the acknowledged seqs count in; None when none is known."""
        return self._stream.epoch

    def set_journaled_seq(self, seq: int | None, epoch: int | None = None) -> None:
        """Declare the highest seq the controller has durably recorded for this device.

        None trusts the device's own last acknowledged seq. epoch: the stream
        epoch the journal's seqs count in, when it knows one. Queued events at or
        below seq are dropped as duplicates and acknowledged; the device's
        stream position is checked against seq (gap, regression).
        """
        with self._cond:
            self._stream.position = sequencing.journaled(self._stream.position, seq)
            if epoch is not None:
                self._stream.epoch = epoch
            self._stream.reported_gap = None
            held = list(self._stream.queue)
            self._stream.queue.clear()
            self._check_position()
            for item in held:
                if isinstance(item, Event):
                    self._stream.classify(item)
                elif not _regenerated(item):
                    self._stream.queue.append(item)
            resend = sequencing.ack_to_repeat(self._stream.position)
            self._cond.notify_all()
        if resend is not None:
            self._send_ack(resend)

    def resync(self, after: int) -> None:
        """Take the device's stream as it now is, resuming after seq `after`: the end of a
        regression, which the controller journals as an explicit step first.

        The device's epoch becomes the stream epoch; events it holds above `after`
        are then taken as new.
        """
        with self._cond:
            self._stream.position = sequencing.resynchronised(self._stream.position, after)
            self._stream.epoch = None if self._hello is None else self._hello.epoch
            self._stream.reported_regression = None
            self._stream.reported_gap = None
            self._cond.notify_all()

    # --- commands ------------------------------------------------------------

    def command(self, build: Callable[[int], Command]) -> Answer:
        """Send the command build(request_id) and return the device's answer.

        Raises DeviceTimeout after every retry, DeviceGone when the link is
        down (then the device may or may not have acted on it).
        """
        with self._cond:
            if self._state is not LinkState.UP:
                raise DeviceGone(self._down_message())
        return self._exchange(build, self._timing.attempts)

    def handshake(self) -> Hello:
        """GET_INFO again, for example after the device restarted (RESET)."""
        return self._handshake(self._timing.attempts)

    # --- internals: writing and commands ---------------------------------------

    def _write(self, data: bytes) -> None:
        with self._write_lock:
            transport = self._transport
            if transport is None:
                raise DeviceGone(self._down_message())
            try:
                transport.write(data)
            except DeviceGone as exc:
                self._mark_failed(str(exc))
                raise
            self._last_tx = time.monotonic()

    def _send(self, message: Command | Ack) -> None:
        """Frame and write one message, sealed in an authenticated session.

        GET_INFO and AUTH_CHALLENGE start a session and so are never sealed.
        Sealing under the write lock puts the counters on the wire in order.
        """
        with self._write_lock:
            payload = encode_message(message)
            if self._auth is not None and not isinstance(message, GetInfo | AuthChallenge):
                payload = self._auth.seal(payload)
            self._write(encode_frame(payload))

    def _send_ack(self, seq: int) -> None:
        """Best effort: if the link is down, the next handshake acknowledges again."""
        try:
            self._send(Ack(seq))
        except DeviceGone:
            log.info("%s: ACK %d not sent, the link is down", self.url, seq)
            return
        with self._cond:
            self._stream.position = sequencing.ack_sent(self._stream.position, seq)

    def _exchange(self, build: Callable[[int], Command], attempts: int) -> Answer:
        with self._command_lock:
            return self._exchange_locked(build, attempts)

    def _exchange_locked(self, build: Callable[[int], Command], attempts: int) -> Answer:
        self._request_id = next_request_id(self._request_id)
        command = build(self._request_id)
        pending = PendingCommand(command)
        with self._cond:
            if self._reader_error is not None:
                raise DeviceGone(self._down_message())
            self._pending = pending

        def resending() -> None:
            self.counters.command_retries += 1
            log.info("%s: no answer to %s, sending it again", self.url, type(command).__name__)

        try:
            return exchange(
                pending,
                self._send,
                attempts=attempts,
                reply_timeout_s=self._timing.reply_timeout_s,
                resending=resending,
                url=self.url,
            )
        finally:
            with self._cond:
                if self._pending is pending:
                    self._pending = None

    def _down_message(self) -> str:
        if self._state is LinkState.GONE:
            return self._gone_reason
        return f"the link to {self.url} is down; reconnecting"

    # --- internals: the supervisor thread ---------------------------------------

    def _supervise(self) -> None:
        backoff = Backoff(self._timing.backoff_initial_s, self._timing.backoff_max_s)
        while not self._closing.wait(self._timing.supervise_tick_s):
            state = self._state
            if state is LinkState.UP:
                self._watch()
                backoff = backoff.reset()
            elif state is LinkState.DOWN and backoff.due(time.monotonic()):
                if not self._try_reconnect():
                    backoff = backoff.failed(time.monotonic())
            elif state is LinkState.GONE:
                return

    def _watch(self) -> None:
        now = time.monotonic()
        with self._cond:
            observed = Observed(
                reader_error=self._reader_error,
                silent_for_s=now - self._last_rx,
                idle_for_s=now - min(self._last_rx, self._last_tx),
                rehandshake_wanted=self._rehandshake_wanted or self._stream.hello_wanted,
            )
            self._rehandshake_wanted = self._stream.hello_wanted = False
        action, reason = watch(
            observed,
            link_down_after_s=self._timing.link_down_after_s,
            poll_interval_s=self._timing.poll_interval_s,
        )
        if action is Watch.LOSE:
            self._lose(reason)
        elif action is Watch.REHANDSHAKE:
            self._try(self.handshake)
        elif action is Watch.KEEPALIVE:
            self._keepalive()

    def _keepalive(self) -> None:
        if not self._command_lock.acquire(blocking=False):
            return
        try:
            self._try(lambda: self._exchange_locked(GetStatus, 1))
        finally:
            self._command_lock.release()

    def _try(self, action: Callable[[], object]) -> None:
        """Run a supervisory exchange; its failure shows up as silence or a reader error."""
        try:
            action()
        except DriverError as exc:
            log.info("%s: %s", self.url, exc)

    def _lose(self, reason: str) -> None:
        with self._cond:
            if self._state is not LinkState.UP:
                return
            if self._reconnect:
                self._state = LinkState.DOWN
            else:
                self._state = LinkState.GONE
                self._gone_reason = f"the link to {self.url} went down: {reason}"
            self._lost = True
            self._stream.queue.append(LinkLost(reason))
            pending = self._pending
            self._cond.notify_all()
        log.warning("%s: link lost: %s", self.url, reason)
        if pending is not None:
            pending.fail(DeviceGone(f"the link to {self.url} went down: {reason}"))
        self._drop_transport()

    def _try_reconnect(self) -> bool:
        try:
            self._connect(self._timing.attempts)
        except DriverError as exc:
            self._report_connect_failure(exc)
            return False
        log.warning("%s: link restored", self.url)
        return True

    def _report_connect_failure(self, exc: DriverError) -> None:
        reason = str(exc)
        with self._cond:
            if reason in self._reported_failures:
                return
            self._reported_failures.add(reason)
            if isinstance(exc, AuthenticationFailed):
                self._stream.queue.append(AuthFailure(reason))
            elif isinstance(exc, LinkProtocolError):
                self._stream.queue.append(ProtocolViolation(reason))
            self._cond.notify_all()
        log.warning("%s: reconnect failed: %s", self.url, reason)

    def _drop_transport(self) -> None:
        self._reader_stop.set()
        reader = self._reader
        if reader is not None and reader is not threading.current_thread():
            reader.join()
        with self._write_lock:
            transport, self._transport = self._transport, None
        if transport is not None:
            transport.close()


def _regenerated(item: DeviceEvent) -> bool:
    """Driver events that re-checking the queue recreates, so the old copy is dropped."""
    return isinstance(item, SequenceGap) or (
        isinstance(item, ProtocolViolation) and item.seq is not None
    )
