"""The payloads of the floor's MQTT messages: JSON objects, one dataclass each.

An events message carries journal records whole (every hashed field, its
hash and the previous record's hash), so the floor can recompute the hash
with the journal's own recipe and needs nothing else from the table. The
uplink sends a JSON array of up to BATCH_RECORDS records (BATCH_BYTES at
most) in one message, so one PUBACK covers many records; a message holding
one record as a bare object (what uplinks before the array sent) is still
read.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, replace
from functools import cached_property
from typing import Any

from cardshoe.controller.canonical import canonical_json
from cardshoe.controller.journal.chain import HASHED_FIELDS, record_hash
from cardshoe.controller.journal.records import ChainAnchor, Record
from cardshoe.controller.journal.signing import TableKey


class MessageError(ValueError):
    """A message that is not what its topic promises; the floor raises an alarm, never a crash.

    record_id is the record the message claims to carry, when it got that far.
    """

    def __init__(self, reason: str, record_id: int | None = None) -> None:
        super().__init__(reason)
        self.record_id = record_id


MAX_NESTING = 64
"""How deep a message's JSON may nest: far past any journal payload, and far from the depth
where Python's recursion (json, copies, hashing) gives out."""

BIGINT = (-(2**63), 2**63 - 1)
"""The range of PostgreSQL's bigint, where the floor keeps ids, times and sequences."""
INTEGER_RANGES = {"round_no": (-(2**31), 2**31 - 1)}
"""Fields the floor keeps in a PostgreSQL integer, not a bigint."""


