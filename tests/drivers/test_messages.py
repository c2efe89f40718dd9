"""The message codec: round trips, strictness, and decode failures that never crash."""

from __future__ import annotations

import binascii
import dataclasses
import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.wire_strategies import any_message

from cardshoe.drivers.protocol.cardid import CardId, CardSuit
from cardshoe.drivers.protocol.error_codes import ErrorCode
from cardshoe.drivers.protocol.errors import (
    CardIdError,
    MalformedMessage,
    MessageError,
    ProtocolError,
    UnknownMessageType,
    UnsupportedFlags,
    UnsupportedVersion,
)
from cardshoe.drivers.protocol.link_constants import PROTOCOL_MAJOR
from cardshoe.drivers.protocol.message_codec import (
    ANSWER_ID,
    HEADER,
    LAYOUTS,
    REQUEST_ID,
    decode_message,
    encode_message,
    message_from_json,
    message_to_json,
)
from cardshoe.drivers.protocol.messages import (
    Ack,
    Answer,
    Capability,
    CardRead,
    Command,
    DealNext,
    DeviceKind,
    Event,
    Fault,
    FaultKind,
    GateMode,
    GetInfo,
    Hello,
    MessageType,
    Orientation,
    Reply,
    SensorFlag,
    Status,
    StatusFlag,
)

card_ids = st.builds(
    CardId,
    rank=st.integers(1, 13),
    suit=st.sampled_from(list(CardSuit)),
) | st.builds(
    CardId,
    rank=st.integers(1, 13),
    suit=st.sampled_from(list(CardSuit)),
    deck_set=st.integers(1, 0xFFFFFFFF),
    deck=st.integers(1, 255),
)


def card(**changes) -> CardRead:
    base = CardRead(
        seq=7,
        device_time_ms=1234,
        card_code=CardId(1, CardSuit.SPADES, 0x00BC614E, 3).encode(),
        orientation=Orientation.FACE_DOWN,
        flags=SensorFlag(0),
        feed_group=0,
        feed_size=1,
    )
    return dataclasses.replace(base, **changes)


def test_layout_table_matches_the_dataclasses() -> None:
    assert {layout.type for layout in LAYOUTS} == set(MessageType)
    assert len({layout.cls for layout in LAYOUTS}) == len(LAYOUTS)
    for layout in LAYOUTS:
        names = [layout.tag_field, *(name for name, _ in layout.body)]
        wire_fields = [field.name for field in dataclasses.fields(layout.cls) if field.init]
        assert names == wire_fields, layout.type


@given(any_message)
def test_every_message_round_trips(message) -> None:
    assert decode_message(encode_message(message)) == message


@given(any_message)
def test_json_form_round_trips(message) -> None:
    assert message_from_json(message_to_json(message)) == message


@given(st.binary(max_size=200))
def test_arbitrary_bytes_decode_only_to_a_message_that_re_encodes_identically(data) -> None:
    try:
        message = decode_message(data)
    except ProtocolError:
        return
    assert encode_message(message) == data


@given(
    st.sampled_from(list(MessageType)),
    st.integers(0, 0xFFFFFFFF),
    st.binary(max_size=120),
)
def test_well_headed_payloads_with_random_bodies_never_crash(message_type, tag, body) -> None:
    payload = HEADER.pack(PROTOCOL_MAJOR, message_type, 0, tag) + body
    try:
        message = decode_message(payload)
    except MessageError as error:
        assert error.message_type == message_type
        assert error.tag == tag
        return
    assert encode_message(message) == payload


@given(any_message, st.data())
def test_damaged_payloads_are_refused_or_canonical(message, data) -> None:
    payload = bytearray(encode_message(message))
    position = data.draw(st.integers(0, len(payload) - 1))
    payload[position] ^= data.draw(st.integers(1, 255))
    cut = data.draw(st.integers(0, len(payload)))
    damaged = bytes(payload[:cut])
    try:
        decoded = decode_message(damaged)
    except ProtocolError:
        return
    assert encode_message(decoded) == damaged


def test_every_message_has_the_marker_of_its_class() -> None:
    markers = {"seq": Event, "request_id": (Command, Answer), "acked_seq": object}
    for layout in LAYOUTS:
        assert issubclass(layout.cls, markers[layout.tag_field]), layout.type
        if layout.tag is REQUEST_ID:
            assert issubclass(layout.cls, Command), layout.type
        if layout.tag is ANSWER_ID:
            assert issubclass(layout.cls, Answer), layout.type


