"""Codecs for the field types that message bodies are built from.

Each message layout in messages.py is a list of (field name, codec) pairs,
so the byte layout is data and one loop encodes or decodes any message.
Every codec is strict: a value outside its range, an undefined enum value or
flag bit, or bad UTF-8 is refused, so each valid message has exactly one
encoding. Each codec also converts its values to and from plain JSON types,
which the worked examples in docs/protocol.md and JSON logs use.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import IntEnum, IntFlag
from functools import reduce
from operator import or_
from typing import Any, Protocol

from cardshoe.drivers.protocol.errors import MalformedMessage
from cardshoe.drivers.text_input import is_control

JsonValue = Any
"""int, str, bool, None or a list of these: what json.dumps accepts."""


class FieldCodec(Protocol):
    def pack(self, value: Any) -> bytes: ...

    def unpack(self, data: bytes, offset: int) -> tuple[Any, int]: ...

    def to_json(self, value: Any) -> JsonValue: ...

    def from_json(self, value: JsonValue) -> Any: ...


def _read(layout: struct.Struct, data: bytes, offset: int) -> tuple[Any, ...]:
    if offset + layout.size > len(data):
        raise MalformedMessage(f"body ends {offset + layout.size - len(data)} byte(s) short")
    return layout.unpack_from(data, offset)


@dataclass(frozen=True)
class UInt:
    """An unsigned little-endian integer limited to minimum..maximum."""

    struct_code: str
    minimum: int = 0
    maximum: int | None = None
    layout: struct.Struct = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        layout = struct.Struct("<" + self.struct_code)
        object.__setattr__(self, "layout", layout)
        if self.maximum is None:
            object.__setattr__(self, "maximum", (1 << (8 * layout.size)) - 1)

    def check(self, value: Any) -> int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise MalformedMessage(f"{value!r} is not an integer")
        if not self.minimum <= value <= self.maximum:  # type: ignore[operator]
            raise MalformedMessage(f"{value} is outside {self.minimum}..{self.maximum}")
        return value

    def pack(self, value: Any) -> bytes:
        return self.layout.pack(self.check(value))

    def unpack(self, data: bytes, offset: int) -> tuple[int, int]:
        (value,) = _read(self.layout, data, offset)
        return self.check(value), offset + self.layout.size

    def to_json(self, value: int) -> JsonValue:
        return value

    def from_json(self, value: JsonValue) -> int:
        return self.check(value)


U8 = UInt("B")
U16 = UInt("H")
U32 = UInt("I")
U64 = UInt("Q")
_KNOWN_COUNT = UInt("H", 0, 0xFFFE)


@dataclass(frozen=True)
class Enum8:
    """One byte holding a member of an IntEnum; undefined values are refused."""

    enum: type[IntEnum]

    def _member(self, value: Any) -> IntEnum:
        try:
            return self.enum(value)
        except ValueError:
            raise MalformedMessage(f"{value!r} is not a {self.enum.__name__}") from None

    def pack(self, value: Any) -> bytes:
        return U8.pack(self._member(value).value)

    def unpack(self, data: bytes, offset: int) -> tuple[IntEnum, int]:
        raw, offset = U8.unpack(data, offset)
        return self._member(raw), offset

    def to_json(self, value: IntEnum) -> JsonValue:
        return self._member(value).name

    def from_json(self, value: JsonValue) -> IntEnum:
        try:
            return self.enum[value]
        except KeyError:
            raise MalformedMessage(f"{value!r} is not a {self.enum.__name__} name") from None


@dataclass(frozen=True)
class Flags:
    """An IntFlag in an unsigned integer; bits no member defines are refused."""

    flag: type[IntFlag]
    width: UInt
    defined: int = field(init=False, repr=False, compare=False)
    """Every bit a member defines, worked out once: every CARD frame's flags are checked."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "defined", reduce(or_, (member.value for member in self.flag), 0))

    def _member(self, value: Any) -> IntFlag:
        raw = self.width.check(value)
        undefined = raw & ~self.defined
        if undefined:
            raise MalformedMessage(f"undefined {self.flag.__name__} bits 0x{undefined:x}")
        return self.flag(raw)

    def pack(self, value: Any) -> bytes:
        return self.width.pack(self._member(value).value)

    def unpack(self, data: bytes, offset: int) -> tuple[IntFlag, int]:
        raw, offset = self.width.unpack(data, offset)
        return self._member(raw), offset

    def to_json(self, value: IntFlag) -> JsonValue:
        return [member.name for member in self.flag if member in self._member(value)]

    def from_json(self, value: JsonValue) -> IntFlag:
        try:
            members = [self.flag[name] for name in value]
        except (KeyError, TypeError):
            raise MalformedMessage(f"{value!r} is not a list of {self.flag.__name__}") from None
        return self.flag(reduce(or_, members, self.flag(0)))


def _from_hex(value: JsonValue, check: Callable[[Any], bytes], what: str) -> bytes:
    """Bytes written as hex in JSON, checked by the codec they are for."""
    try:
        return check(bytes.fromhex(value))
    except (TypeError, ValueError):
        raise MalformedMessage(f"{value!r} is not {what} of hex") from None