def _refuse_constant(name: str) -> Any:
    raise MessageError(f"holds {name}, which is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise MessageError(f"holds the number {text[:20]}, too large for a float")
    return value


def _decode(body: bytes) -> dict[str, Any]:
    """A JSON object, or MessageError for anything a peer could send instead."""
    value = _decode_json(body)
    if not isinstance(value, dict):
        raise MessageError("not a JSON object")
    return value


def _decode_json(body: bytes) -> Any:
    """Any JSON value, or MessageError for anything a peer could send instead.

    Text that is not UTF-8, nesting past MAX_NESTING (or too deep for the
    parser), an integer longer than Python converts, NaN or infinity are
    refused here, where they are one line, not a crash.
    """
    try:
        # Decoded here, strictly: json.loads would let UTF-8-encoded surrogates through.
        text = body.decode("utf-8")
        value = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except MessageError:
        raise
    except RecursionError:
        raise MessageError("not JSON the floor can read: nested too deep") from None
    except UnicodeDecodeError:
        raise MessageError("not JSON: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise MessageError(f"not JSON: {exc}") from None
    except ValueError:  # an integer past Python's digit limit
        raise MessageError("not JSON the floor can read: an integer too long") from None
    if body.count(b"[") + body.count(b"{") > MAX_NESTING:
        _check_nesting(value)
    return value


def _check_nesting(value: Any) -> None:
    """Walked a level at a time with lists, not recursion, so that the check itself cannot run
    out of stack.

    Only containers go to the next level: a batch of records holds thousands of
    scalars and a few levels of objects, and the walk is paid for every message
    (a plain loop, at half the cost of a generator pushing each container with its depth).
    """
    level, depth = [value], 1
    while level:
        if depth > MAX_NESTING:
            raise MessageError(f"nested deeper than {MAX_NESTING} levels")
        below = []
        for item in level:
            for child in item.values() if type(item) is dict else item:
                if type(child) is dict or type(child) is list:
                    below.append(child)
        level, depth = below, depth + 1


def _check_text(body: bytes, value: Any, record_id: int | None = None) -> None:
    """Refuse text PostgreSQL cannot hold: a NUL character, or a lone surrogate (not Unicode).

    Both can only arrive as a \\u escape, so a body without one is not walked.
    """
    if b"\\u" not in body:
        return
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
        elif isinstance(item, str):
            if "\x00" in item:
                raise MessageError("holds a NUL character, which the floor cannot store", record_id)
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                reason = "holds a lone surrogate: text that is not Unicode"
                raise MessageError(reason, record_id) from None


def _typed(data: dict[str, Any], fields: Fields, record_id: int | None = None) -> dict[str, Any]:
    """The named fields present in data, each of one of its exact JSON types and in range."""
    values = {}
    for name, kinds in fields:
        if name not in data:
            continue
        value = data[name]
        kind = type(value)
        if kind not in kinds:  # exact types: a bool is no record id, 5 is no bool
            raise MessageError(f"field {name!r} is of the wrong type", record_id)
        if kind is int:
            low, high = INTEGER_RANGES.get(name, BIGINT)
            if not low <= value <= high:
                raise MessageError(f"field {name!r} is out of range", record_id)
        values[name] = value
    return values


def _complete(data: dict[str, Any], fields: Fields, record_id: int | None = None) -> dict[str, Any]:
    """Every one of fields, typed: a nullable one left out is None, any other is refused."""
    values = _typed(data, fields, record_id)
    if len(values) == len(fields):  # the usual record: every field there, nothing to fill
        return values
    for name, kinds in fields:
        if name not in values:
            if type(None) not in kinds:
                raise MessageError(f"field {name!r} is missing", record_id)
            values[name] = None
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
    signature: str | None = None
    """The table's Ed25519 signature of hash (journal/signing.py); None from a table without
    a signing key, or on a version 1 message."""

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

    def signed_with(self, key: TableKey) -> EventMessage:
        return replace(self, signature=key.sign(self.hash))

    def to_json(self) -> dict[str, Any]:
        """The record's fields by name: the values themselves, not asdict's deep copies."""
        return {name: getattr(self, name) for name in _EVENT_NAMES}

    def encode(self) -> bytes:
        return canonical_json({"v": EVENT_FORMAT, **self.to_json()}).encode("utf-8")

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EventMessage:
        """The record one JSON object holds, typed and in range; decode_events reads a body."""
        claimed = data.get("record_id")
        record_id = claimed if type(claimed) is int else None
        fields = _complete(data, _EVENT_FIELDS, record_id)
        if fields["record_id"] < 1:
            raise MessageError("field 'record_id' is out of range", record_id)
        version = data.get("v", 1)
        if version not in (1, EVENT_FORMAT) or type(version) is not int:
            raise MessageError(
                f"events message format {str(version)[:20]!r} is not known to this floor: "
                "upgrade cardshoe on the floor",
                record_id,
            )
        if version == EVENT_FORMAT:
            fields.update(_typed(data, (("signature", _TEXT + _NONE),), record_id))
        return cls(**fields)

    @cached_property
    def payload_json(self) -> str:
        """The payload as the journal stored and hashed it (canonical JSON)."""
        return canonical_json(self.payload)

    def hashed_values(self) -> tuple[object, ...]:
        """The record's fields in the journal's hash order (chain.HASHED_FIELDS)."""
        return tuple(
            self.payload_json if name == "payload" else getattr(self, _HASHED_ATTRIBUTES[name])
            for name in HASHED_FIELDS
        )

    def hash_matches(self) -> bool:
        """Whether the record's own fields hash, after prev_hash, to the hash it carries."""
        try:
            computed = record_hash(self.prev_hash, self.hashed_values())
        except ValueError:  # a prev_hash that is not hex
            return False
        return computed == self.hash


EVENT_FORMAT = 2
"""The events message's format, its "v": 2 adds the table's signature; 1 had no "v"."""

Fields = tuple[tuple[str, tuple[type, ...]], ...]
_TEXT, _NUMBER, _NONE = (str,), (int,), (type(None),)
_EVENT_FIELDS: Fields = (
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
_EVENT_NAMES = (*(name for name, _ in _EVENT_FIELDS), "signature")
"""Every field of an EventMessage, as its JSON object names them."""
_HASHED_ATTRIBUTES = {name: name for name in HASHED_FIELDS} | {"id": "record_id"}
"""Each of the journal's hashed fields as EventMessage's attribute (the payload aside)."""

BATCH_RECORDS = 200
"""Records an events message holds at most: one PUBACK for up to this many."""
BATCH_BYTES = 128 * 1024
"""An events message's body at most, in bytes; one larger record still goes alone."""


def event_bodies(messages: Iterable[EventMessage]) -> Iterator[tuple[EventMessage, bytes]]:
    """Consecutive records packed into events messages: (the last record in it, its body).

    Each body is a JSON array of at most BATCH_RECORDS records and BATCH_BYTES
    bytes; a record larger than that alone goes as a bare object.
    """
    batch: list[bytes] = []
    size = 2  # the array's brackets
    last: EventMessage | None = None
    for message in messages:
        body = message.encode()
        if batch and (len(batch) == BATCH_RECORDS or size + 1 + len(body) > BATCH_BYTES):
            assert last is not None
            yield last, b"[" + b",".join(batch) + b"]"
            batch, size = [], 2
        if len(body) + 2 > BATCH_BYTES:
            yield message, body
            continue
        batch.append(body)
        size += len(body) + 1
        last = message
    if batch:
        assert last is not None
        yield last, b"[" + b",".join(batch) + b"]"


def decode_events(body: bytes) -> list[EventMessage]:
    """The records of one events message: an array of them, or one bare (older uplinks).

    The message is refused whole (MessageError) when it is not records, holds
    none or more than BATCH_RECORDS, or has one that is not a record: the
    floor quarantines it as it does any malformed message.
    """
    if len(body) > BATCH_BYTES and body.lstrip()[:1] == b"[":
        raise MessageError(f"an array of records larger than {BATCH_BYTES:,} bytes")
    data = _decode_json(body)
    if isinstance(data, dict):
        message = EventMessage.from_json(data)
        _check_text(body, data, message.record_id)
        return [message]
    if not isinstance(data, list):
        raise MessageError("neither a record nor an array of records")
    if not 1 <= len(data) <= BATCH_RECORDS:
        raise MessageError(f"an array of {len(data)} records, not 1 to {BATCH_RECORDS}")
    messages = []
    for number, item in enumerate(data, 1):
        if not isinstance(item, dict):
            raise MessageError(f"an array whose item {number} is not a record")
        messages.append(EventMessage.from_json(item))
    _check_text(body, data)
    return messages


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
        fields = _complete(_decode(body), _ANCHOR_FIELDS)
        _check_text(body, fields)
        return cls(**fields)


_ANCHOR_FIELDS: Fields = (("record_id", _NUMBER), ("hash", _TEXT))


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
        fields = _typed(data, _STATUS_FIELDS)
        if "online" not in fields or "table_id" not in fields:
            raise MessageError("field 'online' or 'table_id' is missing")
        _check_text(body, fields)
        return cls(**fields)


_STATUS_FIELDS: Fields = (
    ("online", (bool,)),
    ("table_id", _TEXT),
    ("version", _TEXT + _NONE),
    ("firmware", _TEXT + _NONE),
    ("fingerprint", _TEXT + _NONE),
    ("head_id", _NUMBER),
    ("head_hash", _TEXT + _NONE),
    ("head_time_ns", _NUMBER + _NONE),
    ("acked_id", _NUMBER),
    ("anchor_id", _NUMBER),
)
"""StatusMessage's fields with the JSON types each may hold; all but the first two may be left
out (an offline last will carries only those)."""


@dataclass(frozen=True)
class AuthenticateRequest:
    """The floor's fresh seed for a table's software (shoectl floor authenticate)."""

    seed: str
    """Hex digits, as `shoectl authenticate --seed` takes them."""

    def encode(self) -> bytes:
        return canonical_json(asdict(self)).encode("utf-8")

    @classmethod
    def decode(cls, body: bytes) -> AuthenticateRequest:
        fields = _complete(_decode(body), (("seed", _TEXT),))
        _check_text(body, fields)
        return cls(**fields)


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
        fields = _complete(_decode(body), _ANSWER_FIELDS)
        _check_text(body, fields)
        return cls(**fields)


_ANSWER_FIELDS: Fields = (
    ("table_id", _TEXT),
    ("seed", _TEXT),
    ("digest", _TEXT + _NONE),
    ("version", _TEXT + _NONE),
    ("files", _NUMBER + _NONE),
    ("error", _TEXT + _NONE),
)
"""AuthenticationAnswer's fields, with the JSON types each may hold."""
