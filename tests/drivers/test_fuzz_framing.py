"""Fuzz campaign for the frame decoder: damaged lines, random splits, and exact bookkeeping.

tests/drivers/test_framing.py checks each kind of damage on its own; this campaign
mixes them on one line, the way a noisy cable or a sender that resets
mid-frame would, and checks three things against what was actually sent:
- no payload comes out that the sender did not put on the line whole
  (every payload sent is unique, so an output names the piece it came from);
- every intact frame that follows a 0x00 comes out: the decoder is back in
  step within one frame of any damage;
- the counters obey the receiver rules of docs/protocol.md exactly: one
  counter per run of bytes between delimiters, and every byte either in an
  accepted frame, counted as discarded, or an uncounted delimiter.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from support.wire_strategies import damaged

from cardshoe.drivers.protocol.framing import (
    DELIMITER,
    MAX_ENCODED,
    MAX_PAYLOAD,
    FrameDecoder,
    encode_frame,
)

INDEX_SIZE = 4
SPLICE_ONLY = 1 << 31
"""Marks the index of a frame that is only ever spliced into another, never sent whole."""
bodies = st.binary(max_size=MAX_PAYLOAD - INDEX_SIZE)


@dataclass(frozen=True)
class Piece:
    """One thing the sender put on the line: a frame (intact or damaged) or garbage."""

    payload: bytes | None
    """The payload the sender meant to send; None for garbage."""
    wire: bytes
    intact: bool
    spliced: bytes | None = None
    """The payload of a frame whose tail was spliced onto this one, which may then show whole."""


def unique_payload(index: int, body: bytes) -> bytes:
    """A payload no other piece of the same line has, so an output names its piece."""
    return index.to_bytes(INDEX_SIZE, "little") + body


@st.composite
def pieces(draw: st.DrawFn, index: int) -> Piece:
    """An intact frame, a damaged one, garbage, babble with no delimiter, or a lone 0x00."""
    payload = unique_payload(index, draw(bodies))
    frame = encode_frame(payload)
    kind = draw(st.sampled_from(["intact", "intact", "damaged", "garbage", "babble", "resync"]))
    match kind:
        case "intact":
            return Piece(payload, frame, intact=True)
        case "damaged":
            other_payload = unique_payload(index | SPLICE_ONLY, draw(bodies))
            wire = draw(damaged(frame, encode_frame(other_payload)))
            return Piece(payload, wire, intact=wire == frame, spliced=other_payload)
        case "garbage":
            return Piece(None, draw(st.binary(min_size=1, max_size=300)), intact=False)
        case "babble":
            length = draw(st.integers(MAX_ENCODED - 3, MAX_ENCODED + 40))
            return Piece(
                None,
                draw(st.binary(min_size=length, max_size=length)).replace(DELIMITER, b"\x55"),
                intact=False,
            )
        case _:
            # docs/protocol.md: a sender that gives up on a frame part-way sends one 0x00.
            return Piece(None, DELIMITER, intact=False)


lines = st.integers(1, 12).flatmap(lambda count: st.tuples(*(pieces(i) for i in range(count))))


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    edges = [0, *sorted({min(cut, len(data)) for cut in cuts}), len(data)]
    return [data[start:end] for start, end in itertools.pairwise(edges)]


def check_bookkeeping(decoder: FrameDecoder, stream: bytes, outputs: list[bytes]) -> None:
    """The counters must be what the receiver rules of docs/protocol.md give for the stream.

    Every non-empty run between delimiters moves exactly one counter; an
    over-long run counts its bytes but not its delimiter; any other rejected
    run counts its bytes and its delimiter; empty runs count nothing. A run
    not yet ended by a delimiter counts only once it is over-long.
    """
    *complete, trailing = stream.split(DELIMITER)
    runs = [run for run in complete if run]
    oversize = [run for run in runs if len(run) > MAX_ENCODED]
    trailing_oversize = len(trailing) > MAX_ENCODED
    accepted_bytes = sum(len(encode_frame(payload)) for payload in outputs)
    discarded = sum(len(run) + (len(run) <= MAX_ENCODED) for run in runs) - accepted_bytes
    counters = decoder.counters
    assert counters.frames_ok == len(outputs)
    assert counters.oversize == len(oversize) + trailing_oversize
    assert counters.crc_errors + counters.cobs_errors == len(runs) - len(oversize) - len(outputs)
    assert counters.bytes_discarded == discarded + (len(trailing) if trailing_oversize else 0)


def check_outputs(line: list[Piece], stream_end: int, outputs: list[bytes]) -> None:
    """Outputs come from sent pieces in order; every intact frame after a 0x00 is among them."""
    by_payload = {
        sent: number
        for number, piece in enumerate(line)
        for sent in (piece.payload, piece.spliced)
        if sent is not None
    }
    numbers = [by_payload.get(payload) for payload in outputs]
    assert None not in numbers, "the decoder yielded a payload nobody sent"
    assert numbers == sorted(set(numbers)), "payloads came out of order or twice"
    start = 0
    for number, piece in enumerate(line):
        end = start + len(piece.wire)
        follows_delimiter = start == 0 or line[number - 1].wire.endswith(DELIMITER)
        if piece.intact and follows_delimiter and end <= stream_end:
            assert number in numbers, f"intact frame {number} after a 0x00 was lost"
        start = end


@settings(max_examples=300, deadline=None)
@given(lines, st.lists(st.integers(0, 3000), max_size=12))
def test_a_damaged_line_yields_only_sent_frames_and_resyncs_within_one(
    line: tuple[Piece, ...], cuts: list[int]
) -> None:
    stream = b"".join(piece.wire for piece in line) + DELIMITER
    decoder = FrameDecoder()
    outputs = [payload for chunk in split(stream, cuts) for payload in decoder.feed(chunk)]
    check_outputs(list(line), len(stream), outputs)
    check_bookkeeping(decoder, stream, outputs)


@settings(max_examples=200, deadline=None)
@given(lines, st.lists(st.integers(0, 3000), max_size=12))
def test_how_the_stream_is_split_changes_nothing(line: tuple[Piece, ...], cuts: list[int]) -> None:
    """USB packets and serial reads split the stream anywhere; the decoder must not care."""
    stream = b"".join(piece.wire for piece in line)
    whole = FrameDecoder()
    at_once = whole.feed(stream)
    chunked = FrameDecoder()
    assert [payload for chunk in split(stream, cuts) for payload in chunked.feed(chunk)] == at_once
    assert chunked.counters == whole.counters


class NoisyLine(RuleBasedStateMachine):
    """A sender puts pieces on the line; the receiver reads whatever prefix has arrived.

    After every step, what the receiver yielded and counted must match the
    bytes delivered so far, however the reads fell.
    """

    def __init__(self) -> None:
        super().__init__()
        self.decoder = FrameDecoder()
        self.line: list[Piece] = []
        self.stream = b""
        self.delivered = 0
        self.outputs: list[bytes] = []

    @rule(data=st.data())
    def send(self, data: st.DataObject) -> None:
        piece = data.draw(pieces(len(self.line)))
        self.line.append(piece)
        self.stream += piece.wire

    @precondition(lambda self: self.delivered < len(self.stream))
    @rule(data=st.data())
    def receive(self, data: st.DataObject) -> None:
        end = data.draw(st.integers(self.delivered + 1, len(self.stream)))
        self.outputs += self.decoder.feed(self.stream[self.delivered : end])
        self.delivered = end

    @invariant()
    def only_sent_frames_and_none_lost_after_a_delimiter(self) -> None:
        check_outputs(self.line, self.delivered, self.outputs)

    @invariant()
    def counters_follow_the_receiver_rules(self) -> None:
        check_bookkeeping(self.decoder, self.stream[: self.delivered], self.outputs)


NoisyLine.TestCase.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)
test_noisy_line = NoisyLine.TestCase
