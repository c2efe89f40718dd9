"""The hash chain that makes the journal tamper-evident, as pure functions on values.

Each record's hash is SHA-256 over the previous record's hash (32 raw bytes)
followed by the canonical bytes of the record: the UTF-8 canonical JSON
array of its fields in a fixed order, with the payload as its stored text.
The record id is inside the hash, so a record moved to another place, or a
gap left by a deleted one, breaks the chain. docs/journal.md gives the same
recipe for auditors who check a journal with their own tools.
"""

from __future__ import annotations

import hashlib

from cardshoe.controller.canonical import canonical_json

GENESIS_HASH = "0" * 64
"""The prev_hash of record 1: nothing comes before it."""


def record_hash(
    prev_hash: str,
    *,
    record_id: int,
    time_ns: int,
    table_id: str,
    shoe_id: str | None,
    round_no: int | None,
    device_serial: str | None,
    device_seq: int | None,
    kind: str,
    payload_json: str,
) -> str:
    """The hash a record must carry, given the hash of the record before it."""
    fields = [
        record_id,
        time_ns,
        table_id,
        shoe_id,
        round_no,
        device_serial,
        device_seq,
        kind,
        payload_json,
    ]
    body = canonical_json(fields).encode("utf-8")
    return hashlib.sha256(bytes.fromhex(prev_hash) + body).hexdigest()
