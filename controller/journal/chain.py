"""The hash chain that makes the journal tamper-evident, as pure functions on values.

Each record's hash is SHA-256 over the previous record's hash (32 raw bytes)
followed by the canonical bytes of the record: the UTF-8 canonical JSON
array of its HASHED_FIELDS in that order, with the payload as its stored
text. The record id is inside the hash, so a record moved to another place,
or a gap left by a deleted one, breaks the chain. docs/journal.md gives the
same recipe for auditors who check a journal with their own tools.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from json.encoder import encode_basestring

from cardshoe.controller.canonical import canonical_json

GENESIS_HASH = "0" * 64
"""The prev_hash of record 1: nothing comes before it."""

HASHED_FIELDS = (
    "id",
    "time_ns",
    "table_id",
    "shoe_id",
    "round_no",
    "device_serial",
    "device_seq",
    "kind",
    "payload",
)
"""A record's fields that its hash covers, in hash order; the journal stores them as
columns in this order, followed by prev_hash and hash, so one tuple serves the insert,
the hash and verify."""

LINK_FIELDS = ("prev_hash", "hash")
"""The chain's own columns, after the hashed ones."""

RECORD_COLUMNS = HASHED_FIELDS + LINK_FIELDS
"""Every column of a stored record, in table order."""


def record_hash(prev_hash: str, values: Sequence[object]) -> str:
    """The hash a record must carry, given the hash of the record before it.

    values are the record's HASHED_FIELDS in order, the payload as its stored JSON text.
    """
    if len(values) != len(HASHED_FIELDS):
        raise ValueError(f"a record hash covers {len(HASHED_FIELDS)} fields, not {len(values)}")
    return body_hash(prev_hash, _canonical_fields(values))


def body_hash(prev_hash: str, body: str) -> str:
    """The hash of a record whose canonical JSON array of HASHED_FIELDS is `body`."""
    return hashlib.sha256(bytes.fromhex(prev_hash) + body.encode("utf-8")).hexdigest()


def _canonical_fields(values: Sequence[object]) -> str:
    """canonical_json(list(values)), spelled out for the field types a record has (text,
    integers, NULL) at half the cost: verify hashes every record of a journal again.
    Any other value takes canonical_json itself, so the text is always the same."""
    parts = []
    for value in values:
        kind = type(value)
        if kind is str:
            parts.append(encode_basestring(value))  # type: ignore[arg-type]
        elif kind is int:
            parts.append(int.__repr__(value))
        elif value is None:
            parts.append("null")
        else:
            return canonical_json(list(values))
    return "[" + ",".join(parts) + "]"
