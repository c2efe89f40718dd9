"""Every shoe link message as a frozen dataclass, and the codec for payloads.

A payload (the bytes inside one frame, see framing.py) is a 7-byte header
followed by a body whose layout depends on the message type:

    byte 0     protocol major version (PROTOCOL_MAJOR)
    byte 1     message type (MessageType)
    byte 2     header flags (HeaderFlag: AUTH_TAG on a sealed frame, see auth.py)
    bytes 3-6  tag, u32 little-endian: the event sequence number of a device
               event, the request id of a command or of its reply, or the
               sequence number an ACK acknowledges

LAYOUTS is the table that ties each type byte to its dataclass, the field the
tag carries, and the body's field codecs; encode_message and decode_message
are one loop over it. docs/protocol.md is the specification; this module and
the worked examples there are checked against each other by the tests.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass, field, fields
from enum import IntEnum, IntFlag
from typing import Any

from cardshoe.drivers.protocol.cardid import CARD_ID_SIZE, CardId
from cardshoe.drivers.protocol.error_codes import ErrorCode
from cardshoe.drivers.protocol.errors import (
    CardIdError,
    MalformedMessage,
    UnknownMessageType,
    UnsupportedFlags,
    UnsupportedVersion,
)
from cardshoe.drivers.protocol.link_constants import FIRMWARE_CHUNK_SIZE, PROTOCOL_MAJOR
from cardshoe.drivers.protocol.wire_fields import (
    U8,
    U16,
    U32,
    U64,
    Appended,
    Chunk,
    Enum8,
    FieldCodec,
    FixedBytes,
    Flags,
    JsonValue,
    ListOf,
    OptionalCount,
    Text,
    UInt,
)

HEADER = struct.Struct("<BBBI")
FIRMWARE_HASH_SIZE = 32
"""SHA-256 of the firmware image."""
MAX_TEXT_BYTES = 32
MAX_LISTED_FAULTS = 16
HELLO_DIGEST_SIZE = 32
"""SHA-256 of a HELLO's body, which AUTH_RESPONSE carries from protocol 1.2."""
NONCE_SIZE = 16
"""A session nonce: 16 random bytes from each side."""
PAIRING_KEY_SIZE = 32
HOUSE_KEY_SIZE = 32
"""The house's Ed25519 public key, raw."""
SIGNATURE_SIZE = 64
"""An Ed25519 signature."""


class MessageType(IntEnum):
    # Device -> host, answers to a command (tag = request id)
    HELLO = 0x01
    REPLY = 0x02
    STATUS = 0x03
    AUTH_RESPONSE = 0x04
    """Protocol 1.1: the device's nonce, sealed with the new session key."""
    # Device -> host events (tag = event sequence number; resent until acknowledged)
    CARD = 0x10
    CUT_CARD = 0x11
    SHOE_EMPTY = 0x12
    BUTTON = 0x13
    FAULT = 0x14
    FAULT_CLEARED = 0x15
    SELF_TEST_RESULT = 0x16
    OPERATION_DONE = 0x17
    # Host -> device commands (tag = request id)
    GET_INFO = 0x40
    GET_STATUS = 0x41
    SELF_TEST = 0x42
    GATE = 0x43
    DEAL_NEXT = 0x44
    SHUFFLE = 0x45
    RETURN = 0x46
    RESET = 0x47
    # Host -> device acknowledgement (tag = acknowledged sequence number)
    ACK = 0x48
    # Host -> device, protocol 1.1 link authentication (tag = request id)
    AUTH_CHALLENGE = 0x49
    PAIR = 0x4A
    """Give the device its pairing key; refused unless the device is in pairing mode."""
    # Host -> device, protocol 1.3 firmware update (tag = request id)
    FIRMWARE_BEGIN = 0x4B
    """Announce a signed image: its version, size, SHA-256 and the house's signature."""
    FIRMWARE_CHUNK = 0x4C
    FIRMWARE_COMMIT = 0x4D
    """Check the received image and switch to it: the device restarts on it."""


class HeaderFlag(IntFlag):
    AUTH_TAG = 0x80
    """Protocol 1.1: a counter and an HMAC tag follow the body (auth.py seals and opens it).

    decode_message never sees it set: a receiver opens a sealed payload first,
    and refuses it as UNSUPPORTED when it has no session to open it with.
    """


