"""Checking the journal: SQLite's integrity check, the hash chain walked record by record
against the chain head and an anchor written down elsewhere, and the schema as its steps make
it.

Separate from the store because verify only reads, and reads everything: `shoectl journal
verify` walks the whole chain, the service's start-up check the part since the last one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cardshoe.controller.journal.chain import (
    GENESIS_HASH,
    HASHED_FIELDS,
    RECORD_COLUMNS,
    body_hash,
    record_hash,
)
from cardshoe.controller.journal.connection import connect, roll_back
from cardshoe.controller.journal.errors import JournalError, guarded
from cardshoe.controller.journal.prune_checkpoint import read_checkpoint
from cardshoe.controller.journal.records import ChainAnchor
from cardshoe.controller.journal.schema import expected_schema

_HASHED = len(HASHED_FIELDS)
_HASH = len(RECORD_COLUMNS) - 1
_BODY = len(RECORD_COLUMNS)
_WALK_COLUMNS = f"{', '.join(RECORD_COLUMNS)}, json_array({', '.join(HASHED_FIELDS)})"
"""What verify reads of each record: its columns, then SQLite's JSON array of the hashed
ones, which is the canonical JSON the hash covers for any record the journal wrote (text,
integers and NULL spelled alike), so the walk need not build it in Python."""

_UNDECODABLE = "Could not decode to UTF-8"
"""How sqlite3 says a text value is not UTF-8 (an OperationalError)."""


@dataclass(frozen=True)
class VerifyResult:
    """The outcome of walking the whole chain."""

    ok: bool
    records: int
    """Records checked (all of them when ok)."""
    head_hash: str
    """Hash of the last good record."""
    first_bad_id: int | None = None
    reason: str | None = None
    last_id: int = 0
    """The id of the last record (after a prune, more than records)."""

    @property
    def anchor(self) -> ChainAnchor | None:
        """The last record and its hash, to write down when the journal verified."""
        return ChainAnchor(self.last_id, self.head_hash) if self.ok and self.records else None


class _NotUtf8(Exception):
    """Some text of the journal is not UTF-8: verify reads it again, leniently."""


def _lenient_text(data: bytes) -> str:
    """Text as verify reads it: bytes that are not UTF-8 make the record's hash fail,
    which names it, instead of an exception that names nothing."""
    return data.decode("utf-8", "replace")


def _damaged(
    record_id: int | None, reason: str, count: int = 0, head_hash: str = GENESIS_HASH
) -> VerifyResult:
    return VerifyResult(False, count, head_hash, record_id, reason)


def in_snapshot(
    connection: sqlite3.Connection, path: Path, check: Callable[[], VerifyResult]
) -> VerifyResult:
    """check() in one read snapshot. Text is read as str, and only when some text is not
    UTF-8 (an edit) is the check run again with it replaced, so that the record's hash
    fails and names it: a factory of our own on every value halves verify's speed."""
    try:
        for factory in (str, _lenient_text):
            connection.text_factory = factory
            guarded(path, "reading the journal", connection.execute, "BEGIN")
            try:
                return check()
            except _NotUtf8:
                continue
            except sqlite3.DatabaseError as exc:
                if factory is str and _UNDECODABLE in str(exc):
                    continue
                return _damaged(None, f"SQLite cannot read the journal: {exc}")
            finally:
                roll_back(connection)
        raise AssertionError("text read leniently is always UTF-8")
    finally:
        connection.text_factory = str


def integrity(path: Path) -> VerifyResult | None:
    """SQLite's own check of pages and indexes, on a connection of its own: None when it finds
    nothing wrong."""
    try:
        connection = connect(path, "ro")
    except JournalError as exc:
        return _damaged(None, f"SQLite cannot read the database: {exc}")
    try:
        rows = connection.execute("PRAGMA integrity_check(5)").fetchall()
    except sqlite3.DatabaseError as exc:
        return _damaged(None, f"SQLite cannot read the database: {exc}")
    finally:
        connection.close()
    messages = [str(row[0]) for row in rows]
    if messages == ["ok"]:
        return None
    return _damaged(None, f"SQLite's integrity check fails: {'; '.join(messages)}")