def test_the_header_layout() -> None:
    payload = encode_message(Ack(acked_seq=0x01020304))
    assert payload == bytes([PROTOCOL_MAJOR, MessageType.ACK, 0, 0x04, 0x03, 0x02, 0x01])


def test_a_payload_shorter_than_the_header_is_malformed() -> None:
    with pytest.raises(MalformedMessage, match="shorter than the 7-byte header"):
        decode_message(b"\x01\x48\x00")


def test_another_major_version_is_refused_with_what_a_device_needs_to_reply() -> None:
    payload = bytearray(encode_message(DealNext(request_id=513)))
    payload[0] = PROTOCOL_MAJOR + 1
    with pytest.raises(UnsupportedVersion) as caught:
        decode_message(bytes(payload))
    assert caught.value.major == PROTOCOL_MAJOR + 1
    assert caught.value.tag == 513
    assert caught.value.error_code == ErrorCode.VERSION_MISMATCH


def test_the_reserved_authentication_flag_is_refused() -> None:
    payload = bytearray(encode_message(DealNext(request_id=9)))
    payload[2] = 0x80
    with pytest.raises(UnsupportedFlags) as caught:
        decode_message(bytes(payload))
    assert caught.value.error_code == ErrorCode.UNSUPPORTED
    assert caught.value.tag == 9


def test_an_unknown_type_keeps_its_request_id_for_the_reply() -> None:
    payload = HEADER.pack(PROTOCOL_MAJOR, 0x7E, 0, 42)
    with pytest.raises(UnknownMessageType) as caught:
        decode_message(payload)
    assert (caught.value.message_type, caught.value.tag) == (0x7E, 42)
    assert caught.value.error_code == ErrorCode.UNKNOWN_MESSAGE


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (encode_message(Reply(1, ErrorCode.OK)) + b"\x00", "after the body"),
        (encode_message(Reply(1, ErrorCode.OK))[:-1], "short"),
        (HEADER.pack(PROTOCOL_MAJOR, MessageType.REPLY, 0, 1) + b"\xee", "ErrorCode"),
        (HEADER.pack(PROTOCOL_MAJOR, MessageType.DEAL_NEXT, 0, 0), "outside 1..65535"),
        (HEADER.pack(PROTOCOL_MAJOR, MessageType.DEAL_NEXT, 0, 0x10000), "outside 1..65535"),
        (HEADER.pack(PROTOCOL_MAJOR, MessageType.ACK, 0, 0), "outside 1..4294967295"),
        (
            HEADER.pack(PROTOCOL_MAJOR, MessageType.GET_INFO, 0, 5),
            "short",
        ),
    ],
)
def test_malformed_bodies_are_refused(payload: bytes, reason: str) -> None:
    with pytest.raises(MalformedMessage, match=reason):
        decode_message(payload)


def test_undefined_flag_bits_are_refused() -> None:
    payload = bytearray(encode_message(card()))
    flags_offset = HEADER.size + 8 + 8 + 1
    payload[flags_offset] = 0x80
    with pytest.raises(MalformedMessage, match="undefined SensorFlag bits 0x80"):
        decode_message(bytes(payload))


def test_text_that_is_not_utf8_is_refused() -> None:
    hello = Hello(
        request_id=0,
        protocol_minor=0,
        device_kind=DeviceKind.MANUAL_SHOE,
        capabilities=Capability.GATE,
        last_acked_seq=0,
        next_seq=1,
        firmware_hash=bytes(32),
        model="",
        serial_number="",
        firmware_version="x",
    )
    payload = encode_message(hello)
    assert payload.endswith(b"\x01x")
    with pytest.raises(MalformedMessage, match="not UTF-8"):
        decode_message(payload[:-1] + b"\xff")
    with pytest.raises(MalformedMessage, match="not UTF-8"):  # a byte argv could not decode
        encode_message(dataclasses.replace(hello, firmware_version="\udcff"))


@pytest.mark.parametrize("control", ["\x1b", "\x9b", "\x07", "\n", "\x7f", "\x85", "\u2028"])
def test_text_with_a_control_character_is_refused_both_ways(control: str) -> None:
    """A model or serial holding ESC, CSI or a line break would be a command to the terminal
    of the technician who runs shoectl info: the wire refuses it, sent or received."""
    fields = {
        "request_id": 0,
        "protocol_minor": 0,
        "device_kind": DeviceKind.MANUAL_SHOE,
        "capabilities": Capability.GATE,
        "last_acked_seq": 0,
        "next_seq": 1,
        "firmware_hash": bytes(32),
        "serial_number": "",
        "firmware_version": "",
    }
    with pytest.raises(MalformedMessage, match="control character"):
        encode_message(Hello(model=f"S{control}]0;x", **fields))
    payload = encode_message(Hello(model="S", **fields))
    start = payload.index(b"\x01S")
    tampered = control.encode() + b"[2J"
    body = payload[:start] + bytes([len(tampered)]) + tampered + payload[start + 2 :]
    with pytest.raises(MalformedMessage, match="control character"):
        decode_message(body)


