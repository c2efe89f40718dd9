"""The journal's tables, the steps that bring an older journal's schema up to date, and the
checks that a SQLite file is a journal this cardshoe can read.

Separate from the store because a schema change touches only this file (a new step at the
end of SCHEMA_STEPS), and because opening, init and the start-up check all read it.
"""

from __future__ import annotations

import sqlite3
import time
from functools import cache
from pathlib import Path

from cardshoe.controller.journal.chain import GENESIS_HASH
from cardshoe.controller.journal.connection import roll_back
from cardshoe.controller.journal.errors import JournalError, storage_error

SCHEMA_STEPS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE journal_info (
            singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
            table_id TEXT NOT NULL,
            created_ns INTEGER NOT NULL
        ) STRICT""",
        """CREATE TABLE records (
            id INTEGER PRIMARY KEY,
            time_ns INTEGER NOT NULL,
            table_id TEXT NOT NULL,
            shoe_id TEXT,
            round_no INTEGER,
            device_serial TEXT,
            device_seq INTEGER,
            kind TEXT NOT NULL,
            payload TEXT NOT NULL,
            prev_hash TEXT NOT NULL,
            hash TEXT NOT NULL
        ) STRICT""",
        "CREATE INDEX records_by_shoe ON records (shoe_id, id)",
        """CREATE INDEX records_by_device ON records (device_serial, id)
            WHERE device_seq IS NOT NULL""",
        """CREATE TABLE chain_head (
            singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
            record_count INTEGER NOT NULL,
            last_id INTEGER NOT NULL,
            head_hash TEXT NOT NULL
        ) STRICT""",
        f"INSERT INTO chain_head VALUES (1, 0, 0, '{GENESIS_HASH}')",
    ),
    (
        """CREATE TABLE checked_anchor (
            singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
            record_id INTEGER NOT NULL,
            hash TEXT NOT NULL
        ) STRICT""",
        f"INSERT INTO checked_anchor VALUES (1, 0, '{GENESIS_HASH}')",
    ),
    (
        # Start-up and the commands look up records by kind (the latest table.idle, the
        # shoes' starts): without it each lookup read the whole journal.
        "CREATE INDEX records_by_kind ON records (kind, id)",
    ),
)
"""Schema step i turns a version-i journal into version i + 1 (PRAGMA user_version)."""

SCHEMA_VERSION = len(SCHEMA_STEPS)

PRUNE_CHECKPOINT_DDL = """CREATE TABLE IF NOT EXISTS prune_checkpoint (
    singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
    record_id INTEGER NOT NULL,
    hash TEXT NOT NULL,
    pruned_ns INTEGER NOT NULL
) STRICT"""
"""Created by the first prune (journal/prune.py): the last record deleted and its hash, where
verify() starts the chain of what remains. A journal never pruned has no such table."""


def schema_version(connection: sqlite3.Connection, path: Path) -> int:
    """user_version of a journal; refuse a SQLite file that holds something else."""
    try:
        version: int = connection.execute("PRAGMA user_version").fetchone()[0]
        names = {
            row[0]
            for row in connection.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")
        }
    except sqlite3.DatabaseError as exc:
        if _starts_like_sqlite(path):
            raise storage_error(path, exc, "reading the journal's schema") from None
        raise JournalError(f"{path}: not a cardshoe journal ({exc})") from None
    if version == 0 and names:
        raise JournalError(f"{path}: not a cardshoe journal (a SQLite file with other tables)")
    if version and not {"journal_info", "records", "chain_head"} <= names:
        raise JournalError(f"{path}: not a cardshoe journal (journal tables are missing)")
    return version


def _starts_like_sqlite(path: Path) -> bool:
    """A file with SQLite's header, made of whole pages, that SQLite cannot read is a damaged
    journal (random bytes written into it), not some other file given by mistake."""
    try:
        with path.open("rb") as file:
            header = file.read(16)
        size = path.stat().st_size
    except OSError:
        return False
    return header == b"SQLite format 3\x00" and size >= 512 and size % 512 == 0


def newer_schema(path: Path, version: int) -> JournalError:
    return JournalError(
        f"{path}: written by a newer cardshoe (schema {version}, this one reads up to "
        f"{SCHEMA_VERSION}): upgrade cardshoe"
    )


def migrate(connection: sqlite3.Connection, path: Path, table_id: str) -> None:
    connection.execute("BEGIN IMMEDIATE")
    try:
        version = schema_version(connection, path)
        for step in SCHEMA_STEPS[version:]:
            for statement in step:
                connection.execute(statement)
        if version == 0:
            connection.execute(
                "INSERT INTO journal_info VALUES (1, ?, ?)", (table_id, time.time_ns())
            )
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        connection.execute("COMMIT")
    except BaseException:
        roll_back(connection)
        raise


def stored_table_id(connection: sqlite3.Connection, path: Path) -> str:
    row = connection.execute("SELECT table_id FROM journal_info").fetchone()
    if row is None:
        raise JournalError(f"{path}: not a cardshoe journal (no table id recorded)")
    return str(row[0])


@cache
def expected_schema(pruned: bool) -> frozenset[tuple[str, str, str]]:
    """(type, name, SQL with its spaces collapsed) of every table and index of a journal of
    this schema version, as SQLite writes them down; `pruned` adds the prune checkpoint."""
    connection = sqlite3.connect(":memory:")
    try:
        for step in SCHEMA_STEPS:
            for statement in step:
                connection.execute(statement)
        if pruned:
            connection.execute(PRUNE_CHECKPOINT_DDL)
        rows = connection.execute(
            "SELECT type, name, sql FROM sqlite_schema WHERE sql IS NOT NULL"
        ).fetchall()
    finally:
        connection.close()
    return frozenset((kind, name, " ".join(sql.split())) for kind, name, sql in rows)
