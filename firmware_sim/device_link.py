"""The device side of the shoe link: framing, event delivery and command answers.

This is the part of a device's firmware that docs/protocol.md specifies:
- events get consecutive sequence numbers and wait in a queue until the host
  acknowledges them; exactly one is in flight, resent every 200 ms;
- a cumulative ACK deletes everything up to its seq;
- the answer to the last command is kept, so a command repeated with the
  same request id is answered again without being executed twice;
- until a host sends GET_INFO (and again after 3 s without a valid frame)
  the device sends an unsolicited HELLO every second and no events;
- a paired device (one holding a pairing key, protocol 1.1) answers only
  GET_INFO, AUTH_CHALLENGE and PAIR until the host has authenticated; then
  it seals every frame but HELLO and opens every frame it receives, and
  drops (and counts) whatever fails to open. PAIR is accepted only while
  the technician has the device in pairing mode.

It knows nothing about cards: the device model behind `execute` does. It
does no I/O: bytes come in through feed(), go out through take_output(),
and time comes from the clock it is given.
"""

from __future__ import annotations

import hashlib
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from cardshoe.drivers.protocol.auth import AuthError, Direction, LinkAuth, is_sealed, new_nonce
from cardshoe.drivers.protocol.error_codes import ErrorCode
from cardshoe.drivers.protocol.errors import MessageError
from cardshoe.drivers.protocol.framing import DELIMITER, FrameDecoder, encode_frame
from cardshoe.drivers.protocol.link_constants import (
    APPENDED_IN_1_2,
    EVENT_QUEUE_MIN_CAPACITY,
    EVENT_RETRANSMIT_INTERVAL_S,
    HELLO_INTERVAL_S,
    LINK_DOWN_AFTER_S,
)
from cardshoe.drivers.protocol.message_codec import decode_message, encode_message, hello_digest
from cardshoe.drivers.protocol.messages import (
    Ack,
    Answer,
    AuthChallenge,
    AuthResponse,
    Command,
    Event,
    GetInfo,
    GetStatus,
    Hello,
    Message,
    Pair,
    Reply,
)

log = logging.getLogger(__name__)

Clock = Callable[[], float]

OPEN_TO_ALL = (GetInfo, AuthChallenge, Pair)
"""What a paired device serves without a session: starting one, and pairing (guarded by
the pairing-mode switch, not by the link)."""


@dataclass
class WireFaults:
    """Damage to inject into the sending of particular events, by event seq.

    Each entry applies once, to the first transmission of that event, so
    the protocol's retransmission is what recovers from it.
    """

    drop: set[int] = field(default_factory=set)
    corrupt: set[int] = field(default_factory=set)
    duplicate: set[int] = field(default_factory=set)
    ack_delay_s: dict[int, float] = field(default_factory=dict)
    """Hold back an ACK covering this seq for this long before acting on it."""
    altered_hello: dict[str, Any] = field(default_factory=dict)
    """A man in the middle: these HELLO fields are changed on the wire (not in what the
    device itself vouches for)."""
    stale_auth_responses: int = 0
    """Answer this many AUTH_CHALLENGEs as a replayed AUTH_RESPONSE would: sealed in an
    earlier session, so the host cannot open it."""