def test_a_count_the_device_cannot_tell_travels_as_none() -> None:
    status = Status(1, StatusFlag.BUSY, GateMode.LOCKED, 0, None, (FaultKind.JAM,))
    payload = encode_message(status)
    assert payload[HEADER.size + 5 : HEADER.size + 7] == b"\xff\xff"
    assert decode_message(payload) == status


@pytest.mark.parametrize(
    "message",
    [
        card(card_code=b"\x01" * 7),
        card(seq=0),
        card(feed_size=0),
        card(orientation=9),
        DealNext(request_id=0),
        GetInfo(request_id=1, protocol_minor=256),
        Fault(seq=1, device_time_ms=0, kind=FaultKind.JAM, detail=-1),
        "not a message",
    ],
)
def test_encoding_an_invalid_message_is_refused(message) -> None:
    with pytest.raises(MalformedMessage):
        encode_message(message)


def test_a_card_event_keeps_a_misread_code_so_it_can_still_be_acknowledged() -> None:
    unreadable = card(card_code=bytes(8), flags=SensorFlag.ID_UNREADABLE)
    assert decode_message(encode_message(unreadable)) == unreadable
    assert (unreadable.card, unreadable.misread) == (None, False)
    misread = card(card_code=bytes(8))
    assert (misread.card, misread.misread) == (None, True)
    assert str(card().card) == "AS#00BC614E/3"


def test_the_card_is_decoded_once_when_the_message_is_made() -> None:
    decoded = decode_message(encode_message(card()))
    assert isinstance(decoded, CardRead)
    assert decoded.card == CardId.parse("AS#00BC614E/3")
    assert "card" not in message_to_json(decoded)["fields"]


@given(card_ids)
def test_card_ids_round_trip_in_bytes_and_text(card_id: CardId) -> None:
    assert CardId.decode(card_id.encode()) == card_id
    assert CardId.parse(str(card_id)) == card_id


@given(card_ids)
def test_every_one_or_two_bit_misread_of_a_card_id_is_detected(card_id: CardId) -> None:
    code = int.from_bytes(card_id.encode(), "little")
    flips = itertools.chain(((bit,) for bit in range(64)), itertools.combinations(range(64), 2))
    for bits in flips:
        damaged = code ^ sum(1 << bit for bit in bits)
        with pytest.raises(CardIdError):
            CardId.decode(damaged.to_bytes(8, "little"))


def test_card_id_layout_and_text() -> None:
    king_of_clubs = CardId(13, CardSuit.CLUBS, 0x12345678, 200)
    assert king_of_clubs.encode()[:6] == bytes([0x3D, 0x78, 0x56, 0x34, 0x12, 200])
    assert str(king_of_clubs) == "KC#12345678/200"
    assert str(CardId(10, CardSuit.HEARTS)) == "TH"
    assert not CardId(10, CardSuit.HEARTS).tagged
    assert CardId.parse("th") == CardId(10, CardSuit.HEARTS)


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ((0, 0), "rank 0"),
        ((14, 0), "rank 14"),
        ((1, 4), "suit 4"),
        ((1, 0, 5, 0), "untagged"),
        ((1, 0, 0, 5), "untagged"),
        ((1, 0, 1, 256), "deck number"),
        ((1, 0, 1 << 32, 1), "32 bits"),
    ],
)
def test_impossible_card_ids_are_refused(fields: tuple[int, ...], reason: str) -> None:
    with pytest.raises(CardIdError, match=reason):
        CardId(*fields)


@pytest.mark.parametrize("text", ["", "1S", "AX", "AS#123/1", "AS#0000000G/1", "AS#00000001"])
def test_unreadable_card_id_text_is_refused(text: str) -> None:
    with pytest.raises(CardIdError, match="bad card ID"):
        CardId.parse(text)


def test_card_id_bytes_with_a_valid_check_but_impossible_fields_are_refused() -> None:
    with pytest.raises(CardIdError, match="8 bytes"):
        CardId.decode(b"\x01")
    body = bytes([0x4F, 0, 0, 0, 0, 0])
    with pytest.raises(CardIdError, match="reserved bits"):
        CardId.decode(body + binascii.crc_hqx(body, 0xFFFF).to_bytes(2, "little"))
