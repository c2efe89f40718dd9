"""The durable, tamper-evident journal of everything that happens at the table.

The controller acknowledges a device event only after the transaction that
records it has committed, so the journal holds every card the device ever
reported, once. SQLite runs in WAL mode with synchronous=FULL: a commit is
on disk when COMMIT returns, and other processes (the service, shoectl) can
read while the controller writes. A device event and the procedure records
it causes go in one transaction, so after a crash the journal holds either
all of them or none.

Every record is chained to the one before by a hash (journal_chain), and a
one-row chain head (record count, last id, last hash) is updated in the same
transaction, so verify() finds a record edited, deleted, moved or cut off
the end. docs/journal.md describes the file for auditors.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from functools import cache
from pathlib import Path
from types import TracebackType
from typing import Any

from cardshoe.controller.canonical import canonical_json
from cardshoe.controller.errors import UserError
from cardshoe.controller.journal.chain import (
    GENESIS_HASH,
    HASHED_FIELDS,
    RECORD_COLUMNS,
    body_hash,
    record_hash,
)
from cardshoe.controller.own_files import open_own_file, sync_folder
from cardshoe.controller.record_kinds import CLOCK_STEPPED
from cardshoe.controller.timestamps import utc_timestamp

BUSY_TIMEOUT_S = 10.0
"""How long a writer waits for another process's transaction before giving up."""

PAGE_SIZE = 500
"""Records read per query while iterating, so a long listing never holds the lock for long."""

_KIND_PATTERN = re.compile(r"^[a-z][a-z0-9_.-]{0,63}$")
_SHA256_PATTERN = re.compile(r"^[0-9a-f]{64}$")
_SYNCHRONOUS_NAMES = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}

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

RecordCheck = Callable[[str, Mapping[str, Any]], None]
"""Refuses a record (kind, payload) before it is written (Journal.check_record)."""
CLOCK_STEP_TOLERANCE_NS = 2_000_000_000
"""A step back this small is no alarm: NTP's corrections and leap seconds stay well inside."""

STAGED_SUFFIX = ".new"
"""Where `journal init` writes a new journal before renaming it into place."""

CHECKPOINT_EVERY = 256
"""Commits between the journal's own WAL checkpoints, about as often as SQLite's automatic
one (1,000 pages) would run; that one is off because it fails silently."""
WAL_ALARM_FRAMES = 8192
"""A WAL holding this many frames that cannot be checkpointed (some 32 MB) is reported."""

_COLUMN_LIST = ", ".join(RECORD_COLUMNS)
_INSERT_RECORD = (
    f"INSERT INTO records ({_COLUMN_LIST}) VALUES ({', '.join('?' * len(RECORD_COLUMNS))})"
)
_HASHED = len(HASHED_FIELDS)
_HASH = len(RECORD_COLUMNS) - 1
_BODY = len(RECORD_COLUMNS)
_WALK_COLUMNS = f"{_COLUMN_LIST}, json_array({', '.join(HASHED_FIELDS)})"
"""What verify reads of each record: its columns, then SQLite's JSON array of the hashed
ones, which is the canonical JSON the hash covers for any record the journal wrote (text,
integers and NULL spelled alike), so the walk need not build it in Python."""
_PAYLOAD = RECORD_COLUMNS.index("payload")
"""Where the payload's JSON text sits in a stored row."""

RECORD_FIELDS = (RECORD_COLUMNS[0], "time_utc", *RECORD_COLUMNS[1:])
"""The fields of an exported record, in order: the columns plus the readable time."""


class JournalError(UserError):
    """A journal file that cannot be opened or read; the message names the file."""


class JournalCorrupt(JournalError):
    """The journal's file is damaged: SQLite cannot read it, or its integrity check fails."""

    exit_code = 1


class JournalStorageError(JournalError):
    """The journal cannot be written (disk full, read-only file, I/O error, files removed).

    Nothing uncommitted was acknowledged; the message names the path and what to do.
    """

    exit_code = 1


class JournalBusy(JournalError):
    """Another process holds the journal's writer lock (the running service, as a rule)."""


class StorageProblem(StrEnum):
    """A storage fault the journal survived, for the session to hold or alarm on."""

    FILES_REPLACED = "files_replaced"
    """The journal's -wal or main file was removed or replaced under the running writer."""
    CHECKPOINT_FAILING = "checkpoint_failing"
    """The WAL cannot be copied into the main file, so it keeps growing."""