class DeviceKind(IntEnum):
    MANUAL_SHOE = 1
    AUTO_DEALER = 2
    """An automatic shuffler-dealer."""


class Orientation(IntEnum):
    FACE_DOWN = 0
    FACE_UP = 1
    UNKNOWN = 2
    """The device has no orientation sensor."""


class GateMode(IntEnum):
    LOCKED = 0
    """No card can be drawn."""
    OPEN = 1
    RELEASE_ONE = 2
    """Open for exactly one card, then locked again by the device itself."""


class FaultKind(IntEnum):
    JAM = 1
    MISREAD = 2
    """The reader keeps failing; one unreadable card is a CARD with ID_UNREADABLE."""
    DOOR_OPEN = 3
    SENSOR_FAILURE = 4
    GATE_FAILURE = 5
    SHUFFLER_FAILURE = 6
    CARD_COUNT_MISMATCH = 7
    """A shuffle or return counted more or fewer cards than expected."""
    FIRMWARE_HASH_MISMATCH = 8
    MEMORY_FAILURE = 9
    EVENT_BACKLOG = 10
    """The unacknowledged-event queue is full; dealing is blocked."""
    POWER_LOSS = 11
    """Power was lost while a card or an operation was in progress."""
    TAMPER = 12


class Capability(IntFlag):
    GATE = 1 << 0
    DEAL_NEXT = 1 << 1
    SHUFFLE = 1 << 2
    RETURN = 1 << 3
    TAGGED_CARDS = 1 << 4
    """Reads deck-set serial and deck number, not only rank and suit."""
    ORIENTATION = 1 << 5
    DOUBLE_FEED_DETECTION = 1 << 6
    DEALER_BUTTON = 1 << 7
    CUT_CARD_DETECTION = 1 << 8
    DOOR_SENSOR = 1 << 9
    AUTH_REQUIRED = 1 << 10
    """Protocol 1.1: the device holds a pairing key and serves nothing but GET_INFO,
    AUTH_CHALLENGE and (in pairing mode) PAIR until the host has authenticated."""
    FIRMWARE_UPDATE = 1 << 11
    """Protocol 1.3: the device takes signed firmware updates (FIRMWARE_BEGIN...); a device
    without it (a line or HID reader) cannot be updated over the link."""


class SensorFlag(IntFlag):
    ID_UNREADABLE = 1 << 0
    """A card left but its code could not be read; card_code is all zero."""
    LOW_CONFIDENCE = 1 << 1
    """Read, but the reader's signal was marginal."""
    REVERSED = 1 << 2
    """The card passed rotated end for end (its code was read backwards)."""
    DOUBLE_FEED_SUSPECTED = 1 << 3
    """More than one card left together; see feed_group and feed_size."""
    FEED_IN_ORDER = 1 << 4
    """With DOUBLE_FEED_SUSPECTED: the reader read the group's cards one after the other as
    they left, so their order is the events' order (docs/protocol.md, double feeds)."""


class StatusFlag(IntFlag):
    DOOR_OPEN = 1 << 0
    CARD_AT_EXIT = 1 << 1
    """A card waits at the exit, ready to be drawn."""
    SHOE_LOADED = 1 << 2
    BUSY = 1 << 3
    """A shuffle, return or self-test is running."""
    SELF_TEST_PASSED = 1 << 4
    CUT_CARD_SEEN = 1 << 5


class Event:
    """A device event: has seq and device_time_ms, resent until acknowledged."""

    seq: int
    device_time_ms: int


class Command:
    """A host command: has request_id, which the device's answer echoes."""

    request_id: int


class Answer:
    """The device's answer to a command: request_id echoes the command's (0: unsolicited)."""

    request_id: int


# Device -> host answers


@dataclass(frozen=True)
class Hello(Answer):
    """Who the device is, and where its event stream stands.

    request_id 0 means unsolicited (sent at power-up until a GET_INFO arrives).
    """

    request_id: int
    protocol_minor: int
    device_kind: DeviceKind
    capabilities: Capability
    last_acked_seq: int
    """The highest event seq the host has acknowledged (0: none yet)."""
    next_seq: int
    """The seq the device's next new event will carry."""
    firmware_hash: bytes
    model: str
    serial_number: str
    firmware_version: str
    epoch: int | None = None
    """Protocol 1.2: which life of the event counter next_seq counts in; None from 1.0/1.1.

    A device draws a new random epoch whenever its counter starts again from 1
    (first power-up, a memory wipe); restarts, resets and re-plugs keep it. A
    different epoch under the same serial number is a new stream, never a
    continuation of the one the host journaled.
    """


