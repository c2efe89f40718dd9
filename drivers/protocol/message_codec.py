"""The codec for message payloads: each message type's layout, and one loop to read and write.

A payload (the bytes inside one frame, see framing.py) is a 7-byte header
followed by a body whose layout depends on the message type:

    byte 0     protocol major version (PROTOCOL_MAJOR)
    byte 1     message type (MessageType)
    byte 2     header flags (HeaderFlag: AUTH_TAG on a sealed frame, see auth.py)
    bytes 3-6  tag, u32 little-endian: the event sequence number of a device
               event, the request id of a command or of its reply, or the
               sequence number an ACK acknowledges

LAYOUTS is the table that ties each type byte to its dataclass (messages.py),
the field the tag carries, and the body's field codecs; encode_message and
decode_message are one loop over it. It is apart from the dataclasses because
it is a separate job: messages.py says what each message holds, this module
how it is laid out in bytes. docs/protocol.md is the specification; this
module and the worked examples there are checked against each other by the
tests.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass, fields
from typing import Any

from cardshoe.drivers.protocol.cardid import CARD_ID_SIZE
from cardshoe.drivers.protocol.error_codes import ErrorCode
from cardshoe.drivers.protocol.errors import (
    MalformedMessage,
    UnknownMessageType,
    UnsupportedFlags,
    UnsupportedVersion,
)
from cardshoe.drivers.protocol.link_constants import FIRMWARE_CHUNK_SIZE, PROTOCOL_MAJOR
from cardshoe.drivers.protocol.messages import (
    FIRMWARE_HASH_SIZE,
    HELLO_DIGEST_SIZE,
    HOUSE_KEY_SIZE,
    MAX_LISTED_FAULTS,
    MAX_TEXT_BYTES,
    NONCE_SIZE,
    PAIRING_KEY_SIZE,
    SIGNATURE_SIZE,
    Ack,
    Answer,
    AuthChallenge,
    AuthResponse,
    ButtonPressed,
    Capability,
    CardRead,
    Command,
    CutCard,
    DealNext,
    DeviceKind,
    Event,
    Fault,
    FaultCleared,
    FaultKind,
    FirmwareBegin,
    FirmwareChunk,
    FirmwareCommit,
    GateMode,
    GetInfo,
    GetStatus,
    Hello,
    Message,
    MessageType,
    OperationDone,
    Orientation,
    Pair,
    Reply,
    Reset,
    ReturnCards,
    SelfTest,
    SelfTestResult,
    SensorFlag,
    SetGate,
    ShoeEmpty,
    Shuffle,
    Status,
    StatusFlag,
)
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


MessageClass = type[Message]
"""A message dataclass; named because MessageLayout's field `type` hides the builtin there."""


@dataclass(frozen=True)
class MessageLayout:
    """How one message type is laid out: header tag field, then body fields in order."""

    type: MessageType
    cls: MessageClass
    tag_field: str
    tag: UInt
    body: tuple[tuple[str, FieldCodec], ...]


def _event(
    message_type: MessageType, cls: MessageClass, *body: tuple[str, FieldCodec]
) -> MessageLayout:
    return MessageLayout(
        message_type, cls, "seq", EVENT_SEQ, (("device_time_ms", DEVICE_TIME), *body)
    )


def _answer(
    message_type: MessageType, cls: MessageClass, *body: tuple[str, FieldCodec]
) -> MessageLayout:
    return MessageLayout(message_type, cls, "request_id", ANSWER_ID, body)


def _command(
    message_type: MessageType, cls: MessageClass, *body: tuple[str, FieldCodec]
) -> MessageLayout:
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
_BY_CLASS: dict[type, MessageLayout] = {layout.cls: layout for layout in LAYOUTS}


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
