"""drivers/protocol/auth.py: session keys, sealing, and what a receiver refuses."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cardshoe.drivers.protocol.auth import (
    TRAILER_SIZE,
    AuthError,
    Direction,
    LinkAuth,
    derive_session_key,
    is_sealed,
    key_id,
    new_nonce,
    new_pairing_key,
    unsealed,
)
from cardshoe.drivers.protocol.errors import UnsupportedFlags
from cardshoe.drivers.protocol.message_codec import decode_message, encode_message
from cardshoe.drivers.protocol.messages import Ack, DealNext, GetStatus, HeaderFlag

SERIAL = "SIM-CS1-0001"


def session_pair(pairing_key: bytes | None = None) -> tuple[LinkAuth, LinkAuth]:
    """The host's and the device's side of one fresh session under one pairing key."""
    key = pairing_key or new_pairing_key()
    host_nonce, device_nonce = new_nonce(), new_nonce()
    host = LinkAuth.start(key, host_nonce, device_nonce, SERIAL, sends=Direction.HOST_TO_DEVICE)
    device = LinkAuth.start(key, host_nonce, device_nonce, SERIAL, sends=Direction.DEVICE_TO_HOST)
    return host, device


def test_keys_and_nonces_are_random_and_of_the_protocol_size() -> None:
    keys = {new_pairing_key() for _ in range(8)}
    assert len(keys) == 8 and {len(key) for key in keys} == {32}
    assert len(new_nonce()) == 16 and new_nonce() != new_nonce()


def test_every_input_of_the_derivation_changes_the_session_key() -> None:
    key, host_nonce, device_nonce = bytes(32), bytes(16), bytes(range(16))
    base = derive_session_key(key, host_nonce, device_nonce, SERIAL)
    variants = {
        derive_session_key(bytes([1]) + key[1:], host_nonce, device_nonce, SERIAL),
        derive_session_key(key, device_nonce, host_nonce, SERIAL),
        derive_session_key(key, host_nonce, device_nonce, SERIAL + "X"),
    }
    assert base not in variants and len(variants) == 3


@pytest.mark.parametrize(
    ("key", "nonce"), [(bytes(31), bytes(16)), (bytes(32), bytes(15)), (bytes(33), bytes(16))]
)
def test_the_derivation_refuses_wrong_sizes(key: bytes, nonce: bytes) -> None:
    with pytest.raises(ValueError):
        derive_session_key(key, nonce, bytes(16), SERIAL)


def test_a_key_id_names_a_key_without_revealing_it() -> None:
    key = new_pairing_key()
    assert len(key_id(key)) == 16 and key_id(key) == key_id(key)
    assert key.hex()[:16] != key_id(key)


@given(st.sampled_from([GetStatus(3), DealNext(9), Ack(41)]))
def test_a_sealed_payload_opens_to_the_message_on_the_other_side(message) -> None:
    host, device = session_pair()
    sealed = host.seal(encode_message(message))
    assert is_sealed(sealed) and sealed[2] == HeaderFlag.AUTH_TAG
    assert len(sealed) == len(encode_message(message)) + TRAILER_SIZE
    assert decode_message(device.open(sealed)) == message


def test_counters_count_up_from_one_in_each_direction() -> None:
    host, device = session_pair()
    for _ in range(3):
        device.open(host.seal(encode_message(GetStatus(1))))
    host.open(device.seal(encode_message(GetStatus(1))))
    assert (host.sent, device.received) == (3, 3)
    assert (device.sent, host.received) == (1, 1)


def test_a_replayed_frame_is_refused_and_a_later_one_still_opens() -> None:
    host, device = session_pair()
    first = host.seal(encode_message(Ack(5)))
    device.open(first)
    with pytest.raises(AuthError, match="replayed"):
        device.open(first)
    assert decode_message(device.open(host.seal(encode_message(Ack(6))))) == Ack(6)


def test_an_older_frame_is_refused_once_a_newer_one_arrived() -> None:
    host, device = session_pair()
    older, newer = (host.seal(encode_message(Ack(seq))) for seq in (5, 6))
    device.open(newer)
    with pytest.raises(AuthError, match="replayed"):
        device.open(older)


def test_lost_frames_leave_a_gap_that_is_allowed() -> None:
    host, device = session_pair()
    host.seal(encode_message(Ack(5)))
    assert decode_message(device.open(host.seal(encode_message(Ack(6))))) == Ack(6)


@given(st.data())
def test_any_changed_bit_is_refused(data: st.DataObject) -> None:
    host, device = session_pair()
    sealed = bytearray(host.seal(encode_message(DealNext(7))))
    index = data.draw(st.integers(0, len(sealed) - 1), label="byte")
    bit = data.draw(st.integers(0, 7), label="bit")
    sealed[index] ^= 1 << bit
    with pytest.raises(AuthError):
        device.open(bytes(sealed))
    assert device.received == 0


def test_a_frame_is_refused_under_another_pairing_key() -> None:
    host, _ = session_pair()
    _, device = session_pair()
    with pytest.raises(AuthError, match="tag does not match"):
        device.open(host.seal(encode_message(DealNext(7))))


def test_a_frame_is_refused_in_another_session_of_the_same_key() -> None:
    key = new_pairing_key()
    old_host, _ = session_pair(key)
    _, new_device = session_pair(key)
    with pytest.raises(AuthError, match="tag does not match"):
        new_device.open(old_host.seal(encode_message(DealNext(7))))


def test_a_frame_reflected_back_to_its_sender_is_refused() -> None:
    host, _ = session_pair()
    with pytest.raises(AuthError, match="tag does not match"):
        host.open(host.seal(encode_message(GetStatus(2))))


def test_a_payload_too_short_for_a_trailer_is_refused() -> None:
    _, device = session_pair()
    with pytest.raises(AuthError, match="too short"):
        device.open(bytes([1, 0x41, 0x80, 1, 0, 0, 0]) + bytes(TRAILER_SIZE - 1))


def test_unsealed_strips_the_trailer_and_the_flag_so_the_codec_reads_it() -> None:
    host, _ = session_pair()
    sealed = host.seal(encode_message(Ack(12)))
    assert unsealed(sealed) == encode_message(Ack(12))


def test_the_codec_alone_still_refuses_a_sealed_payload() -> None:
    host, _ = session_pair()
    with pytest.raises(UnsupportedFlags):
        decode_message(host.seal(encode_message(Ack(12))))


def test_a_session_refuses_to_seal_past_its_last_counter() -> None:
    host, _ = session_pair()
    host.sent = 0xFFFFFFFF
    with pytest.raises(AuthError, match="new one"):
        host.seal(encode_message(Ack(1)))
