"""Making a new journal, and opening one to write or to read: every refusal on the way.

Separate from the store because opening is where a lost, foreign, newer or half-made journal
is told apart from the table's own, once, before the Journal object that appends and reads
exists; the writer lock and the connection are released on every way out.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from cardshoe.controller.journal.connection import connect, limit_cache, set_durable, wal_path
from cardshoe.controller.journal.errors import JournalError, JournalStorageError, storage_error
from cardshoe.controller.journal.schema import (
    SCHEMA_VERSION,
    migrate,
    newer_schema,
    schema_version,
    stored_table_id,
)
from cardshoe.controller.journal.writer_lock import WriterLock
from cardshoe.controller.own_files import sync_folder

STAGED_SUFFIX = ".new"
"""Where `journal init` writes a new journal before renaming it into place."""


def init_journal(path: Path, table_id: str) -> None:
    """A new table's journal at path, staged beside it and renamed into place (Journal.init)."""
    _refuse_folder(path)
    if not path.parent.is_dir():
        raise JournalError(f"{path}: cannot create the journal: no folder {path.parent}")
    _refuse_existing(path)
    writer_lock = WriterLock.acquire(path)
    try:
        _refuse_existing(path)  # again, now that no other writer can make one
        staged = path.with_name(path.name + STAGED_SUFFIX)
        for part in _journal_files(staged):
            part.unlink(missing_ok=True)
        _write_new_journal(staged, table_id)
        os.rename(staged, path)
        sync_folder(path.parent)
    finally:
        writer_lock.release()


def open_for_writing(
    path: Path, table_id: str, create: bool
) -> tuple[sqlite3.Connection, WriterLock]:
    """The connection and the writer lock of the table's journal (Journal.open)."""
    if not path.parent.is_dir():
        raise JournalError(f"{path}: cannot create the journal: no folder {path.parent}")
    _refuse_folder(path)
    if not create and not path.exists():
        raise JournalError(
            f"{path}: no journal: make a new table's journal with 'shoectl journal init'; "
            "if this table had one, restore it from its backup (shoectl run never makes one)"
        )
    writer_lock = WriterLock.acquire(path)
    try:
        connection = connect(path, "rwc" if create else "rw")
    except BaseException:
        writer_lock.release()
        raise
    try:
        version = schema_version(connection, path)
        if version == 0 and not create:
            raise JournalError(
                f"{path}: the file holds no journal (empty, or its records were only in a "
                "lost -wal): restore the journal from its backup, or move this file away "
                "and run 'shoectl journal init' for a new table"
            )
        if version > SCHEMA_VERSION:
            raise newer_schema(path, version)
        set_durable(connection, path)
        limit_cache(connection)
        _checkpoint_before_writing(connection, path)
        migrate(connection, path, table_id)
        stored = stored_table_id(connection, path)
    except sqlite3.Error as exc:
        connection.close()
        writer_lock.release()
        raise storage_error(path, exc, "opening the journal") from None
    except BaseException:
        connection.close()
        writer_lock.release()
        raise
    if stored != table_id:
        connection.close()
        writer_lock.release()
        raise JournalError(
            f"{path}: this journal belongs to table {stored}, not {table_id}: "
            "check table_id and service.journal_path"
        )
    return connection, writer_lock


def open_for_reading(path: Path) -> tuple[sqlite3.Connection, str]:
    """A read-only connection to an existing journal and its table id (Journal.open_readonly)."""
    try:
        found, is_file = path.exists(), path.is_file()
    except OSError as exc:  # a name too long for the file system, a folder not permitted
        raise JournalError(f"{path}: cannot look at it: {exc.strerror}") from None
    if not found:
        raise JournalError(f"{path}: no such journal file")
    if not is_file:
        raise JournalError(f"{path}: not a journal file")
    connection = connect(path, "ro")
    try:
        version = schema_version(connection, path)
        if version == 0:
            raise JournalError(f"{path}: not a cardshoe journal")
        if version > SCHEMA_VERSION:
            raise newer_schema(path, version)
        table_id = stored_table_id(connection, path)
    except sqlite3.Error as exc:
        connection.close()
        raise storage_error(path, exc, "reading the journal") from None
    except BaseException:
        connection.close()
        raise
    return connection, table_id


def _journal_files(path: Path) -> tuple[Path, ...]:
    """The journal's main file and the two SQLite keeps beside it in WAL mode."""
    return (path, wal_path(path), path.with_name(path.name + "-shm"))


def _refuse_existing(path: Path) -> None:
    for part in (path, wal_path(path)):
        if part.exists():
            raise JournalError(
                f"{part}: a journal is already there: check it with 'shoectl journal "
                "verify'; to start a new one, move the old journal's files elsewhere first"
            )


def _refuse_folder(path: Path) -> None:
    """A journal path naming a folder is a slip in the configuration: say so, not SQLite."""
    if path.is_dir():
        raise JournalError(
            f"{path}: is a folder, not a journal file: name a file in service.journal_path "
            f"(or --journal), for example {path / 'journal.sqlite'}"
        )


def _checkpoint_before_writing(connection: sqlite3.Connection, path: Path) -> None:
    """Copy a WAL left by a writer that died or whose checkpoints failed into the main file,
    before a record is written; refuse to write when that fails.

    A checkpoint needs room for the main file to grow by what the WAL holds, while a commit
    needs a few pages: with the disk nearly full, a restart that wrote on would grow a WAL
    nothing can copy until the disk is full, and stop again with more to lose.
    """
    wal = wal_path(path)
    try:
        size = wal.stat().st_size
    except FileNotFoundError:
        return
    if size == 0:
        return
    try:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    except sqlite3.Error as exc:
        raise JournalStorageError(
            f"{path}: its -wal holds {size / 1e6:.1f} MB not yet copied into the journal, and "
            f"copying it failed ({exc}): free space on the journal's filesystem (df), then "
            "restart; nothing was written"
        ) from None


def _write_new_journal(path: Path, table_id: str) -> None:
    """A whole new journal at path, every page in the main file and synced, no -wal left."""
    connection = connect(path, "rwc")
    try:
        set_durable(connection, path)
        migrate(connection, path, table_id)
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except sqlite3.Error as exc:
        raise storage_error(path, exc, "writing the new journal") from None
    finally:
        connection.close()
