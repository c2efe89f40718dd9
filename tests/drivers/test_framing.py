"""Framing: round trips, and resynchronisation after every kind of line damage."""

from __future__ import annotations

import itertools
import logging
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cardshoe.drivers.protocol.errors import FrameTooLarge
from cardshoe.drivers.protocol.framing import MAX_ENCODED, MAX_PAYLOAD, FrameDecoder, encode_frame

payloads = st.binary(min_size=1, max_size=MAX_PAYLOAD)


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(cut, len(data)) for cut in cuts})
    edges = [0, *points, len(data)]
    return [data[start:end] for start, end in itertools.pairwise(edges)]


def feed_all(decoder: FrameDecoder, chunks: list[bytes]) -> list[bytes]:
    return [payload for chunk in chunks for payload in decoder.feed(chunk)]


def test_frame_layout() -> None:
    """01 00 02 + CRC-32 0x108DD209 (little-endian), COBS-stuffed, then the delimiter."""
    assert zlib.crc32(b"\x01\x00\x02") == 0x108DD209
    frame = encode_frame(b"\x01\x00\x02")
    assert frame == bytes.fromhex("02 01 06 02 09 d2 8d 10 00")
    assert FrameDecoder().feed(frame) == [b"\x01\x00\x02"]


@given(st.lists(payloads, min_size=1, max_size=6), st.lists(st.integers(0, 2000), max_size=20))
def test_frames_survive_any_split_of_the_stream(frames: list[bytes], cuts: list[int]) -> None:
    stream = b"".join(encode_frame(payload) for payload in frames)
    decoder = FrameDecoder()
    assert feed_all(decoder, split(stream, cuts)) == frames
    assert decoder.counters.frames_ok == len(frames)
    assert decoder.counters.bad_frames == 0


@given(st.binary(min_size=1, max_size=400), payloads, payloads)
def test_garbage_costs_at_most_the_frame_it_runs_into(
    garbage: bytes, first: bytes, second: bytes
) -> None:
    decoder = FrameDecoder()
    decoded = decoder.feed(garbage + encode_frame(first) + encode_frame(second))
    assert decoded in ([first, second], [second])
    if garbage.endswith(b"\x00"):
        assert decoded == [first, second]


@given(payloads, payloads, st.data())
def test_a_truncated_frame_swallows_the_next_unless_the_sender_delimits(
    cut_short: bytes, next_payload: bytes, data
) -> None:
    frame = encode_frame(cut_short)
    kept = frame[: data.draw(st.integers(1, len(frame) - 2))]
    following = encode_frame(next_payload) + encode_frame(b"last")

    decoder = FrameDecoder()
    assert decoder.feed(kept + following) == [b"last"]
    assert decoder.counters.bad_frames == 1

    delimited = FrameDecoder()
    assert delimited.feed(kept + b"\x00" + following) == [next_payload, b"last"]
    assert delimited.counters.bad_frames == 1


@given(payloads, st.data())
def test_a_lost_byte_costs_only_its_own_frame(payload: bytes, data) -> None:
    frame = encode_frame(payload)
    lost = data.draw(st.integers(0, len(frame) - 2))
    damaged = frame[:lost] + frame[lost + 1 :]
    decoder = FrameDecoder()
    assert decoder.feed(damaged + encode_frame(b"next")) == [b"next"]
    assert decoder.counters.bad_frames == 1
    assert decoder.counters.bytes_discarded == len(damaged)


@given(payloads, st.lists(st.integers(0, 10_000), min_size=1, max_size=8))
def test_no_bit_flipped_frame_is_ever_accepted(payload: bytes, bits: list[int]) -> None:
    frame = bytearray(encode_frame(payload))
    for bit in bits:
        frame[(bit // 8) % len(frame)] ^= 1 << (bit % 8)
    if bytes(frame) == encode_frame(payload):
        return
    decoder = FrameDecoder()
    decoded = decoder.feed(b"\x00" + bytes(frame) + b"\x00" + encode_frame(b"after"))
    assert decoded == [b"after"]
    assert decoder.counters.bad_frames >= 1


@given(st.lists(st.binary(max_size=300), max_size=10))
def test_feeding_any_bytes_never_raises(chunks: list[bytes]) -> None:
    decoder = FrameDecoder()
    for payload in feed_all(decoder, chunks):
        assert 1 <= len(payload) <= MAX_PAYLOAD


def test_a_run_without_delimiter_is_dropped_and_the_stream_recovers(caplog) -> None:
    decoder = FrameDecoder()
    with caplog.at_level(logging.WARNING, logger="cardshoe.drivers.protocol.framing"):
        assert decoder.feed(b"\x55" * (MAX_ENCODED + 1)) == []
        assert decoder.feed(b"\x55" * 100) == []
        assert decoder.feed(b"\x00" + encode_frame(b"ok")) == [b"ok"]
    assert decoder.counters.oversize == 1
    assert decoder.counters.bytes_discarded == MAX_ENCODED + 1 + 100
    assert "oversize #1" in caplog.text


def test_bad_frames_are_counted_by_kind_and_logged(caplog) -> None:
    decoder = FrameDecoder()
    good = encode_frame(b"hello")
    bad_crc = bytearray(good)
    bad_crc[2] ^= 0x01
    with caplog.at_level(logging.WARNING, logger="cardshoe.drivers.protocol.framing"):
        decoder.feed(bytes(bad_crc))
        decoder.feed(b"\x09\x01\x00")
        decoder.feed(b"\x02\x01\x00")
        decoder.feed(b"\x00\x00")
    assert decoder.counters.crc_errors == 2
    assert decoder.counters.cobs_errors == 1
    assert decoder.counters.frames_ok == 0
    assert "CRC mismatch" in caplog.text
    assert "bad COBS" in caplog.text
    assert "too short to hold a CRC" in caplog.text


def test_reset_drops_a_partial_frame() -> None:
    decoder = FrameDecoder()
    frame = encode_frame(b"abc")
    assert decoder.feed(frame[:3]) == []
    decoder.reset()
    assert decoder.counters.bytes_discarded == 3
    assert decoder.feed(frame) == [b"abc"]


@pytest.mark.parametrize("size", [0, MAX_PAYLOAD + 1])
def test_payloads_outside_the_limits_are_refused(size: int) -> None:
    with pytest.raises(FrameTooLarge):
        encode_frame(bytes(size))