def check_since_last_start(connection: sqlite3.Connection) -> VerifyResult:
    """The schema, and the chain from the anchor the last check recorded to the head."""
    damaged = _schema_problem(connection)
    if damaged is not None:
        return damaged
    checked = _checked_anchor(connection)
    pruned = read_checkpoint(connection)
    if checked is not None and pruned is not None and checked.record_id <= pruned.record_id:
        checked = None  # pruned since: what remains is walked from the prune checkpoint
    return walk(connection, checked, checked)


def _schema_problem(connection: sqlite3.Connection) -> VerifyResult | None:
    """The tables and indexes as the schema steps make them, or what differs: at start-up
    in place of SQLite's integrity check, which reads every page of the journal and so
    grew with it. The walk from the anchor reads the pages written since."""
    rows = connection.execute(
        "SELECT type, name, sql FROM sqlite_schema WHERE sql IS NOT NULL"
    ).fetchall()
    found = {(kind, name, " ".join(sql.split())) for kind, name, sql in rows}
    pruned = any(name == "prune_checkpoint" for _, name, _ in found)
    differ = sorted({name for _, name, _ in found ^ expected_schema(pruned)})
    if not differ:
        return None
    return _damaged(None, f"the schema is not the journal's: {', '.join(differ)} differ from it")


def _checked_anchor(connection: sqlite3.Connection) -> ChainAnchor | None:
    try:
        row = connection.execute("SELECT record_id, hash FROM checked_anchor").fetchone()
    except sqlite3.DatabaseError:
        return None
    return None if row is None or row[0] == 0 else ChainAnchor(row[0], row[1])


def walk(
    connection: sqlite3.Connection, start: ChainAnchor | None, anchor: ChainAnchor | None
) -> VerifyResult:
    """The chain from start (or record 1) to the head, and the head itself.

    The walk begins at start's own record, whose recomputed hash must still be
    start's (the start-up check passes start as the anchor too).
    """
    begun = _walk_start(connection, start, anchor)
    if isinstance(begun, VerifyResult):
        return begun
    expected_id, previous_hash, count, anchor = begun
    rows = connection.execute(
        f"SELECT {_WALK_COLUMNS} FROM records WHERE id >= ? ORDER BY id", (expected_id,)
    )
    try:
        # Iterating, not fetchone() per row: the walk runs once per record of the journal.
        for row in rows:
            record_id, stored_hash = row[0], row[_HASH]
            problem = _chain_problem(row, expected_id, previous_hash)
            if problem is None and _misses_anchor(anchor, record_id, stored_hash):
                problem = (
                    "its hash is not the one written down in the anchor: "
                    "the journal was rewritten from this record or earlier"
                )
            if problem is not None:
                return VerifyResult(False, count, previous_hash, record_id, problem)
            expected_id, previous_hash, count = record_id + 1, stored_hash, count + 1
    except sqlite3.DatabaseError as exc:
        # Reading the row after the last good one failed: that record is named.
        if connection.text_factory is str and _UNDECODABLE in str(exc):
            raise _NotUtf8 from exc
        return _damaged(expected_id, f"SQLite cannot read it: {exc}", count, previous_hash)
    last_id = expected_id - 1
    return _head_problem(connection, last_id, previous_hash, count, anchor) or VerifyResult(
        True, count, previous_hash, last_id=last_id
    )


