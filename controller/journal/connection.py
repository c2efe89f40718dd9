"""How the journal talks to SQLite: a connection, the settings a durable commit needs, undo.

Separate from the store because every part of the journal opens, configures or rolls back a
connection the same way (the writer, the read-only reader, verify's integrity check, the
start-up migration), and that one way is what makes a commit durable.
"""

from __future__ import annotations

import contextlib
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from cardshoe.controller.journal.errors import JournalError

BUSY_TIMEOUT_S = 10.0
"""How long a writer waits for another process's transaction before giving up."""
CACHE_KIB = 512
"""SQLite's page cache of a writer's connection (its default is 2,000 KiB). The table service
keeps its writer's connection for its whole run, and a start-up on a long journal reads
enough scattered pages (every session's start, the last shoes) to fill the default cache,
which the service then holds to the end: ~1-2 MB of its resident memory (bench/
bench_service.py, long journal). An append touches a few pages at the right edge of the
table and of each index, well inside 128 pages of 4 KiB: CPU per append on a 500-shoe
journal did not grow (about 0.2-0.3 ms at 512 KiB and at the default)."""

_SYNCHRONOUS_NAMES = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}


@dataclass(frozen=True)
class Durability:
    """The settings a durable commit depends on, as the connection reports them."""

    journal_mode: str
    synchronous: str


def durability(connection: sqlite3.Connection) -> Durability:
    mode = connection.execute("PRAGMA journal_mode").fetchone()[0]
    level = connection.execute("PRAGMA synchronous").fetchone()[0]
    return Durability(journal_mode=mode, synchronous=_SYNCHRONOUS_NAMES.get(level, str(level)))


def connect(path: Path, mode: str) -> sqlite3.Connection:
    try:
        return sqlite3.connect(
            f"{path.absolute().as_uri()}?mode={mode}",
            uri=True,
            timeout=BUSY_TIMEOUT_S,
            isolation_level=None,
            check_same_thread=False,
        )
    except sqlite3.Error as exc:
        raise JournalError(f"{path}: cannot open: {exc}") from None


def set_durable(connection: sqlite3.Connection, path: Path) -> None:
    """WAL lets readers work beside the writer; FULL makes COMMIT wait for the disk."""
    mode = connection.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if mode != "wal":
        raise JournalError(
            f"{path}: this filesystem does not support SQLite WAL mode (got {mode}): "
            "put the journal on a local disk"
        )
    connection.execute("PRAGMA synchronous = FULL")
    connection.execute("PRAGMA wal_autocheckpoint = 0")


def limit_cache(connection: sqlite3.Connection) -> None:
    """Hold at most CACHE_KIB of pages, once the file is known to be a journal (the pragma
    reads it)."""
    connection.execute(f"PRAGMA cache_size = -{CACHE_KIB}")


def roll_back(connection: sqlite3.Connection) -> None:
    """Undo the open transaction, unless a failed COMMIT already did; a storage failure
    while undoing changes nothing: SQLite rolls back on the next open."""
    if connection.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            connection.execute("ROLLBACK")


def wal_path(path: Path) -> Path:
    """The -wal SQLite keeps beside the journal in WAL mode, where every commit lands first."""
    return path.with_name(path.name + "-wal")