@dataclass(frozen=True)
class StorageNotice:
    problem: StorageProblem
    detail: str


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
        if not id_text.isdigit() or int(id_text) < 1 or not _SHA256_PATTERN.match(digest):
            raise JournalError(
                f"anchor {text!r} is not ID:HASH (a record id, a colon and 64 hex digits)"
            )
        return cls(int(id_text), digest)


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


@dataclass(frozen=True)
class Durability:
    """The settings a durable commit depends on, as the connection reports them."""

    journal_mode: str
    synchronous: str


class Transaction:
    """Records appended together: all committed when the with-block ends, or none."""

    def __init__(
        self, journal: Journal, last_id: int, head_hash: str, count: int, last_time_ns: int
    ) -> None:
        self._journal = journal
        self._last_id = last_id
        self._head_hash = head_hash
        self._count = count
        self._last_time_ns = last_time_ns
        self._open = True

    def append(
        self,
        kind: str,
        payload: Mapping[str, Any],
        *,
        shoe_id: str | None,
        round_no: int | None,
        device_serial: str | None,
        device_seq: int | None = None,
    ) -> int:
        """Add one record to this transaction and return its id.

        kind is a short lowercase name (letters, digits, "_", "-", ".");
        a StrEnum member works. payload must be JSON: string keys, no NaN.
        """
        if not self._open:
            raise RuntimeError("this transaction has ended; open a new one to append")
        _check_record_fields(kind, payload, round_no, device_serial, device_seq)
        if self._journal.check_record is not None:
            self._journal.check_record(kind, payload)
        now = time.time_ns()
        if self._last_time_ns - now > CLOCK_STEP_TOLERANCE_NS:
            self._write(
                CLOCK_STEPPED,
                _clock_step_payload(self._last_time_ns, now),
                now,
                shoe_id=shoe_id,
                round_no=round_no,
                device_serial=device_serial,
                device_seq=None,
            )
        return self._write(
            kind,
            payload,
            now,
            shoe_id=shoe_id,
            round_no=round_no,
            device_serial=device_serial,
            device_seq=device_seq,
        )

    def _write(
        self,
        kind: str,
        payload: Mapping[str, Any],
        time_ns: int,
        *,
        shoe_id: str | None,
        round_no: int | None,
        device_serial: str | None,
        device_seq: int | None,
    ) -> int:
        record_id = self._last_id + 1
        hashed = (
            record_id,
            time_ns,
            self._journal.table_id,
            shoe_id,
            round_no,
            device_serial,
            device_seq,
            str(kind),
            canonical_json(payload),
        )
        new_hash = record_hash(self._head_hash, hashed)
        self._journal._connection.execute(_INSERT_RECORD, (*hashed, self._head_hash, new_hash))
        self._last_id, self._head_hash, self._last_time_ns = record_id, new_hash, time_ns
        self._count += 1
        return record_id

    def _write_head(self) -> None:
        self._journal._connection.execute(
            "UPDATE chain_head SET record_count = ?, last_id = ?, head_hash = ?",
            (self._count, self._last_id, self._head_hash),
        )