def _walk_start(
    connection: sqlite3.Connection, start: ChainAnchor | None, anchor: ChainAnchor | None
) -> VerifyResult | tuple[int, str, int, ChainAnchor | None]:
    """Where the walk begins (record 1, after the prune checkpoint, or at start): the id, the
    hash before it, the records counted before it, and the anchor still to meet on the way."""
    expected_id, previous_hash, count = 1, GENESIS_HASH, 0
    pruned = read_checkpoint(connection)
    if pruned is not None:
        expected_id, previous_hash = pruned.record_id + 1, pruned.hash
        if anchor is not None and anchor.record_id == pruned.record_id:
            if anchor.hash != pruned.hash:
                return VerifyResult(
                    False,
                    0,
                    previous_hash,
                    anchor.record_id,
                    "the anchor's hash is not the prune checkpoint's: the journal was rewritten",
                )
            anchor = None
    if start is not None:
        # The records before start are counted from the chain head, not read: counting
        # them read the whole journal at every start. Those records are verify()'s.
        row = connection.execute(
            "SELECT prev_hash, (SELECT record_count FROM chain_head) "
            "- (SELECT count(*) FROM records WHERE id >= ?) FROM records WHERE id = ?",
            (start.record_id, start.record_id),
        ).fetchone()
        if row is None:
            return VerifyResult(
                False,
                0,
                GENESIS_HASH,
                start.record_id,
                "the record the last start-up checked is gone: records were deleted",
            )
        expected_id, previous_hash, count = start.record_id, row[0], row[1] or 0
    return expected_id, previous_hash, count, anchor


def _head_problem(
    connection: sqlite3.Connection,
    last_id: int,
    previous_hash: str,
    count: int,
    anchor: ChainAnchor | None,
) -> VerifyResult | None:
    heads = connection.execute("SELECT record_count, last_id, head_hash FROM chain_head").fetchall()
    if len(heads) != 1:
        return VerifyResult(False, count, previous_hash, None, "the chain head is missing")
    head_count, head_last_id, head_hash = heads[0]
    if head_last_id > last_id:
        return VerifyResult(
            False,
            count,
            previous_hash,
            last_id + 1,
            f"{_id_span(last_id + 1, head_last_id)} missing from the end: "
            f"the chain head ends at record {head_last_id}",
        )
    if head_last_id < last_id:
        return VerifyResult(
            False,
            count,
            previous_hash,
            head_last_id + 1,
            f"the chain head ends at record {head_last_id}: "
            "records after it were added outside the journal",
        )
    if head_hash != previous_hash or head_count != count:
        return VerifyResult(
            False,
            count,
            previous_hash,
            last_id,
            "does not match the chain head's hash and count: the end was rewritten",
        )
    if anchor and anchor.record_id > last_id:
        return VerifyResult(
            False,
            count,
            previous_hash,
            anchor.record_id,
            "the anchor's record is no longer in the journal: the end was cut off",
        )
    return None


def _chain_problem(row: tuple[Any, ...], expected_id: int, previous_hash: str) -> str | None:
    """Why this row breaks the chain, or None when it carries on from previous_hash."""
    record_id, prev = row[0], row[_HASHED]
    if record_id != expected_id:
        return f"{_id_span(expected_id, record_id - 1)} missing before it"
    if prev != previous_hash:
        return (
            f"its prev_hash does not link to record {record_id - 1}: "
            "records were moved, inserted or replaced"
        )
    try:
        if body_hash(previous_hash, row[_BODY]) == row[_HASH]:
            return None
        # SQLite's text is not the canonical one for this record: the record decides.
        computed = record_hash(previous_hash, row[:_HASHED])
    except (TypeError, ValueError):
        return "a field holds a value of the wrong type: the record was edited"
    if computed != row[_HASH]:
        return "its contents do not match its hash: the record was edited"
    return None


def _misses_anchor(anchor: ChainAnchor | None, record_id: int, stored_hash: str) -> bool:
    return anchor is not None and anchor.record_id == record_id and anchor.hash != stored_hash


def _id_span(first: int, last: int) -> str:
    return f"record {first} is" if first == last else f"records {first}-{last} are"