@dataclass(frozen=True)
class Reply(Answer):
    """The answer to a command: ErrorCode.OK or why the device refused it."""

    request_id: int
    result: ErrorCode


@dataclass(frozen=True)
class AuthResponse(Answer):
    """The answer to AUTH_CHALLENGE, sealed with the session key both nonces give.

    Its valid tag proves the device holds the pairing key; firmware_hash
    repeats the HELLO's, so the hash the host checks is an authenticated one.
    """

    request_id: int
    device_nonce: bytes
    firmware_hash: bytes
    hello_digest: bytes | None = None
    """Protocol 1.2: SHA-256 of the HELLO body the device sent (hello_digest()), so every
    HELLO field arrives authenticated; None from a 1.1 device."""


@dataclass(frozen=True)
class Status(Answer):
    """A snapshot answering GET_STATUS; changes that matter come as events."""

    request_id: int
    flags: StatusFlag
    gate: GateMode
    cards_dealt: int
    """Cards drawn since the shoe was loaded."""
    cards_remaining: int | None
    """None when the device cannot count what is left (a manual shoe)."""
    active_faults: tuple[FaultKind, ...]


# Device -> host events


@dataclass(frozen=True)
class CardRead(Event):
    """One physical card left the device.

    Cards that left together (a double feed) each come as a CardRead with
    DOUBLE_FEED_SUSPECTED, the same non-zero feed_group and feed_size = how
    many cards left together; their order is unknown, so none may be assigned
    to a hand. A single card has feed_group 0 and feed_size 1.

    The card code is decoded once, here, when the message is made: `card` is
    the card, and everyone above the driver reads that, never the raw code.
    """

    seq: int
    device_time_ms: int
    card_code: bytes
    """The 8 bytes as read; all zero if ID_UNREADABLE. Kept for the journal's exact record."""
    orientation: Orientation
    flags: SensorFlag
    feed_group: int
    feed_size: int
    card: CardId | None = field(init=False, repr=False, compare=False)
    """The decoded card; None when ID_UNREADABLE is set or the code fails its check value."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "card", _decoded_card(self.card_code, self.flags))

    @property
    def misread(self) -> bool:
        """A code was read but fails its check value (unlike an unreadable card)."""
        return self.card is None and not self.flags & SensorFlag.ID_UNREADABLE


def _decoded_card(code: bytes, flags: SensorFlag) -> CardId | None:
    if flags & SensorFlag.ID_UNREADABLE:
        return None
    try:
        return CardId.decode(code)
    except CardIdError:
        return None


@dataclass(frozen=True)
class CutCard(Event):
    seq: int
    device_time_ms: int


@dataclass(frozen=True)
class ShoeEmpty(Event):
    seq: int
    device_time_ms: int
    cards_dealt: int


@dataclass(frozen=True)
class ButtonPressed(Event):
    seq: int
    device_time_ms: int
    button: int
    """0 is the dealer button; other numbers are device-specific."""


@dataclass(frozen=True)
class Fault(Event):
    """A fault became active; it stays active, across power cycles, until FaultCleared."""

    seq: int
    device_time_ms: int
    kind: FaultKind
    detail: int
    """Device-specific sub-code (sensor number, motor, ...), 0 if none."""


@dataclass(frozen=True)
class FaultCleared(Event):
    seq: int
    device_time_ms: int
    kind: FaultKind


@dataclass(frozen=True)
class SelfTestResult(Event):
    """The outcome of a self-test, at power-up or after SELF_TEST."""

    seq: int
    device_time_ms: int
    checks_run: int
    failures: tuple[FaultKind, ...]
    firmware_hash: bytes
    """SHA-256 of the firmware image, computed during this self-test."""

    @property
    def passed(self) -> bool:
        return not self.failures


@dataclass(frozen=True)
class OperationDone(Event):
    """A SHUFFLE or RETURN finished; card_count is what the device counted."""

    seq: int
    device_time_ms: int
    request_id: int
    operation: MessageType
    result: ErrorCode
    card_count: int


# Host -> device


@dataclass(frozen=True)
class GetInfo(Command):
    """Connect: the device answers with HELLO and then (re)sends unacknowledged events."""

    request_id: int
    protocol_minor: int


@dataclass(frozen=True)
class GetStatus(Command):
    request_id: int


@dataclass(frozen=True)
class SelfTest(Command):
    request_id: int


@dataclass(frozen=True)
class SetGate(Command):
    request_id: int
    mode: GateMode


@dataclass(frozen=True)
class DealNext(Command):
    request_id: int


@dataclass(frozen=True)
class Shuffle(Command):
    """Load the cards in the machine and shuffle them into a new shoe."""

    request_id: int
    decks: int


@dataclass(frozen=True)
class ReturnCards(Command):
    """Take the round's cards back into the machine."""

    request_id: int
    expected_cards: int