@dataclass(frozen=True)
class FixedBytes:
    """Exactly `size` raw bytes (a card code, a SHA-256 hash); JSON as hex."""

    size: int

    def _check(self, value: Any) -> bytes:
        if not isinstance(value, bytes | bytearray) or len(value) != self.size:
            raise MalformedMessage(f"{value!r} is not {self.size} bytes")
        return bytes(value)

    def pack(self, value: Any) -> bytes:
        return self._check(value)

    def unpack(self, data: bytes, offset: int) -> tuple[bytes, int]:
        end = offset + self.size
        if end > len(data):
            raise MalformedMessage(f"body ends {end - len(data)} byte(s) short")
        return bytes(data[offset:end]), end

    def to_json(self, value: bytes) -> JsonValue:
        return self._check(value).hex()

    def from_json(self, value: JsonValue) -> bytes:
        return _from_hex(value, self._check, f"{self.size} bytes")


@dataclass(frozen=True)
class Text:
    """UTF-8 text after a one-byte length, at most max_bytes long, with no control character:
    the device's model, serial and firmware reach a technician's terminal, where an ESC or
    a CSI would be a command."""

    max_bytes: int

    def _check(self, value: Any) -> str:
        if not isinstance(value, str):
            raise MalformedMessage(f"{value!r} is not text")
        try:
            encoded = value.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: bytes that were not UTF-8 (argv)
            raise MalformedMessage(f"text {value!r} is not UTF-8") from None
        if len(encoded) > self.max_bytes:
            raise MalformedMessage(f"{value!r} is longer than {self.max_bytes} UTF-8 bytes")
        if any(map(is_control, value)):
            raise MalformedMessage(f"text {value!r} holds a control character")
        return value

    def pack(self, value: Any) -> bytes:
        encoded = self._check(value).encode("utf-8")
        return U8.pack(len(encoded)) + encoded

    def unpack(self, data: bytes, offset: int) -> tuple[str, int]:
        length, offset = UInt("B", 0, self.max_bytes).unpack(data, offset)
        raw, offset = FixedBytes(length).unpack(data, offset)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise MalformedMessage(f"text {raw.hex()} is not UTF-8") from None
        return self._check(text), offset

    def to_json(self, value: str) -> JsonValue:
        return value

    def from_json(self, value: JsonValue) -> str:
        return self._check(value)


@dataclass(frozen=True)
class Chunk:
    """Raw bytes after a one-byte length, 1..max_bytes of them (a firmware chunk); JSON as hex."""

    max_bytes: int

    def _check(self, value: Any) -> bytes:
        if not isinstance(value, bytes | bytearray) or not 1 <= len(value) <= self.max_bytes:
            raise MalformedMessage(f"{value!r} is not 1..{self.max_bytes} bytes")
        return bytes(value)

    def pack(self, value: Any) -> bytes:
        data = self._check(value)
        return U8.pack(len(data)) + data

    def unpack(self, data: bytes, offset: int) -> tuple[bytes, int]:
        length, offset = UInt("B", 1, self.max_bytes).unpack(data, offset)
        return FixedBytes(length).unpack(data, offset)

    def to_json(self, value: bytes) -> JsonValue:
        return self._check(value).hex()

    def from_json(self, value: JsonValue) -> bytes:
        return _from_hex(value, self._check, f"1..{self.max_bytes} bytes")


@dataclass(frozen=True)
class ListOf:
    """A one-byte count, then that many items; decodes to a tuple."""

    item: FieldCodec
    max_items: int

    def _check(self, value: Any) -> tuple[Any, ...]:
        if not isinstance(value, tuple | list) or len(value) > self.max_items:
            raise MalformedMessage(f"{value!r} is not a list of at most {self.max_items} items")
        return tuple(value)

    def pack(self, value: Any) -> bytes:
        items = self._check(value)
        return U8.pack(len(items)) + b"".join(self.item.pack(item) for item in items)

    def unpack(self, data: bytes, offset: int) -> tuple[tuple[Any, ...], int]:
        count, offset = UInt("B", 0, self.max_items).unpack(data, offset)
        items = []
        for _ in range(count):
            item, offset = self.item.unpack(data, offset)
            items.append(item)
        return tuple(items), offset

    def to_json(self, value: tuple[Any, ...]) -> JsonValue:
        return [self.item.to_json(item) for item in self._check(value)]

    def from_json(self, value: JsonValue) -> tuple[Any, ...]:
        return tuple(self.item.from_json(item) for item in self._check(value))


@dataclass(frozen=True)
class OptionalCount:
    """A u16 count where 0xFFFF means "the device cannot tell" (None)."""

    def pack(self, value: Any) -> bytes:
        return U16.pack(0xFFFF if value is None else _KNOWN_COUNT.check(value))

    def unpack(self, data: bytes, offset: int) -> tuple[int | None, int]:
        raw, offset = U16.unpack(data, offset)
        return (None if raw == 0xFFFF else raw), offset

    def to_json(self, value: int | None) -> JsonValue:
        return value

    def from_json(self, value: JsonValue) -> int | None:
        return None if value is None else _KNOWN_COUNT.check(value)


@dataclass(frozen=True)
class Appended:
    """A field a later minor version appended to a layout: None when the sender left it out.

    Only the last field of a layout may be one. Absent is the one encoding of
    None, so a value is never written as its codec's bytes for "nothing".
    """

    codec: FieldCodec

    def pack(self, value: Any) -> bytes:
        return b"" if value is None else self.codec.pack(value)

    def unpack(self, data: bytes, offset: int) -> tuple[Any, int]:
        if offset == len(data):
            return None, offset
        return self.codec.unpack(data, offset)

    def to_json(self, value: Any) -> JsonValue:
        return None if value is None else self.codec.to_json(value)

    def from_json(self, value: JsonValue) -> Any:
        return None if value is None else self.codec.from_json(value)