class WriterLock:
    """One writer per journal file, across processes.

    Two controllers appending to one journal would interleave two tables'
    worth of inputs and make the replay meaningless, so a writer holds an
    exclusive flock on a sidecar file. The kernel drops it when the process
    dies, even by SIGKILL, so a restarted service never waits for a dead one.
    """

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, journal_path: Path) -> WriterLock:
        path = journal_path.with_name(journal_path.name + ".lock")
        try:
            fd = open_own_file(path)
        except OSError as exc:
            raise JournalError(f"{path}: cannot create the lock: {exc.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            raise JournalBusy(
                f"{journal_path}: another process (pid {holder}) is writing this journal: "
                "stop it first (shoectl status tells whether the service runs)"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        return cls(path, fd)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class Journal:
    """One table's journal file; safe to share between threads of one process."""

    def __init__(
        self,
        path: Path,
        connection: sqlite3.Connection,
        table_id: str,
        writer_lock: WriterLock | None = None,
        check_record: RecordCheck | None = None,
    ) -> None:
        self.path = path
        self.check_record = check_record
        """Refuses a record that does not fit its kind: the table's writers open the journal
        with record_kinds.check_payload; None for a bare store of records, as its tests use."""
        self.table_id = table_id
        self._connection = connection
        self._writer_lock = writer_lock
        self._lock = threading.RLock()
        self._in_transaction = False
        self._commits = 0
        self._files = _file_identity(path) if writer_lock is not None else None
        self._notices: list[StorageNotice] = []

    @classmethod
    def init(cls, path: Path | str, *, table_id: str) -> None:
        """Make a new table's journal, with its schema and table id in the main file.

        Refuses a path where a journal, or its -wal, already is: a journal is never
        replaced by a new one, so none of its records can be forgotten that way.
        The journal is written whole beside its path (<journal>.new) and renamed into
        place, so an init killed at any moment leaves no journal rather than a file
        without a schema that a later `init --if-missing` would keep and the service
        refuse; the next init starts the staged file again.
        """
        path = Path(path)
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

    @classmethod
    def open(
        cls,
        path: Path | str,
        *,
        table_id: str,
        create: bool = False,
        check_record: RecordCheck | None = None,
    ) -> Journal:
        """Open the table's journal for writing.

        create makes the file and its schema where there is none (`shoectl journal
        init`, demos, tests). Without it a missing or empty journal is refused: a
        service that made a new one by itself would trust the device about every card
        the lost journal held.
        """
        path = Path(path)
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
            connection = _connect(path, "rwc" if create else "rw")
        except BaseException:
            writer_lock.release()
            raise
        try:
            version = _schema_version(connection, path)
            if version == 0 and not create:
                raise JournalError(
                    f"{path}: the file holds no journal (empty, or its records were only in a "
                    "lost -wal): restore the journal from its backup, or move this file away "
                    "and run 'shoectl journal init' for a new table"
                )
            if version > SCHEMA_VERSION:
                raise _newer_schema(path, version)
            _set_durable(connection, path)
            _checkpoint_before_writing(connection, path)
            _migrate(connection, path, table_id)
            stored_table_id = _stored_table_id(connection, path)
        except sqlite3.Error as exc:
            connection.close()
            writer_lock.release()
            raise storage_error(path, exc, "opening the journal") from None
        except BaseException:
            connection.close()
            writer_lock.release()
            raise
        if stored_table_id != table_id:
            connection.close()
            writer_lock.release()
            raise JournalError(
                f"{path}: this journal belongs to table {stored_table_id}, not {table_id}: "
                "check table_id and service.journal_path"
            )
        return cls(path, connection, table_id, writer_lock, check_record)

    @classmethod
    def open_readonly(cls, path: Path | str) -> Journal:
        """Open an existing journal to read or verify it; nothing can be written through it."""
        path = Path(path)
        try:
            found, is_file = path.exists(), path.is_file()
        except OSError as exc:  # a name too long for the file system, a folder not permitted
            raise JournalError(f"{path}: cannot look at it: {exc.strerror}") from None
        if not found:
            raise JournalError(f"{path}: no such journal file")
        if not is_file:
            raise JournalError(f"{path}: not a journal file")
        connection = _connect(path, "ro")
        try:
            version = _schema_version(connection, path)
            if version == 0:
                raise JournalError(f"{path}: not a cardshoe journal")
            if version > SCHEMA_VERSION:
                raise _newer_schema(path, version)
            table_id = _stored_table_id(connection, path)
        except sqlite3.Error as exc:
            connection.close()
            raise storage_error(path, exc, "reading the journal") from None
        except BaseException:
            connection.close()
            raise
        return cls(path, connection, table_id)

    def close(self) -> None:
        with self._lock:
            self._connection.close()
            if self._writer_lock is not None:
                self._writer_lock.release()

    def __enter__(self) -> Journal:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def durability(self) -> Durability:
        with self._lock:
            mode = self._connection.execute("PRAGMA journal_mode").fetchone()[0]
            level = self._connection.execute("PRAGMA synchronous").fetchone()[0]
        return Durability(journal_mode=mode, synchronous=_SYNCHRONOUS_NAMES.get(level, str(level)))

    def free_bytes(self) -> int:
        """Space left for the journal to grow on its filesystem (what an unprivileged user may
        use), for the service's free-space floor."""
        status = os.statvfs(self.path.parent)
        return status.f_bavail * status.f_frsize

    def take_notices(self) -> list[StorageNotice]:
        """Storage faults the journal survived since the last call, oldest first."""
        with self._lock:
            notices, self._notices = self._notices, []
        return notices

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """Append records atomically; they are on disk once the with-block exits normally.

        An exception inside the block rolls every record of the block back; a
        storage failure is a JournalStorageError naming the path and what to do.
        Acknowledge a device event only after this block has exited.
        """
        with self._lock:
            if self._in_transaction:
                raise RuntimeError("journal transactions do not nest")
            self._guarded("starting a transaction", self._connection.execute, "BEGIN IMMEDIATE")
            self._in_transaction = True
            transaction: Transaction | None = None
            try:
                count, last_id, head_hash = self._connection.execute(
                    "SELECT record_count, last_id, head_hash FROM chain_head"
                ).fetchone()
                last = self._connection.execute(
                    "SELECT time_ns FROM records WHERE id = ?", (last_id,)
                ).fetchone()
                transaction = Transaction(self, last_id, head_hash, count, last[0] if last else 0)
                yield transaction
                transaction._write_head()
                self._connection.execute("COMMIT")
            except sqlite3.Error as exc:
                _roll_back(self._connection)
                raise storage_error(self.path, exc, "writing records") from None
            except BaseException:
                _roll_back(self._connection)
                raise
            finally:
                if transaction is not None:
                    transaction._open = False
                self._in_transaction = False
            assert transaction is not None
            self._after_commit(last_id=transaction._last_id, head_hash=transaction._head_hash)

    def _after_commit(self, *, last_id: int, head_hash: str) -> None:
        """Notice within one commit that the files were pulled away; checkpoint now and then."""
        self._commits += 1
        if self._files is not None and _file_identity(self.path) != self._files:
            self._reattach(last_id, head_hash)
        if self._commits % CHECKPOINT_EVERY == 0:
            self._checkpoint_passively()

    def _reattach(self, last_id: int, head_hash: str) -> None:
        """The -wal (or the main file) at the path is no longer the one being written.

        Whatever was committed since lives in an unlinked inode no restart would
        find. Copy it into the main file, reopen at the path so new records go to
        files a restart reads, and report it; if the records did not survive the
        move, raise instead, so nothing more is acknowledged.
        """
        detail = f"{self.path}: the journal's files were removed or replaced while the service ran"
        with contextlib.suppress(sqlite3.Error):
            self._wal_checkpoint("TRUNCATE")
        self._connection.close()
        try:
            self._connection = _connect(self.path, "rw")
            _set_durable(self._connection, self.path)
            head = self._connection.execute("SELECT last_id, head_hash FROM chain_head").fetchone()
        except (sqlite3.Error, JournalError) as exc:
            raise JournalStorageError(
                f"{detail} and cannot be reopened ({exc}): stop the service and restore the "
                "journal from its backup; unacknowledged cards stay on the device"
            ) from None
        if tuple(head) != (last_id, head_hash):
            raise JournalStorageError(
                f"{detail}: the journal there ends at record {head[0]}, not {last_id}: stop the "
                "service and restore the journal; unacknowledged cards stay on the device"
            )
        self._files = _file_identity(self.path)
        self._notices.append(
            StorageNotice(
                StorageProblem.FILES_REPLACED,
                f"{detail}; every record was saved into {self.path.name} and the journal "
                "reopened: find out who removed them",
            )
        )

    def _wal_checkpoint(self, mode: str) -> tuple[int, int, int]:
        row = self._connection.execute(f"PRAGMA wal_checkpoint({mode})").fetchone()
        return int(row[0]), int(row[1]), int(row[2])

    def _checkpoint_passively(self) -> None:
        """Copy the WAL into the main file; a failure or a WAL that cannot shrink is reported.

        SQLite's own automatic checkpoint is off because it fails silently: with the
        main file unwritable the WAL grew by megabytes a shoe and nobody knew.
        """
        try:
            _busy, frames, copied = self._wal_checkpoint("PASSIVE")
        except sqlite3.Error as exc:
            fault = storage_error(self.path, exc, "checkpointing the WAL into the journal")
            self._notices.append(StorageNotice(StorageProblem.CHECKPOINT_FAILING, str(fault)))
            return
        if frames - copied >= WAL_ALARM_FRAMES:
            detail = (
                f"{_wal_path(self.path)}: {frames - copied} WAL frames cannot be copied into "
                "the journal because a reader holds an old snapshot: close long-running "
                "readers of the journal"
            )
            self._notices.append(StorageNotice(StorageProblem.CHECKPOINT_FAILING, detail))

    def _fetch_all(self, query: str, parameters: list[Any]) -> list[tuple[Any, ...]]:
        return self._connection.execute(query, parameters).fetchall()

    def _guarded(self, doing: str, action: Callable[..., Any], *arguments: Any) -> Any:
        """Run one SQLite call; a failure becomes the journal's one-line storage error."""
        try:
            return action(*arguments)
        except sqlite3.Error as exc:
            raise storage_error(self.path, exc, doing) from None

    def records(
        self,
        *,
        shoe_id: str | None = None,
        round_no: int | None = None,
        kinds: Iterable[str] | None = None,
        after_id: int | None = None,
    ) -> Iterator[Record]:
        """Records in id order, optionally only one shoe, one round, some kinds, or after an id."""
        conditions = ["id > ?"]
        parameters: list[Any] = []
        if shoe_id is not None:
            conditions.append("shoe_id = ?")
            parameters.append(shoe_id)
        if round_no is not None:
            conditions.append("round_no = ?")
            parameters.append(round_no)
        if kinds is not None:
            wanted = [str(kind) for kind in kinds]
            conditions.append(f"kind IN ({', '.join('?' * len(wanted))})")
            parameters.extend(wanted)
        query = (
            f"SELECT {_COLUMN_LIST} FROM records WHERE {' AND '.join(conditions)} "
            f"ORDER BY id LIMIT {PAGE_SIZE}"
        )
        last_seen = after_id or 0
        while True:
            with self._lock:
                rows = self._guarded(
                    f"reading the records after {last_seen}",
                    self._fetch_all,
                    query,
                    [last_seen, *parameters],
                )
            for row in rows:
                yield self._record_from_row(row)
            if len(rows) < PAGE_SIZE:
                return
            last_seen = rows[-1][0]

    def latest(self, kinds: Iterable[str], count: int = 1) -> list[Record]:
        """The latest `count` records of these kinds, in id order, read through the index by
        kind: what a start-up or a command needs of a long journal, never all of it."""
        wanted = [str(kind) for kind in kinds]
        if count <= 0 or not wanted:
            return []
        query = (
            f"SELECT {_COLUMN_LIST} FROM records WHERE kind IN ({', '.join('?' * len(wanted))}) "
            "ORDER BY id DESC LIMIT ?"
        )
        with self._lock:
            rows = self._guarded(
                "reading the latest records", self._fetch_all, query, [*wanted, count]
            )
        return [self._record_from_row(row) for row in reversed(rows)]

    def last_device_seq(self, device_serial: str) -> int | None:
        """The sequence number of the latest journaled event from this device, if any.

        After a restart, an event the device resends with this number was
        already journaled: acknowledge it again without recording it twice.
        """
        with self._lock:
            rows = self._guarded(
                "reading the device's last event",
                self._fetch_all,
                "SELECT device_seq FROM records WHERE device_serial = ? "
                "AND device_seq IS NOT NULL ORDER BY id DESC LIMIT 1",
                [device_serial],
            )
        return rows[0][0] if rows else None

    def checkpoint(self) -> ChainAnchor | None:
        """The last record pruned and its hash, or None when nothing was ever pruned."""
        with self._lock:
            return self._prune_checkpoint()

    def _prune_checkpoint(self) -> ChainAnchor | None:
        exists = self._connection.execute(
            "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'prune_checkpoint'"
        ).fetchone()
        if exists is None:
            return None
        row = self._connection.execute("SELECT record_id, hash FROM prune_checkpoint").fetchone()
        return None if row is None else ChainAnchor(row[0], row[1])

    def prune_through(self, record_id: int) -> int:
        """Delete records 1..record_id, keeping the last one's hash as the checkpoint.

        The caller decides what may go (journal/prune.py: closed shoes the
        floor has verified); returns how many records were deleted.
        """
        with self.transaction() as transaction:
            row = self._connection.execute(
                "SELECT hash FROM records WHERE id = ?", (record_id,)
            ).fetchone()
            if row is None:
                raise JournalError(f"{self.path}: record {record_id} is not in the journal")
            self._connection.execute(PRUNE_CHECKPOINT_DDL)
            self._connection.execute(
                "INSERT OR REPLACE INTO prune_checkpoint VALUES (1, ?, ?, ?)",
                (record_id, row[0], time.time_ns()),
            )
            deleted = self._connection.execute(
                "DELETE FROM records WHERE id <= ?", (record_id,)
            ).rowcount
            transaction._count -= deleted  # the head written at commit counts what is left
        return deleted

    def verify(self, *, anchor: ChainAnchor | None = None) -> VerifyResult:
        """SQLite's integrity check, and the whole chain in one read snapshot.

        Reports the first bad page or record, the integrity check's first; with an
        anchor, the record it names must still carry the hash it had. The integrity
        check runs on a connection of its own while this one walks the chain: sqlite3
        lets the interpreter go while SQLite checks, so the two share the cores and a
        verify takes the longer of them, not both.
        """
        found: list[VerifyResult | None] = []
        checking = threading.Thread(
            target=lambda: found.append(_integrity(self.path)), name="journal-integrity"
        )
        checking.start()
        try:
            walked = self._in_snapshot(lambda: self._walk(None, anchor))
        finally:
            checking.join()
        return found[0] or walked

    def check_since_anchor(self) -> VerifyResult:
        """What a start-up can afford, whatever the journal's length: its schema, and the
        chain from the anchor the last check recorded to the head, never every record or
        page again (verify() checks those). The service runs it at start-up and after each
        shoe, so the next start walks only what came after the last shoe.

        When it passes, the head becomes the anchor for the next check.
        """
        result = self._in_snapshot(self._check_since_last_start)
        if result.ok:
            with self.transaction():
                self._connection.execute(
                    "UPDATE checked_anchor SET record_id = ?, hash = ?",
                    (result.last_id, result.head_hash),
                )
        return result

    def _check_since_last_start(self) -> VerifyResult:
        damaged = self._schema_problem()
        if damaged is not None:
            return damaged
        checked = self._checked_anchor()
        pruned = self._prune_checkpoint()
        if checked is not None and pruned is not None and checked.record_id <= pruned.record_id:
            checked = None  # pruned since: what remains is walked from the prune checkpoint
        return self._walk(checked, checked)

    def _in_snapshot(self, check: Callable[[], VerifyResult]) -> VerifyResult:
        """check() in one read snapshot. Text is read as str, and only when some text is not
        UTF-8 (an edit) is the check run again with it replaced, so that the record's hash
        fails and names it: a factory of our own on every value halves verify's speed."""
        with self._lock:
            if self._in_transaction:
                raise RuntimeError("verify the journal outside a transaction")
            try:
                for factory in (str, _lenient_text):
                    self._connection.text_factory = factory
                    self._guarded("reading the journal", self._connection.execute, "BEGIN")
                    try:
                        return check()
                    except _NotUtf8:
                        continue
                    except sqlite3.DatabaseError as exc:
                        if factory is str and _UNDECODABLE in str(exc):
                            continue
                        return _damaged(None, f"SQLite cannot read the journal: {exc}")
                    finally:
                        _roll_back(self._connection)
                raise AssertionError("text read leniently is always UTF-8")
            finally:
                self._connection.text_factory = str

    def _schema_problem(self) -> VerifyResult | None:
        """The tables and indexes as the schema steps make them, or what differs: at start-up
        in place of SQLite's integrity check, which reads every page of the journal and so
        grew with it. The walk from the anchor reads the pages written since."""
        rows = self._connection.execute(
            "SELECT type, name, sql FROM sqlite_schema WHERE sql IS NOT NULL"
        ).fetchall()
        found = {(kind, name, " ".join(sql.split())) for kind, name, sql in rows}
        pruned = any(name == "prune_checkpoint" for _, name, _ in found)
        differ = sorted({name for _, name, _ in found ^ _expected_schema(pruned)})
        if not differ:
            return None
        return _damaged(
            None, f"the schema is not the journal's: {', '.join(differ)} differ from it"
        )

    def _checked_anchor(self) -> ChainAnchor | None:
        try:
            row = self._connection.execute("SELECT record_id, hash FROM checked_anchor").fetchone()
        except sqlite3.DatabaseError:
            return None
        return None if row is None or row[0] == 0 else ChainAnchor(row[0], row[1])

    def _walk(self, start: ChainAnchor | None, anchor: ChainAnchor | None) -> VerifyResult:
        """The chain from start (or record 1) to the head, and the head itself.

        The walk begins at start's own record, whose recomputed hash must still be
        start's (the start-up check passes start as the anchor too).
        """
        expected_id, previous_hash, count = 1, GENESIS_HASH, 0
        pruned = self._prune_checkpoint()
        if pruned is not None:
            expected_id, previous_hash = pruned.record_id + 1, pruned.hash
            if anchor is not None and anchor.record_id == pruned.record_id:
                if anchor.hash != pruned.hash:
                    return VerifyResult(
                        False,
                        0,
                        previous_hash,
                        anchor.record_id,
                        "the anchor's hash is not the prune checkpoint's: "
                        "the journal was rewritten",
                    )
                anchor = None
        if start is not None:
            # The records before start are counted from the chain head, not read: counting
            # them read the whole journal at every start. Those records are verify()'s.
            row = self._connection.execute(
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
        rows = self._connection.execute(
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
            if self._connection.text_factory is str and _UNDECODABLE in str(exc):
                raise _NotUtf8 from exc
            return _damaged(expected_id, f"SQLite cannot read it: {exc}", count, previous_hash)
        last_id = expected_id - 1
        return self._head_problem(last_id, previous_hash, count, anchor) or VerifyResult(
            True, count, previous_hash, last_id=last_id
        )

    def _head_problem(
        self, last_id: int, previous_hash: str, count: int, anchor: ChainAnchor | None
    ) -> VerifyResult | None:
        heads = self._connection.execute(
            "SELECT record_count, last_id, head_hash FROM chain_head"
        ).fetchall()
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

    def _record_from_row(self, row: tuple[Any, ...]) -> Record:
        try:
            payload = json.loads(row[_PAYLOAD])
        except json.JSONDecodeError:
            raise JournalCorrupt(
                f"{self.path}: record {row[0]} holds a payload that is not JSON: "
                "run 'shoectl journal verify'"
            ) from None
        values = dict(zip(RECORD_COLUMNS, row, strict=True))
        values["payload"] = payload
        return Record(**values)


def _damaged(
    record_id: int | None, reason: str, count: int = 0, head_hash: str = GENESIS_HASH
) -> VerifyResult:
    return VerifyResult(False, count, head_hash, record_id, reason)


def _integrity(path: Path) -> VerifyResult | None:
    """SQLite's own check of pages and indexes, on a connection of its own: None when it finds
    nothing wrong."""
    try:
        connection = _connect(path, "ro")
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


@cache
def _expected_schema(pruned: bool) -> frozenset[tuple[str, str, str]]:
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


class _NotUtf8(Exception):
    """Some text of the journal is not UTF-8: verify reads it again, leniently."""


_UNDECODABLE = "Could not decode to UTF-8"
"""How sqlite3 says a text value is not UTF-8 (an OperationalError)."""


def _lenient_text(data: bytes) -> str:
    """Text as verify reads it: bytes that are not UTF-8 make the record's hash fail,
    which names it, instead of an exception that names nothing."""
    return data.decode("utf-8", "replace")


def _clock_step_payload(last_time_ns: int, time_ns: int) -> dict[str, Any]:
    """The clock.stepped alarm: how far the wall clock went back, between which times."""
    back_s = (last_time_ns - time_ns) / 1e9
    return {
        "kind": "clock",
        "detail": f"the wall clock went back {back_s:.3f} s: record times from here are "
        "earlier than those before; the record ids keep the order (check the PC's clock)",
        "stepped_back_s": round(back_s, 3),
    }


def _wal_path(path: Path) -> Path:
    return path.with_name(path.name + "-wal")


def _journal_files(path: Path) -> tuple[Path, ...]:
    """The journal's main file and the two SQLite keeps beside it in WAL mode."""
    return (path, _wal_path(path), path.with_name(path.name + "-shm"))


def _refuse_existing(path: Path) -> None:
    for part in (path, _wal_path(path)):
        if part.exists():
            raise JournalError(
                f"{part}: a journal is already there: check it with 'shoectl journal "
                "verify'; to start a new one, move the old journal's files elsewhere first"
            )


def _checkpoint_before_writing(connection: sqlite3.Connection, path: Path) -> None:
    """Copy a WAL left by a writer that died or whose checkpoints failed into the main file,
    before a record is written; refuse to write when that fails.

    A checkpoint needs room for the main file to grow by what the WAL holds, while a commit
    needs a few pages: with the disk nearly full, a restart that wrote on would grow a WAL
    nothing can copy until the disk is full, and stop again with more to lose.
    """
    wal = _wal_path(path)
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
    connection = _connect(path, "rwc")
    try:
        _set_durable(connection, path)
        _migrate(connection, path, table_id)
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except sqlite3.Error as exc:
        raise storage_error(path, exc, "writing the new journal") from None
    finally:
        connection.close()


def _file_identity(path: Path) -> tuple[tuple[int, int] | None, ...]:
    """Which inodes the journal's main file and -wal are at the path, to notice a swap."""
    identity: list[tuple[int, int] | None] = []
    for part in (path, _wal_path(path)):
        try:
            status = os.stat(part)
        except FileNotFoundError:
            identity.append(None)
        else:
            identity.append((status.st_dev, status.st_ino))
    return tuple(identity)


def _refuse_folder(path: Path) -> None:
    """A journal path naming a folder is a slip in the configuration: say so, not SQLite."""
    if path.is_dir():
        raise JournalError(
            f"{path}: is a folder, not a journal file: name a file in service.journal_path "
            f"(or --journal), for example {path / 'journal.sqlite'}"
        )


_STORAGE_FIXES = (
    ("disk is full", "free space on the journal's filesystem (df), then restart the service"),
    (
        "readonly",
        "give the service's user write access to the journal, its -wal and -shm files and "
        "their folder (ls -l), then restart the service",
    ),
    (
        "I/O error",
        "the disk failed a read or a write (a full disk, a file size limit or a failing "
        "device): check dmesg and df, then restart the service",
    ),
    (
        "unable to open",
        "give the service's user access to the journal's folder (ls -ld), then restart",
    ),
    ("locked", "another program holds the journal's write lock: stop it"),
)


def storage_error(path: Path, exc: sqlite3.Error, doing: str) -> JournalError:
    """SQLite's complaint as one line that names the path and what to do about it."""
    text = str(exc)
    if "malformed" in text or "not a database" in text:
        return JournalCorrupt(
            f"{path}: the journal is damaged ({text}) while {doing}: run 'shoectl journal "
            f"verify {path}' and restore the journal from its backup"
        )
    for marker, fix in _STORAGE_FIXES:
        if marker in text:
            return JournalStorageError(f"{path}: {text} while {doing}: {fix}")
    return JournalStorageError(f"{path}: {text} while {doing}: check the disk and the file")


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


def _check_record_fields(
    kind: str,
    payload: Mapping[str, Any],
    round_no: int | None,
    device_serial: str | None,
    device_seq: int | None,
) -> None:
    if not isinstance(kind, str) or not _KIND_PATTERN.match(kind):
        raise ValueError(f"record kind {kind!r} must be a short lowercase name such as card_read")
    if not isinstance(payload, Mapping):
        raise TypeError(f"record payload must be a mapping, not {type(payload).__name__}")
    _check_string_keys(payload)
    if round_no is not None and round_no < 0:
        raise ValueError(f"round_no {round_no} is negative")
    if device_seq is not None and device_serial is None:
        raise ValueError("device_seq needs the device_serial it belongs to")


def _check_string_keys(value: Any) -> None:
    """JSON would turn a key 1 into "1", and the payload read back would differ."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"payload key {key!r} is not a string")
            _check_string_keys(item)
    elif isinstance(value, list | tuple):
        for item in value:
            _check_string_keys(item)


def _connect(path: Path, mode: str) -> sqlite3.Connection:
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


def _schema_version(connection: sqlite3.Connection, path: Path) -> int:
    """user_version of a journal; refuse a SQLite file that holds something else."""
    try:
        version = connection.execute("PRAGMA user_version").fetchone()[0]
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


def _newer_schema(path: Path, version: int) -> JournalError:
    return JournalError(
        f"{path}: written by a newer cardshoe (schema {version}, this one reads up to "
        f"{SCHEMA_VERSION}): upgrade cardshoe"
    )


def _set_durable(connection: sqlite3.Connection, path: Path) -> None:
    """WAL lets readers work beside the writer; FULL makes COMMIT wait for the disk."""
    mode = connection.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if mode != "wal":
        raise JournalError(
            f"{path}: this filesystem does not support SQLite WAL mode (got {mode}): "
            "put the journal on a local disk"
        )
    connection.execute("PRAGMA synchronous = FULL")
    connection.execute("PRAGMA wal_autocheckpoint = 0")


def _migrate(connection: sqlite3.Connection, path: Path, table_id: str) -> None:
    connection.execute("BEGIN IMMEDIATE")
    try:
        version = _schema_version(connection, path)
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
        _roll_back(connection)
        raise


def _roll_back(connection: sqlite3.Connection) -> None:
    """Undo the open transaction, unless a failed COMMIT already did; a storage failure
    while undoing changes nothing: SQLite rolls back on the next open."""
    if connection.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            connection.execute("ROLLBACK")


def _stored_table_id(connection: sqlite3.Connection, path: Path) -> str:
    row = connection.execute("SELECT table_id FROM journal_info").fetchone()
    if row is None:
        raise JournalError(f"{path}: not a cardshoe journal (no table id recorded)")
    return row[0]