@dataclass(frozen=True)
class Reset(Command):
    request_id: int


@dataclass(frozen=True)
class AuthChallenge(Command):
    """Start an authenticated session with a fresh random nonce (after GET_INFO)."""

    request_id: int
    host_nonce: bytes


@dataclass(frozen=True)
class Pair(Command):
    """The device's new pairing key, accepted only in pairing mode (a technician's switch)."""

    request_id: int
    pairing_key: bytes
    house_public_key: bytes | None = None
    """Protocol 1.3: the house's Ed25519 public key (raw), with which the device checks every
    firmware image itself before it switches to it; None: keep the one it holds."""


@dataclass(frozen=True)
class FirmwareBegin(Command):
    """Start a transfer into the inactive slot; the device checks the signature first."""

    request_id: int
    version: int
    size: int
    image_sha256: bytes
    signature: bytes
    """Ed25519 over firmware_image.signed_message(version, image_sha256)."""


@dataclass(frozen=True)
class FirmwareChunk(Command):
    """The image's bytes from offset on, in order: offset is the count already accepted."""

    request_id: int
    offset: int
    data: bytes


@dataclass(frozen=True)
class FirmwareCommit(Command):
    """Check the whole image against FIRMWARE_BEGIN's hash and switch slots, or refuse."""

    request_id: int


@dataclass(frozen=True)
class Ack:
    """Cumulative: every event with seq <= acked_seq is durably recorded by the host."""

    acked_seq: int


Message = (
    Hello
    | Reply
    | Status
    | AuthResponse
    | CardRead
    | CutCard
    | ShoeEmpty
    | ButtonPressed
    | Fault
    | FaultCleared
    | SelfTestResult
    | OperationDone
    | GetInfo
    | GetStatus
    | SelfTest
    | SetGate
    | DealNext
    | Shuffle
    | ReturnCards
    | Reset
    | Ack
    | AuthChallenge
    | Pair
    | FirmwareBegin
    | FirmwareChunk
    | FirmwareCommit
)

EVENT_SEQ = UInt("I", 1)
"""Event sequence numbers start at 1 and never wrap (2**32 - 1 cards is enough)."""
REQUEST_ID = UInt("I", 1, 0xFFFF)
"""Hosts number commands 1..65535, wrapping from 65535 back to 1."""
ANSWER_ID = UInt("I", 0, 0xFFFF)
"""An answer echoes its command's request id; 0 when there was none to echo."""
MINOR = U8
DEVICE_TIME = U64
"""Milliseconds on the device's monotonic clock since it powered up."""
CARD_CODE = FixedBytes(CARD_ID_SIZE)
FAULT_LIST = ListOf(Enum8(FaultKind), MAX_LISTED_FAULTS)


@dataclass(frozen=True)
class MessageLayout:
    """How one message type is laid out: header tag field, then body fields in order."""

    type: MessageType
    cls: Any
    tag_field: str
    tag: UInt
    body: tuple[tuple[str, FieldCodec], ...]


def _event(message_type: MessageType, cls: type, *body: tuple[str, FieldCodec]) -> MessageLayout:
    return MessageLayout(
        message_type, cls, "seq", EVENT_SEQ, (("device_time_ms", DEVICE_TIME), *body)
    )


def _answer(message_type: MessageType, cls: type, *body: tuple[str, FieldCodec]) -> MessageLayout:
    return MessageLayout(message_type, cls, "request_id", ANSWER_ID, body)


