"""Hypothesis strategies for wire data, shared by the codec tests and the fuzz campaigns."""

from __future__ import annotations

from functools import reduce
from operator import or_

from hypothesis import strategies as st

from cardshoe.drivers.protocol.message_codec import LAYOUTS
from cardshoe.drivers.protocol.wire_fields import (
    Appended,
    Chunk,
    Enum8,
    FieldCodec,
    FixedBytes,
    Flags,
    ListOf,
    OptionalCount,
    Text,
    UInt,
)
from cardshoe.drivers.text_input import CONTROL_CATEGORIES


def values_for(codec: FieldCodec) -> st.SearchStrategy:
    """Every value the codec accepts, derived from the layout table itself."""
    match codec:
        case UInt(minimum=low, maximum=high):
            return st.integers(low, high)
        case Enum8(enum=enum):
            return st.sampled_from(list(enum))
        case Flags(flag=flag):
            return st.sets(st.sampled_from(list(flag))).map(
                lambda members: reduce(or_, members, flag(0))
            )
        case FixedBytes(size=size):
            return st.binary(min_size=size, max_size=size)
        case Chunk(max_bytes=limit):
            return st.binary(min_size=1, max_size=limit)
        case Text(max_bytes=limit):
            printable = st.characters(exclude_categories=("Cs", *CONTROL_CATEGORIES))
            return st.text(printable, max_size=limit).filter(
                lambda text: len(text.encode()) <= limit
            )
        case ListOf(item=item, max_items=limit):
            return st.lists(values_for(item), max_size=limit).map(tuple)
        case OptionalCount():
            return st.none() | st.integers(0, 0xFFFE)
        case Appended(codec=inner):
            return st.none() | values_for(inner)
    raise AssertionError(f"no strategy for {codec!r}")


def messages_of(layout) -> st.SearchStrategy:
    codecs = {layout.tag_field: layout.tag, **dict(layout.body)}
    return st.builds(layout.cls, **{name: values_for(codec) for name, codec in codecs.items()})


any_message = st.one_of([messages_of(layout) for layout in LAYOUTS])


@st.composite
def damaged(draw: st.DrawFn, frame: bytes, other: bytes) -> bytes:
    """The frame after one kind of line damage; `other` is a neighbouring frame to splice."""
    kind = draw(st.sampled_from(["flip", "insert", "delete", "truncate", "splice", "repeat"]))
    position = draw(st.integers(0, len(frame) - 1))
    match kind:
        case "flip":
            bits = draw(st.lists(st.integers(0, 8 * len(frame) - 1), min_size=1, max_size=8))
            return flip_bits(frame, bits)
        case "insert":
            return frame[:position] + draw(st.binary(min_size=1, max_size=40)) + frame[position:]
        case "delete":
            length = draw(st.integers(1, len(frame) - position))
            return frame[:position] + frame[position + length :]
        case "truncate":
            return frame[: max(position, 1)]
        case "splice":
            return frame[: max(position, 1)] + other[draw(st.integers(0, len(other) - 1)) :]
        case _:
            # A receive buffer replayed part of the frame, never its delimiter, ahead of it.
            start = min(position, len(frame) - 2)
            repeated = draw(st.integers(1, len(frame) - 1 - start))
            return frame[:start] + frame[start : start + repeated] + frame


def flip_bits(data: bytes, bits: list[int]) -> bytes:
    flipped = bytearray(data)
    for bit in bits:
        flipped[bit // 8] ^= 1 << (bit % 8)
    return bytes(flipped)
