"""The payloads of the floor's MQTT messages: JSON objects, one dataclass each.

An events message carries a journal record whole (every hashed field, its
hash and the previous record's hash), so the floor can recompute the hash
with the journal's own recipe and needs nothing else from the table.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from functools import cached_property
from typing import Any

from cardshoe.controller.canonical import canonical_json
from cardshoe.controller.journal.chain import HASHED_FIELDS, record_hash
from cardshoe.controller.journal.store import ChainAnchor, Record


class MessageError(ValueError):
    """A message that is not what its topic promises; the floor raises an alarm, never a crash."""


def _decode(body: bytes) -> dict[str, Any]:
    try:
        value = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise MessageError(f"not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise MessageError("not a JSON object")
    return value


def _field(data: dict[str, Any], name: str, kinds: tuple[type, ...]) -> Any:
    value = data.get(name)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise MessageError(f"field {name!r} is missing or of the wrong type")
    return value


def _exact_fields(
    data: dict[str, Any], fields: tuple[tuple[str, tuple[type, ...]], ...]
) -> list[Any]:
    """The values of fields in order, each of exactly one of its JSON types (a bool is no id)."""
    values: list[Any] = [data.get(name) for name, _ in fields]
    for (name, kinds), value in zip(fields, values, strict=True):
        if type(value) not in kinds:
            raise MessageError(f"field {name!r} is missing or of the wrong type")
    return values


@dataclass(frozen=True)
class EventMessage:
    """One journal record on the wire."""

    table_id: str
    record_id: int
    time_ns: int
    shoe_id: str | None
    round_no: int | None
    device_serial: str | None
    device_seq: int | None
    kind: str
    payload: dict[str, Any]
    prev_hash: str
    hash: str

    @classmethod
    def from_record(cls, record: Record) -> EventMessage:
        return cls(
            table_id=record.table_id,
            record_id=record.id,
            time_ns=record.time_ns,
            shoe_id=record.shoe_id,
            round_no=record.round_no,
            device_serial=record.device_serial,
            device_seq=record.device_seq,
            kind=record.kind,
            payload=record.payload,
            prev_hash=record.prev_hash,
            hash=record.hash,
        )

    def encode(self) -> bytes:
        return canonical_json(asdict(self)).encode("utf-8")

    @classmethod
    def decode(cls, body: bytes) -> EventMessage:
        return cls(*_exact_fields(_decode(body), _EVENT_FIELDS))

    @cached_property
    def payload_json(self) -> str:
        """The payload as the journal stored and hashed it (canonical JSON)."""
        return canonical_json(self.payload)

    def hashed_values(self) -> tuple[object, ...]:
        """The record's fields in the journal's hash order (chain.HASHED_FIELDS)."""
        fields = {**asdict(self), "id": self.record_id, "payload": self.payload_json}
        return tuple(fields[name] for name in HASHED_FIELDS)

    def hash_matches(self) -> bool:
        """Whether the record's own fields hash, after prev_hash, to the hash it carries."""
        try:
            computed = record_hash(self.prev_hash, self.hashed_values())
        except ValueError:  # a prev_hash that is not hex
            return False
        return computed == self.hash


_TEXT, _NUMBER, _NONE = (str,), (int,), (type(None),)
_EVENT_FIELDS: tuple[tuple[str, tuple[type, ...]], ...] = (
    ("table_id", _TEXT),
    ("record_id", _NUMBER),
    ("time_ns", _NUMBER),
    ("shoe_id", _TEXT + _NONE),
    ("round_no", _NUMBER + _NONE),
    ("device_serial", _TEXT + _NONE),
    ("device_seq", _NUMBER + _NONE),
    ("kind", _TEXT),
    ("payload", (dict,)),
    ("prev_hash", _TEXT),
    ("hash", _TEXT),
)
"""EventMessage's fields in order, with the JSON types each may hold."""


@dataclass(frozen=True)
class AnchorMessage:
    """The floor's word: every record up to record_id is stored and chain-verified."""

    record_id: int
    hash: str

    @property
    def anchor(self) -> ChainAnchor:
        return ChainAnchor(self.record_id, self.hash)

    def encode(self) -> bytes:
        return canonical_json(asdict(self)).encode("utf-8")

    @classmethod
    def decode(cls, body: bytes) -> AnchorMessage:
        data = _decode(body)
        return cls(_field(data, "record_id", (int,)), _field(data, "hash", (str,)))


@dataclass(frozen=True)
class StatusMessage:
    """The table's retained status; the broker publishes the offline one as its last will."""

    online: bool
    table_id: str
    version: str | None = None
    firmware: str | None = None
    fingerprint: str | None = None
    head_id: int = 0
    head_hash: str | None = None
    head_time_ns: int | None = None
    acked_id: int = 0
    anchor_id: int = 0

    def encode(self) -> bytes:
        return canonical_json(asdict(self)).encode("utf-8")

    @classmethod
    def decode(cls, body: bytes) -> StatusMessage:
        data = _decode(body)
        known = StatusMessage.__dataclass_fields__
        try:
            return cls(**{key: value for key, value in data.items() if key in known})
        except TypeError as exc:
            raise MessageError(str(exc)) from None


@dataclass(frozen=True)
class AuthenticateRequest:
    """The floor's fresh seed for a table's software (shoectl floor authenticate)."""

    seed: str
    """Hex digits, as `shoectl authenticate --seed` takes them."""

    def encode(self) -> bytes:
        return canonical_json(asdict(self)).encode("utf-8")

    @classmethod
    def decode(cls, body: bytes) -> AuthenticateRequest:
        return cls(_field(_decode(body), "seed", (str,)))


@dataclass(frozen=True)
class AuthenticationAnswer:
    """A table's answer to a seed: the digest of its installed software, or why there is none."""

    table_id: str
    seed: str
    digest: str | None
    version: str | None
    files: int | None = None
    error: str | None = None
    """Set instead of a digest when the seed was not one (the table's one line about it)."""

    def encode(self) -> bytes:
        return canonical_json(asdict(self)).encode("utf-8")

    @classmethod
    def decode(cls, body: bytes) -> AuthenticationAnswer:
        return cls(*_exact_fields(_decode(body), _ANSWER_FIELDS))


_ANSWER_FIELDS: tuple[tuple[str, tuple[type, ...]], ...] = (
    ("table_id", _TEXT),
    ("seed", _TEXT),
    ("digest", _TEXT + _NONE),
    ("version", _TEXT + _NONE),
    ("files", _NUMBER + _NONE),
    ("error", _TEXT + _NONE),
)
"""AuthenticationAnswer's fields in order, with the JSON types each may hold."""
