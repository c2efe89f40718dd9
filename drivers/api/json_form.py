"""The neutral events as JSON: the form the journal stores (record version 2) and the
monitors print.

One rule per value type, driven by each dataclass's field types, so a field added
to the vocabulary needs no code here: enums by value, flags as a list of lower-case
names, a card as its text ("7H", "AS#00BC614E/3"), bytes as hex, a tuple as a list,
a DeviceIdentity as an object.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping
from enum import Enum, Flag
from functools import cache, partial
from operator import attrgetter
from typing import Any

from cardshoe.drivers.api import events
from cardshoe.drivers.api.events import CardId, DeviceIdentity

JsonValue = Any


def to_json(value: Any) -> JsonValue:
    """A vocabulary value (an event, an identity, or one of their fields) as JSON."""
    encode = _ENCODERS.get(type(value))
    if encode is None:
        encode = _ENCODERS[type(value)] = _encoder(type(value))
    return encode(value)


Encoder = Callable[[Any], JsonValue]
_ENCODERS: dict[type, Encoder] = {}
"""Each type's rule, chosen once: the journal encodes every card the device reports."""
_AS_IS = frozenset({str, int, float, bool, type(None)})


def _encoder(cls: type) -> Encoder:
    """The rule for values of type cls, in the order the rules are tried."""
    if issubclass(cls, Flag):
        return partial(_flag_names, cls)
    if issubclass(cls, Enum):
        return attrgetter("value")
    if issubclass(cls, CardId):
        return str
    if issubclass(cls, bytes):
        return bytes.hex
    if issubclass(cls, tuple | list):
        return _items
    if dataclasses.is_dataclass(cls):
        return partial(_fields, tuple(item.name for item in dataclasses.fields(cls)))
    return _as_is


def _flag_names(cls: type[Flag], value: Flag) -> JsonValue:
    return [str(member.name).lower() for member in cls if member in value]


def _items(value: tuple[Any, ...] | list[Any]) -> JsonValue:
    return [to_json(item) for item in value]


def _fields(names: tuple[str, ...], value: Any) -> JsonValue:
    found = {}
    for name in names:
        item = getattr(value, name)
        found[name] = item if type(item) in _AS_IS else to_json(item)
    return found


def _as_is(value: Any) -> JsonValue:
    return value


def from_json(cls: type, data: Mapping[str, JsonValue]) -> Any:
    """The dataclass cls from its to_json form; ValueError/KeyError/TypeError when malformed."""
    hints = _hints(cls)
    return cls(**{name: _read(hints[name], value) for name, value in data.items()})


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls, vars(events))


def _read(hint: Any, value: JsonValue) -> Any:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None:
            return None
        (inner,) = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        return _read(inner, value)
    if origin is tuple:
        (inner, _ellipsis) = typing.get_args(hint)
        return tuple(_read(inner, item) for item in value)
    if isinstance(hint, type):
        if issubclass(hint, Flag):
            flags = hint(0)
            for name in value:
                flags |= hint[name.upper()]
            return flags
        if issubclass(hint, Enum):
            return hint(value)
        if hint is CardId:
            return CardId.parse(value)
        if hint is bytes:
            return bytes.fromhex(value)
        if hint is DeviceIdentity:
            return from_json(DeviceIdentity, value)
    return value
