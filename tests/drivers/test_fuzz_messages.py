"""Fuzz campaign for the message parser and card IDs, alone and behind the frame decoder.

tests/drivers/test_messages.py checks single damage to one payload; this campaign
stacks several mutations (header fields included), splices messages into
each other, sends whole messages over a damaged line, plays an attacker
against sealed (protocol 1.1) frames, and checks card IDs against the field
rules of docs/protocol.md "Card ID". The contract in every case: a
ProtocolError or a value that re-encodes to exactly the bytes read.
"""

from __future__ import annotations

import binascii

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.wire_strategies import any_message, damaged

from cardshoe.controller.rules.cards import parse_cards
from cardshoe.controller.rules.errors import CardNotationError
from cardshoe.drivers.protocol.auth import AuthError, Direction, LinkAuth
from cardshoe.drivers.protocol.cardid import CARD_ID_SIZE, CardId
from cardshoe.drivers.protocol.error_codes import ErrorCode
from cardshoe.drivers.protocol.errors import CardIdError, MessageError
from cardshoe.drivers.protocol.framing import DELIMITER, FrameDecoder, encode_frame
from cardshoe.drivers.protocol.link_constants import PROTOCOL_MAJOR
from cardshoe.drivers.protocol.message_codec import (
    HEADER,
    decode_message,
    encode_message,
    message_from_json,
    message_to_json,
)
from cardshoe.drivers.protocol.messages import CardRead, MessageType

KNOWN_TYPES = {member.value for member in MessageType}


@st.composite
def mutated(draw: st.DrawFn, payload: bytes, other: bytes) -> bytes:
    """The payload after 1-4 edits: flips, insertions, deletions, cuts, header rewrites, splices."""
    data = bytearray(payload)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "insert", "delete", "cut", "header", "splice"]))
        position = draw(st.integers(0, len(data)))
        match kind:
            case "flip" if data:
                data[min(position, len(data) - 1)] ^= draw(st.integers(1, 255))
            case "insert":
                data[position:position] = draw(st.binary(min_size=1, max_size=12))
            case "delete":
                del data[position : position + draw(st.integers(1, 12))]
            case "cut":
                del data[position:]
            case "header" if len(data) >= HEADER.size:
                field = draw(st.sampled_from([0, 1, 2]))
                data[field] = draw(st.sampled_from([0, 1, 2, 0x10, 0x48, 0x7F, 0x80, 0xFF]))
            case _:
                data[position:] = other[draw(st.integers(0, len(other))) :]
    return bytes(data)


def refusal_codes(payload: bytes) -> set[ErrorCode]:
    """The REPLY results docs/protocol.md allows for refusing this payload.

    The table there names one result per problem but no order among them,
    so a payload with several header problems may be refused for any of them.
    """
    if len(payload) < HEADER.size:
        return {ErrorCode.MALFORMED}
    major, type_code, flags, _ = HEADER.unpack_from(payload)
    header_problems = {
        ErrorCode.VERSION_MISMATCH: major != PROTOCOL_MAJOR,
        ErrorCode.UNSUPPORTED: flags != 0,
        ErrorCode.UNKNOWN_MESSAGE: type_code not in KNOWN_TYPES,
    }
    found = {code for code, problem in header_problems.items() if problem}
    return found or {ErrorCode.MALFORMED}


@settings(max_examples=400, deadline=None)
@given(any_message, any_message, st.data())
def test_mutated_payloads_are_refused_with_the_right_reply_or_read_canonically(
    message, other, data
) -> None:
    payload = data.draw(mutated(encode_message(message), encode_message(other)))
    try:
        decoded = decode_message(payload)
    except MessageError as error:
        assert error.error_code in refusal_codes(payload)
        if len(payload) >= HEADER.size:
            _, type_code, _, tag = HEADER.unpack_from(payload)
            assert (error.message_type, error.tag) == (type_code, tag)
        else:
            assert (error.message_type, error.tag) == (None, None)
        assert "\n" not in str(error)
        return
    assert encode_message(decoded) == payload
    assert message_from_json(message_to_json(decoded)) == decoded
    if isinstance(decoded, CardRead) and decoded.card is not None:
        assert decoded.card.encode() == decoded.card_code