def _command(message_type: MessageType, cls: type, *body: tuple[str, FieldCodec]) -> MessageLayout:
    return MessageLayout(message_type, cls, "request_id", REQUEST_ID, body)


LAYOUTS: tuple[MessageLayout, ...] = (
    _answer(
        MessageType.HELLO,
        Hello,
        ("protocol_minor", MINOR),
        ("device_kind", Enum8(DeviceKind)),
        ("capabilities", Flags(Capability, U32)),
        ("last_acked_seq", U32),
        ("next_seq", EVENT_SEQ),
        ("firmware_hash", FixedBytes(FIRMWARE_HASH_SIZE)),
        ("model", Text(MAX_TEXT_BYTES)),
        ("serial_number", Text(MAX_TEXT_BYTES)),
        ("firmware_version", Text(MAX_TEXT_BYTES)),
        ("epoch", Appended(UInt("I", 1))),
    ),
    _answer(MessageType.REPLY, Reply, ("result", Enum8(ErrorCode))),
    _answer(
        MessageType.STATUS,
        Status,
        ("flags", Flags(StatusFlag, U16)),
        ("gate", Enum8(GateMode)),
        ("cards_dealt", U16),
        ("cards_remaining", OptionalCount()),
        ("active_faults", FAULT_LIST),
    ),
    _answer(
        MessageType.AUTH_RESPONSE,
        AuthResponse,
        ("device_nonce", FixedBytes(NONCE_SIZE)),
        ("firmware_hash", FixedBytes(FIRMWARE_HASH_SIZE)),
        ("hello_digest", Appended(FixedBytes(HELLO_DIGEST_SIZE))),
    ),
    _event(
        MessageType.CARD,
        CardRead,
        ("card_code", CARD_CODE),
        ("orientation", Enum8(Orientation)),
        ("flags", Flags(SensorFlag, U8)),
        ("feed_group", U8),
        ("feed_size", UInt("B", 1)),
    ),
    _event(MessageType.CUT_CARD, CutCard),
    _event(MessageType.SHOE_EMPTY, ShoeEmpty, ("cards_dealt", U16)),
    _event(MessageType.BUTTON, ButtonPressed, ("button", U8)),
    _event(MessageType.FAULT, Fault, ("kind", Enum8(FaultKind)), ("detail", U16)),
    _event(MessageType.FAULT_CLEARED, FaultCleared, ("kind", Enum8(FaultKind))),
    _event(
        MessageType.SELF_TEST_RESULT,
        SelfTestResult,
        ("checks_run", U8),
        ("failures", FAULT_LIST),
        ("firmware_hash", FixedBytes(FIRMWARE_HASH_SIZE)),
    ),
    _event(
        MessageType.OPERATION_DONE,
        OperationDone,
        ("request_id", UInt("H", 1)),
        ("operation", Enum8(MessageType)),
        ("result", Enum8(ErrorCode)),
        ("card_count", U16),
    ),
    _command(MessageType.GET_INFO, GetInfo, ("protocol_minor", MINOR)),
    _command(MessageType.GET_STATUS, GetStatus),
    _command(MessageType.SELF_TEST, SelfTest),
    _command(MessageType.GATE, SetGate, ("mode", Enum8(GateMode))),
    _command(MessageType.DEAL_NEXT, DealNext),
    _command(MessageType.SHUFFLE, Shuffle, ("decks", UInt("B", 1))),
    _command(MessageType.RETURN, ReturnCards, ("expected_cards", U16)),
    _command(MessageType.RESET, Reset),
    MessageLayout(MessageType.ACK, Ack, "acked_seq", EVENT_SEQ, ()),
    _command(MessageType.AUTH_CHALLENGE, AuthChallenge, ("host_nonce", FixedBytes(NONCE_SIZE))),
    _command(
        MessageType.PAIR,
        Pair,
        ("pairing_key", FixedBytes(PAIRING_KEY_SIZE)),
        ("house_public_key", Appended(FixedBytes(HOUSE_KEY_SIZE))),
    ),
    _command(
        MessageType.FIRMWARE_BEGIN,
        FirmwareBegin,
        ("version", U32),
        ("size", UInt("I", 1)),
        ("image_sha256", FixedBytes(FIRMWARE_HASH_SIZE)),
        ("signature", FixedBytes(SIGNATURE_SIZE)),
    ),
    _command(
        MessageType.FIRMWARE_CHUNK,
        FirmwareChunk,
        ("offset", U32),
        ("data", Chunk(FIRMWARE_CHUNK_SIZE)),
    ),
    _command(MessageType.FIRMWARE_COMMIT, FirmwareCommit),
)

