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

`Journal` is the one way in; the jobs behind it live beside it: opening.py (init and open),
schema.py, connection.py, writer_lock.py, transaction.py (appending), reader.py, verify.py,
prune_checkpoint.py and storage_watch.py (faults the writer survives).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

from cardshoe.controller.journal import prune_checkpoint, reader, verify
from cardshoe.controller.journal.connection import Durability, durability, roll_back
from cardshoe.controller.journal.errors import guarded, storage_error
from cardshoe.controller.journal.opening import init_journal, open_for_reading, open_for_writing
from cardshoe.controller.journal.records import ChainAnchor, Record
from cardshoe.controller.journal.storage_watch import StorageNotice, StorageWatch
from cardshoe.controller.journal.transaction import RecordCheck, Transaction
from cardshoe.controller.journal.verify import VerifyResult
from cardshoe.controller.journal.writer_lock import WriterLock


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
        self._watch = StorageWatch(path, watch_files=writer_lock is not None)

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
        init_journal(Path(path), table_id)

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
        connection, writer_lock = open_for_writing(path, table_id, create)
        return cls(path, connection, table_id, writer_lock, check_record)

    @classmethod
    def open_readonly(cls, path: Path | str) -> Journal:
        """Open an existing journal to read or verify it; nothing can be written through it."""
        path = Path(path)
        connection, table_id = open_for_reading(path)
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
            return durability(self._connection)

    def free_bytes(self) -> int:
        """Space left for the journal to grow on its filesystem (what an unprivileged user may
        use), for the service's free-space floor."""
        return self._watch.free_bytes()

    def take_notices(self) -> list[StorageNotice]:
        """Storage faults the journal survived since the last call, oldest first."""
        with self._lock:
            return self._watch.take_notices()

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
            guarded(
                self.path, "starting a transaction", self._connection.execute, "BEGIN IMMEDIATE"
            )
            self._in_transaction = True
            transaction: Transaction | None = None
            try:
                count, last_id, head_hash = self._connection.execute(
                    "SELECT record_count, last_id, head_hash FROM chain_head"
                ).fetchone()
                last = self._connection.execute(
                    "SELECT time_ns FROM records WHERE id = ?", (last_id,)
                ).fetchone()
                transaction = Transaction(
                    self._connection,
                    self.table_id,
                    last_id,
                    head_hash,
                    count,
                    last[0] if last else 0,
                    self.check_record,
                )
                yield transaction
                transaction._write_head()
                self._connection.execute("COMMIT")
            except sqlite3.Error as exc:
                roll_back(self._connection)
                raise storage_error(self.path, exc, "writing records") from None
            except BaseException:
                roll_back(self._connection)
                raise
            finally:
                if transaction is not None:
                    transaction._open = False
                self._in_transaction = False
            assert transaction is not None
            self._after_commit(last_id=transaction._last_id, head_hash=transaction._head_hash)

    def _after_commit(self, *, last_id: int, head_hash: str) -> None:
        """Notice within one commit that the files were pulled away; checkpoint now and then."""
        checkpoint_due = self._watch.count_commit()
        if self._watch.files_moved():
            self._connection = self._watch.reopen(self._connection)
            self._watch.reattach(self._connection, last_id, head_hash)
        if checkpoint_due:
            self._watch.checkpoint_passively(self._connection)

    def _read(self, doing: str, query: str, parameters: list[Any]) -> list[tuple[Any, ...]]:
        """One query's rows under the lock; a SQLite failure is the journal's storage error."""
        with self._lock:
            return guarded(self.path, doing, self._fetch_all, query, parameters)

    def _fetch_all(self, query: str, parameters: list[Any]) -> list[tuple[Any, ...]]:
        return self._connection.execute(query, parameters).fetchall()

    def records(
        self,
        *,
        shoe_id: str | None = None,
        round_no: int | None = None,
        kinds: Iterable[str] | None = None,
        after_id: int | None = None,
    ) -> Iterator[Record]:
        """Records in id order, optionally only one shoe, one round, some kinds, or after an id."""
        return reader.records(
            self._read,
            self.path,
            shoe_id=shoe_id,
            round_no=round_no,
            kinds=kinds,
            after_id=after_id,
        )

    def latest(
        self, kinds: Iterable[str], count: int = 1, *, device_serial: str | None = None
    ) -> list[Record]:
        """The latest `count` records of these kinds (from one device when given), in id
        order, read through the index by kind: what a start-up or a command needs of a long
        journal, never all of it."""
        return reader.latest(self._read, self.path, kinds, count, device_serial)

    def last_device_seq(self, device_serial: str) -> int | None:
        """The sequence number of the latest journaled event from this device, if any.

        After a restart, an event the device resends with this number was
        already journaled: acknowledge it again without recording it twice.
        """
        return reader.last_device_seq(self._read, device_serial)

    def checkpoint(self) -> ChainAnchor | None:
        """The last record pruned and its hash, or None when nothing was ever pruned."""
        with self._lock:
            return prune_checkpoint.read_checkpoint(self._connection)

    def prune_through(self, record_id: int) -> int:
        """Delete records 1..record_id, keeping the last one's hash as the checkpoint.

        The caller decides what may go (journal/prune.py: closed shoes the
        floor has verified); returns how many records were deleted.
        """
        with self.transaction() as transaction:
            return prune_checkpoint.delete_through(
                self._connection, self.path, transaction, record_id
            )

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
            target=lambda: found.append(verify.integrity(self.path)), name="journal-integrity"
        )
        checking.start()
        try:
            walked = self._in_snapshot(lambda: verify.walk(self._connection, None, anchor))
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
        result = self._in_snapshot(lambda: verify.check_since_last_start(self._connection))
        if result.ok:
            with self.transaction():
                self._connection.execute(
                    "UPDATE checked_anchor SET record_id = ?, hash = ?",
                    (result.last_id, result.head_hash),
                )
        return result

    def _in_snapshot(self, check: Callable[[], VerifyResult]) -> VerifyResult:
        """check() in one read snapshot, never inside a transaction of this journal."""
        with self._lock:
            if self._in_transaction:
                raise RuntimeError("verify the journal outside a transaction")
            return verify.in_snapshot(self._connection, self.path, check)