@settings(max_examples=150, deadline=None)
@given(st.lists(any_message, min_size=1, max_size=8), st.data())
def test_messages_over_a_damaged_line_arrive_exactly_as_sent_or_not_at_all(messages, data) -> None:
    """Each frame damaged or not, each followed by a sender's 0x00: only intact ones arrive."""
    stream = b""
    expected = []
    for message in messages:
        frame = encode_frame(encode_message(message))
        if data.draw(st.booleans()):
            stream += data.draw(damaged(frame, frame)) + DELIMITER
        else:
            stream += frame
            expected.append(message)
    received = [decode_message(payload) for payload in FrameDecoder().feed(stream)]
    for message in received:
        assert message in messages
    remaining = iter(received)
    assert all(message in remaining for message in expected), "an intact frame was lost"


SESSION_KEY = bytes(range(32))


@settings(max_examples=200, deadline=None)
@given(st.lists(any_message, min_size=1, max_size=6), st.data())
def test_only_genuine_sealed_frames_open_each_once_and_in_order(messages, data) -> None:
    """The line replays, reorders, alters, reflects and forges sealed frames; the host opens.

    Whatever arrives, the host's LinkAuth accepts only frames the device
    sealed, each at most once and in the order sealed, and refuses nothing
    genuine that is newer than all it accepted; every refusal is an AuthError.
    """
    device = LinkAuth(SESSION_KEY, Direction.DEVICE_TO_HOST)
    host = LinkAuth(SESSION_KEY, Direction.HOST_TO_DEVICE)
    payloads = [encode_message(message) for message in messages]
    sealed = [device.seal(payload) for payload in payloads]
    reflected = [LinkAuth(SESSION_KEY, Direction.HOST_TO_DEVICE).seal(p) for p in payloads]
    for _ in range(data.draw(st.integers(1, 15))):
        index = data.draw(st.integers(0, len(sealed) - 1))
        wire = data.draw(
            st.sampled_from([sealed[index], reflected[index]])
            | mutated(sealed[index], sealed[-1 - index])
            | st.binary(max_size=80)
        )
        counter = sealed.index(wire) + 1 if wire in sealed else None
        newest_accepted = host.received
        try:
            inner = host.open(wire)
        except AuthError:
            assert counter is None or counter <= newest_accepted, "a fresh genuine frame refused"
            continue
        assert counter is not None, f"opened {wire.hex()}, which the device never sealed"
        assert counter > newest_accepted
        assert inner == payloads[counter - 1]


def card_rule_holds(code: bytes) -> bool:
    """docs/protocol.md "Card ID": rank 1-13, bits 6-7 zero, deck set and deck both 0 or neither."""
    rank, reserved = code[0] & 0x0F, code[0] >> 6
    deck_set, deck = int.from_bytes(code[1:5], "little"), code[5]
    return 1 <= rank <= 13 and reserved == 0 and (deck_set == 0) == (deck == 0)


checked_codes = st.binary(min_size=6, max_size=6).map(
    lambda body: body + binascii.crc_hqx(body, 0xFFFF).to_bytes(2, "little")
)


@given(checked_codes | st.binary(min_size=CARD_ID_SIZE, max_size=CARD_ID_SIZE))
def test_card_id_bytes_decode_exactly_when_the_check_and_field_rules_hold(code: bytes) -> None:
    check_ok = binascii.crc_hqx(code[:6], 0xFFFF) == int.from_bytes(code[6:], "little")
    if check_ok and card_rule_holds(code):
        assert CardId.decode(code).encode() == code
    else:
        with pytest.raises(CardIdError):
            CardId.decode(code)


@given(st.binary().filter(lambda data: len(data) != CARD_ID_SIZE))
def test_card_id_bytes_of_any_other_length_are_a_misread(data: bytes) -> None:
    with pytest.raises(CardIdError, match=f"{CARD_ID_SIZE} bytes"):
        CardId.decode(data)


card_texts = st.text(alphabet="AKQJT0123456789SHDCshdc#/ xX*-", max_size=20) | st.text(max_size=20)


@settings(max_examples=300)
@given(card_texts)
def test_card_id_text_parses_to_a_card_that_prints_back_or_a_one_line_error(text: str) -> None:
    try:
        card = CardId.parse(text)
    except CardIdError as error:
        assert "\n" not in str(error)
        return
    assert CardId.parse(str(card)) == card


@settings(max_examples=300)
@given(card_texts)
def test_shoe_card_notation_parses_or_fails_with_a_one_line_rules_error(text: str) -> None:
    # shoectl reports a RulesError as bad input (exit 2): tests/cli/test_bad_input_cli.py.
    try:
        cards = parse_cards(text)
    except CardNotationError as error:
        assert "\n" not in str(error)
        return
    assert parse_cards(" ".join(str(card) for card in cards)) == cards