_BY_TYPE = {layout.type: layout for layout in LAYOUTS}
_BY_CLASS = {layout.cls: layout for layout in LAYOUTS}


def layout_of(message: Message | Command | Answer | Event | Ack) -> MessageLayout:
    try:
        return _BY_CLASS[type(message)]
    except KeyError:
        raise MalformedMessage(f"{message!r} is not a protocol message") from None


def encode_message(message: Message | Command | Answer | Event | Ack) -> bytes:
    """The payload for one message (frame it with framing.encode_frame)."""
    layout = layout_of(message)
    try:
        tag = layout.tag.check(getattr(message, layout.tag_field))
        body = b"".join(codec.pack(getattr(message, name)) for name, codec in layout.body)
    except MalformedMessage as exc:
        raise MalformedMessage(f"cannot encode {layout.type.name}: {exc}") from None
    return HEADER.pack(PROTOCOL_MAJOR, layout.type, 0, tag) + body


def decode_message(payload: bytes) -> Message:
    """Read one payload; every failure is a MessageError (a ProtocolError), nothing else."""
    if len(payload) < HEADER.size:
        raise MalformedMessage(
            f"a {len(payload)}-byte payload is shorter than the {HEADER.size}-byte header"
        )
    major, type_code, flags, tag = HEADER.unpack_from(payload)
    if major != PROTOCOL_MAJOR:
        raise UnsupportedVersion(major, message_type=type_code, tag=tag)
    if flags:
        raise UnsupportedFlags(
            f"header flags 0x{flags:02x} are not implemented in protocol {PROTOCOL_MAJOR}.x",
            message_type=type_code,
            tag=tag,
        )
    layout = _BY_TYPE.get(type_code)
    if layout is None:
        raise UnknownMessageType(
            f"unknown message type 0x{type_code:02x}", message_type=type_code, tag=tag
        )
    try:
        values: dict[str, Any] = {layout.tag_field: layout.tag.check(tag)}
        offset = HEADER.size
        for name, codec in layout.body:
            values[name], offset = codec.unpack(payload, offset)
        if offset != len(payload):
            raise MalformedMessage(f"{len(payload) - offset} byte(s) after the body")
    except MalformedMessage as exc:
        raise MalformedMessage(
            f"{layout.type.name}: {exc}", message_type=type_code, tag=tag
        ) from None
    return layout.cls(**values)


def hello_digest(hello: Hello) -> bytes:
    """SHA-256 of the HELLO's body (every field after the header, so not the request id).

    Each valid message has exactly one encoding, so both ends get the same
    digest from the HELLO that went over the wire.
    """
    return hashlib.sha256(encode_message(hello)[HEADER.size :]).digest()


def message_to_json(message: Message) -> dict[str, JsonValue]:
    """A plain dict for logs and docs: {"type": "CARD", "fields": {...}}."""
    layout = layout_of(message)
    codecs = {layout.tag_field: layout.tag, **dict(layout.body)}
    return {
        "type": layout.type.name,
        "fields": {
            item.name: codecs[item.name].to_json(getattr(message, item.name))
            for item in fields(message)
            if item.init
        },
    }


def message_from_json(data: dict[str, JsonValue]) -> Message:
    """The inverse of message_to_json; a wrong name or value is a MalformedMessage."""
    try:
        layout = _BY_TYPE[MessageType[data["type"]]]
        values = data["fields"]
        codecs = {layout.tag_field: layout.tag, **dict(layout.body)}
        required = {name for name, codec in codecs.items() if not isinstance(codec, Appended)}
        if not required <= set(values) <= set(codecs):
            raise MalformedMessage(
                f"{layout.type.name} has fields {sorted(codecs)}, not {sorted(values)}"
            )
        return layout.cls(
            **{name: codec.from_json(values.get(name)) for name, codec in codecs.items()}
        )
    except (KeyError, TypeError):
        raise MalformedMessage(f"{data!r} is not a message in JSON form") from None
