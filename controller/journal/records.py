"""What the journal hands out: a record with its payload decoded, and a chain anchor.

Separate from the store because the readers of the journal (the uplink, the scoreboard, the
pit, the floor's messages) need these values and nothing of the SQLite file behind them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from cardshoe.controller.journal.chain import RECORD_COLUMNS
from cardshoe.controller.journal.errors import JournalError
from cardshoe.controller.timestamps import utc_timestamp
from cardshoe.drivers.text_input import whole_number

_SHA256_PATTERN = re.compile(r"^[0-9a-f]{64}$")

RECORD_FIELDS = (RECORD_COLUMNS[0], "time_utc", *RECORD_COLUMNS[1:])
"""The fields of an exported record, in order: the columns plus the readable time."""


@dataclass(frozen=True)
class Record:
    """One journal record, its payload decoded."""

    id: int
    time_ns: int
    """Wall-clock time of the append, nanoseconds since the Unix epoch (UTC)."""
    table_id: str
    shoe_id: str | None
    round_no: int | None
    device_serial: str | None
    device_seq: int | None
    kind: str
    payload: dict[str, Any]
    prev_hash: str
    hash: str

    @property
    def time_utc(self) -> str:
        """The time as ISO 8601 UTC with microseconds, e.g. 2025-01-31T20:15:02.123456Z."""
        seconds, nanoseconds = divmod(self.time_ns, 1_000_000_000)
        moment = datetime.fromtimestamp(seconds, UTC).replace(microsecond=nanoseconds // 1000)
        return utc_timestamp(moment)

    def as_dict(self) -> dict[str, Any]:
        """Every column plus the readable time, for JSON and CSV export."""
        return {name: getattr(self, name) for name in RECORD_FIELDS}


@dataclass(frozen=True)
class ChainAnchor:
    """A record id and its hash, written down outside the journal, as text ID:HASH.

    The chain has no secret key, so whoever can write the file can rewrite
    it whole; a hash kept elsewhere (shift report, floor system) shows that.
    """

    record_id: int
    hash: str

    def __str__(self) -> str:
        return f"{self.record_id}:{self.hash}"

    @classmethod
    def parse(cls, text: str) -> ChainAnchor:
        id_text, _, digest = text.strip().partition(":")
        digest = digest.lower()
        record_id = whole_number(id_text)
        if not record_id or not _SHA256_PATTERN.match(digest):
            raise JournalError(
                f"anchor {text!r} is not ID:HASH (a record id, a colon and 64 hex digits)"
            )
        return cls(record_id, digest)