class DeviceLink:
    """One device's protocol engine; `execute` runs every command except GET_INFO and ACK."""

    def __init__(
        self,
        *,
        execute: Callable[[Command], Answer],
        hello: Callable[[int], Hello],
        clock: Clock,
        on_output: Callable[[], None] = lambda: None,
        queue_capacity: int = EVENT_QUEUE_MIN_CAPACITY,
        first_seq: int = 1,
        epoch: int = 1,
    ) -> None:
        self._execute = execute
        self._hello = hello
        self._clock = clock
        self._on_output = on_output
        self.queue_capacity = queue_capacity
        self.wire_faults = WireFaults()
        self.decoder = FrameDecoder()
        # Non-volatile: survives power cycles, resets and re-plugs.
        self.pending: deque[Event] = deque()
        self.next_seq = first_seq
        self.last_acked_seq = first_seq - 1
        self.epoch = epoch
        """Protocol 1.2: which life of the counter this is; new only when the counter restarts."""
        self.pairing_key: bytes | None = None
        self.house_public_key: bytes | None = None
        """Protocol 1.3: the house's Ed25519 public key, given with PAIR: the device checks
        every firmware image with it."""
        # The technician's pairing switch: PAIR is accepted only while it is on.
        self.pairing_mode = False
        # Volatile: lost at every power-up.
        self.connected = False
        self.host_minor = 0
        """The minor version the host's GET_INFO stated: appended fields go only to a host
        whose minor defines them."""
        self.auth: LinkAuth | None = None
        """The authenticated session, once AUTH_CHALLENGE has been answered."""
        self._sent_hello: Hello | None = None
        """The HELLO that answered the latest GET_INFO: AUTH_RESPONSE vouches for it."""
        self.auth_failures = 0
        """Frames dropped because they did not open: forged, replayed, from an old session."""
        self._output = bytearray()
        self._sent_at: float | None = None
        self._hello_due = 0.0
        self._last_valid_frame = 0.0
        self._answered: tuple[int, Answer] | None = None
        self._held_acks: list[tuple[float, int]] = []
        self._powered_at = clock()

    # --- power and link state -------------------------------------------------------

    def power_up(self) -> None:
        """Start (or restart) the firmware: RAM state is gone, the queue and counter stay."""
        self.connected = False
        self.auth = None
        self.decoder.reset()
        self._sent_at = None
        self._answered = None
        self._held_acks.clear()
        self._powered_at = self._hello_due = self._clock()
        self.link_opened()

    def wipe_memory(self) -> None:
        """The non-volatile memory is lost (a repair, a wipe): queue, counter and epoch start
        afresh, under the same serial number. Only the pairing key, in its own store, stays."""
        self.pending.clear()
        self.next_seq = 1
        self.last_acked_seq = 0
        self.epoch = self.epoch % 0xFFFFFFFF + 1
        self._sent_at = None

    def announced_epoch(self) -> int | None:
        """The epoch as HELLO carries it: only to a host that speaks protocol 1.2 or later."""
        return self.epoch if self.host_minor >= APPENDED_IN_1_2 else None

    def link_opened(self) -> None:
        """A fresh byte stream: a 0x00 ends whatever partial frame the other side holds."""
        self.decoder.reset()
        self._emit(DELIMITER)

    # --- events ---------------------------------------------------------------------

    def queue_event(self, cls: Callable[..., Event], **fields: Any) -> Event:
        """Number and timestamp a new event and keep it until acknowledged."""
        event = cls(seq=self.next_seq, device_time_ms=self.device_time_ms(), **fields)
        self.next_seq += 1
        self.pending.append(event)
        self._send_next_event()
        return event

    @property
    def backlogged(self) -> bool:
        """Only one queue slot left: the device must stop dealing (protocol: Queue)."""
        return len(self.pending) >= self.queue_capacity - 1

    def device_time_ms(self) -> int:
        """Milliseconds since the firmware last started, as the protocol defines it."""
        return int((self._clock() - self._powered_at) * 1000)

    # --- bytes in and out -----------------------------------------------------------

    def feed(self, data: bytes) -> None:
        for payload in self.decoder.feed(data):
            self._last_valid_frame = self._clock()
            self._receive(payload)

    def take_output(self) -> bytes:
        out = bytes(self._output)
        self._output.clear()
        return out

    def tick(self) -> None:
        """Run the timers: held ACKs, link supervision, HELLO cadence, retransmission."""
        now = self._clock()
        for due, acked_seq in [held for held in self._held_acks if held[0] <= now]:
            self._held_acks.remove((due, acked_seq))
            self._apply_ack(acked_seq)
        if self.connected and now - self._last_valid_frame >= LINK_DOWN_AFTER_S:
            log.info("device link: no valid frame for %.1f s, back to HELLO", LINK_DOWN_AFTER_S)
            self.connected = False
            self.auth = None
            self._hello_due = now
        if not self.connected and now >= self._hello_due:
            self._hello_due = now + HELLO_INTERVAL_S
            self._send(self._hello(0))
        if (
            self._sent_at is not None
            and now - self._sent_at >= EVENT_RETRANSMIT_INTERVAL_S
            and self._delivering
        ):
            self._sent_at = None
            self._send_next_event()

    # --- internals ------------------------------------------------------------------

    @property
    def _delivering(self) -> bool:
        """Events flow once a host has connected, and on a paired device has authenticated."""
        return self.connected and (self.pairing_key is None or self.auth is not None)

    def _receive(self, payload: bytes) -> None:
        opened = self._open(payload)
        if opened is None:
            return
        try:
            message = decode_message(opened)
        except MessageError as exc:
            log.warning("device link: refusing a payload: %s", exc)
            self._send(Reply(self._refusal_tag(exc), exc.error_code))
            return
        if (
            self.pairing_key is not None
            and not is_sealed(payload)
            and not isinstance(message, OPEN_TO_ALL)
        ):
            self._refuse_unsealed(message)
        elif isinstance(message, Ack):
            self._receive_ack(message.acked_seq)
        elif isinstance(message, GetInfo):
            self._connect(message)
        elif isinstance(message, AuthChallenge):
            self._answer_once(message, lambda: self._authenticate(message))
            if self.auth is not None:
                self._sent_at = None
                self._send_next_event()
        elif isinstance(message, Pair):
            self._answer_once(message, lambda: self._pair(message))
        elif isinstance(message, GetStatus):
            self._send(self._execute(message))
        elif isinstance(message, Command):
            self._answer_once(message, lambda: self._execute(message))
        else:
            log.warning("device link: %s is not a host message; ignored", type(message).__name__)

    def _open(self, payload: bytes) -> bytes | None:
        """The payload to decode (opened, if it came sealed), or None when it is dropped.

        An unpaired device passes a sealed payload on, and the codec refuses it
        as UNSUPPORTED, exactly as in protocol 1.0.
        """
        if self.pairing_key is None or not is_sealed(payload):
            return payload
        if self.auth is None:
            self._drop("a sealed frame outside an authenticated session")
            return None
        try:
            return self.auth.open(payload)
        except AuthError as exc:
            self._drop(str(exc))
            return None

    def _drop(self, reason: str) -> None:
        self.auth_failures += 1
        log.warning("device link: dropped a frame that failed authentication: %s", reason)

    def _refuse_unsealed(self, message: Message) -> None:
        """Nobody without the key may make a paired device deal, or drop an event by ACK."""
        if isinstance(message, Command):
            self._send(Reply(message.request_id, ErrorCode.AUTH_REQUIRED))
        else:
            log.warning("device link: ignored an unsealed %s", type(message).__name__)

    def _authenticate(self, challenge: AuthChallenge) -> Answer:
        """Start a session: a fresh nonce and the session key; the answer goes out sealed.

        A repeated challenge (same request id, its answer lost) gets the same
        answer in the same session, sealed anew, as any repeated command.
        """
        if self.pairing_key is None:
            return Reply(challenge.request_id, ErrorCode.UNSUPPORTED)
        identity = self._hello(challenge.request_id)
        device_nonce = new_nonce()
        host_nonce = challenge.host_nonce
        if self.wire_faults.stale_auth_responses > 0:
            self.wire_faults.stale_auth_responses -= 1
            log.info("device link: injected fault: a replayed AUTH_RESPONSE from an old session")
            host_nonce = new_nonce()
        self.auth = LinkAuth.start(
            self.pairing_key,
            host_nonce,
            device_nonce,
            identity.serial_number,
            sends=Direction.DEVICE_TO_HOST,
        )
        self.connected = True
        sent = self._sent_hello
        digest = None
        if sent is not None and self.host_minor >= APPENDED_IN_1_2:
            digest = hello_digest(sent)
        return AuthResponse(challenge.request_id, device_nonce, identity.firmware_hash, digest)

    def _pair(self, command: Pair) -> Answer:
        """Take the new key in pairing mode, then leave it: one key per turn of the switch."""
        if not self.pairing_mode:
            return Reply(command.request_id, ErrorCode.NOT_PAIRING)
        self.pairing_key = command.pairing_key
        if command.house_public_key is not None:
            self.house_public_key = command.house_public_key
        self.pairing_mode = False
        log.info("device link: paired with a new key; pairing mode is off")
        return Reply(command.request_id, ErrorCode.OK)

    @staticmethod
    def _refusal_tag(exc: MessageError) -> int:
        """Echo the request id when the header was readable and the tag can be one."""
        return exc.tag if exc.tag is not None and exc.tag <= 0xFFFF else 0

    def _connect(self, message: GetInfo) -> None:
        """GET_INFO opens a session: answer HELLO and restart delivery at once.

        It is always executed afresh, and it forgets the stored answer, so a
        host that restarted its request ids at 1 is never sent a stale one.
        """
        self._answered = None
        self.connected = True
        self.auth = None
        self.host_minor = message.protocol_minor
        self._sent_hello = self._hello(message.request_id)
        self._send(self._sent_hello)
        self._sent_at = None
        self._send_next_event()

    def _answer_once(self, command: Command, execute: Callable[[], Answer]) -> None:
        if self._answered is not None and self._answered[0] == command.request_id:
            log.info("device link: request %d repeated; resending its answer", command.request_id)
            self._send(self._answered[1])
            return
        answer = execute()
        self._answered = (command.request_id, answer)
        self._send(answer)

    def _receive_ack(self, acked_seq: int) -> None:
        delay = max(
            (s for seq, s in self.wire_faults.ack_delay_s.items() if seq <= acked_seq),
            default=None,
        )
        if delay is None:
            self._apply_ack(acked_seq)
            return
        for seq in [seq for seq in self.wire_faults.ack_delay_s if seq <= acked_seq]:
            del self.wire_faults.ack_delay_s[seq]
        self._held_acks.append((self._clock() + delay, acked_seq))

    def _apply_ack(self, acked_seq: int) -> None:
        if acked_seq < self.last_acked_seq:
            log.debug("device link: stale ACK %d ignored", acked_seq)
            return
        if acked_seq >= self.next_seq:
            log.warning(
                "device link: ACK %d is beyond the last event %d; ignored",
                acked_seq,
                self.next_seq - 1,
            )
            return
        self.last_acked_seq = acked_seq
        head_acked = bool(self.pending) and self.pending[0].seq <= acked_seq
        while self.pending and self.pending[0].seq <= acked_seq:
            self.pending.popleft()
        if head_acked:
            self._sent_at = None
            self._send_next_event()

    def _send_next_event(self) -> None:
        """Send the oldest unacknowledged event, unless one is already in flight."""
        if not self._delivering or not self.pending or self._sent_at is not None:
            return
        self._sent_at = self._clock()
        event = self.pending[0]
        frame = self._frame(event)
        faults = self.wire_faults
        if event.seq in faults.drop:
            faults.drop.discard(event.seq)
            log.info("device link: injected fault: dropped the frame of event %d", event.seq)
            return
        if event.seq in faults.corrupt:
            faults.corrupt.discard(event.seq)
            log.info("device link: injected fault: corrupted the frame of event %d", event.seq)
            middle = len(frame) // 2
            wrong = 0xFE if frame[middle] == 0xFF else 0xFF
            frame = frame[:middle] + bytes([wrong]) + frame[middle + 1 :]
        if event.seq in faults.duplicate:
            faults.duplicate.discard(event.seq)
            log.info("device link: injected fault: sent event %d twice", event.seq)
            self._emit(frame)
        self._emit(frame)

    def _send(self, message: Message | Answer | Event) -> None:
        self._emit(self._frame(message))

    def _frame(self, message: Message | Answer | Event) -> bytes:
        """Sealed in a session, each time anew (a resend gets a new counter); HELLO never."""
        if isinstance(message, Hello) and self.wire_faults.altered_hello:
            message = replace(message, **self.wire_faults.altered_hello)
        payload = encode_message(message)
        if self.auth is not None and not isinstance(message, Hello):
            payload = self.auth.seal(payload)
        return encode_frame(payload)

    def _emit(self, data: bytes) -> None:
        self._output += data
        self._on_output()


def first_epoch(serial_number: str) -> int:
    """A simulated device's first stream epoch, from its serial number, never 0.

    A real device draws it at random; deriving it makes two simulator instances
    of one serial number the same device (a test's restart), and a wipe moves
    on to the next epoch.
    """
    digest = hashlib.sha256(f"cardshoe-sim-epoch/{serial_number}".encode()).digest()
    return int.from_bytes(digest[:4], "little") % 0xFFFFFFFF + 1
