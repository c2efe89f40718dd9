"""Deleting the oldest records while keeping the chain checkable: the prune checkpoint.

Separate from the store, and from journal/prune.py which decides what may go: this is the
storage side alone, the delete and the last deleted record's hash that verify starts from.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from cardshoe.controller.journal.errors import JournalError
from cardshoe.controller.journal.records import ChainAnchor
from cardshoe.controller.journal.schema import PRUNE_CHECKPOINT_DDL
from cardshoe.controller.journal.transaction import Transaction


def read_checkpoint(connection: sqlite3.Connection) -> ChainAnchor | None:
    """The last record pruned and its hash, or None when nothing was ever pruned."""
    exists = connection.execute(
        "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'prune_checkpoint'"
    ).fetchone()
    if exists is None:
        return None
    row = connection.execute("SELECT record_id, hash FROM prune_checkpoint").fetchone()
    return None if row is None else ChainAnchor(row[0], row[1])


def delete_through(
    connection: sqlite3.Connection, path: Path, transaction: Transaction, record_id: int
) -> int:
    """Delete records 1..record_id inside the open transaction, keeping the last one's hash
    as the checkpoint; returns how many records were deleted."""
    row = connection.execute("SELECT hash FROM records WHERE id = ?", (record_id,)).fetchone()
    if row is None:
        raise JournalError(f"{path}: record {record_id} is not in the journal")
    connection.execute(PRUNE_CHECKPOINT_DDL)
    connection.execute(
        "INSERT OR REPLACE INTO prune_checkpoint VALUES (1, ?, ?, ?)",
        (record_id, row[0], time.time_ns()),
    )
    deleted: int = connection.execute("DELETE FROM records WHERE id <= ?", (record_id,)).rowcount
    transaction._count -= deleted  # the head written at commit counts what is left
    return deleted
