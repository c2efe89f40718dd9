"""What the writer watches after each commit: its files pulled away under it, the WAL that
cannot be copied into the main file, the space left on the disk.

Separate from the store because these are faults of the disk and of people, not of the
records: the journal survives them, reports them as notices for the session to hold or alarm
on, and raises only when records may have been lost.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from cardshoe.controller.journal.connection import connect, set_durable, wal_path
from cardshoe.controller.journal.errors import JournalError, JournalStorageError, storage_error

CHECKPOINT_EVERY = 256
"""Commits between the journal's own WAL checkpoints, about as often as SQLite's automatic
one (1,000 pages) would run; that one is off because it fails silently."""
WAL_ALARM_FRAMES = 8192
"""A WAL holding this many frames that cannot be checkpointed (some 32 MB) is reported."""
FREE_SPACE_COMMITS = 16
"""Commits after which free_bytes() reads the filesystem's free space again. Each commit
adds a few pages to the WAL, so what the journal wrote since is far inside any floor."""
FREE_SPACE_MAX_AGE_NS = 100_000_000
"""Age after which free_bytes() reads it again whatever was committed, so a disk another
program fills is seen within a tenth of a second, the session's step when no event comes."""
FOLDER_SETTLED_NS = 2_000_000_000
"""How long the journal's folder must have been unchanged before its one stat stands for
both files' two. Longer than the coarsest timestamps a Linux filesystem keeps (FAT's two
seconds), so anything changed in the folder afterwards carries a later time than it."""

_FolderStamp = tuple[int, int, int, int]
"""A folder's device, inode, modification and change times (st_dev, st_ino, *_ns)."""


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


class StorageWatch:
    """One journal's files, commits and notices; the journal calls it under its own lock."""

    def __init__(self, path: Path, *, watch_files: bool) -> None:
        self._path = path
        self._commits = 0
        self._files = _file_identity(path) if watch_files else None
        self._quiet_folder: _FolderStamp | None = None
        self._settles_at_ns = 0
        self._notices: list[StorageNotice] = []
        self._free: tuple[int, int, int] | None = None
        """The last free-space figure, the commits counted and the monotonic time then."""

    def free_bytes(self) -> int:
        """Space left for the journal to grow on its filesystem (what an unprivileged user may
        use), for the service's free-space floor.

        The session asks before every event; a statvfs each time made the card path pay for
        a figure that cannot have moved much in the milliseconds since the last. So the last
        figure is given again until the journal has committed FREE_SPACE_COMMITS times since
        (its own growth) or it is FREE_SPACE_MAX_AGE_NS old (another program's). Called
        without the journal's lock, so that no commit's fsync delays it: the figure and what
        it was read at are replaced together, as one tuple.
        """
        now = time.monotonic_ns()
        last = self._free
        if (
            last is not None
            and self._commits - last[1] < FREE_SPACE_COMMITS
            and now - last[2] < FREE_SPACE_MAX_AGE_NS
        ):
            return last[0]
        status = os.statvfs(self._path.parent)
        figure = status.f_bavail * status.f_frsize
        self._free = (figure, self._commits, now)
        return figure

    def take_notices(self) -> list[StorageNotice]:
        """Storage faults the journal survived since the last call, oldest first."""
        notices, self._notices = self._notices, []
        return notices

    def count_commit(self) -> bool:
        """Count a commit; True when it is time for the journal's own WAL checkpoint."""
        self._commits += 1
        return self._commits % CHECKPOINT_EVERY == 0

    def files_moved(self) -> bool:
        """Whether the main file or the -wal at the path is no longer the one being written.

        Asked after every commit, so that a file removed or replaced is noticed within one.
        Removing, renaming or making a file in a folder sets the folder's modification and
        change times, so once the folder has been quiet for FOLDER_SETTLED_NS, one stat of
        it answers for both files: unchanged, they are still the ones found in place when
        it was last looked at. When it changed (any file in it), or while it has not yet
        settled, both files are looked at again, one stat each.
        """
        if self._files is None:
            return False
        folder = None
        if self._quiet_folder is not None or time.time_ns() >= self._settles_at_ns:
            folder = _folder_stamp(self._path.parent)
            if folder is not None and folder == self._quiet_folder:
                return False
        moved = _file_identity(self._path) != self._files
        if folder is not None and not moved:
            self._settle(folder)
        return moved

    def _settle(self, folder: _FolderStamp) -> None:
        """Trust this stamp of the folder from now on if it is old enough to be told apart
        from any later change; otherwise look at the files until it is."""
        settles_at = max(folder[2], folder[3]) + FOLDER_SETTLED_NS
        if time.time_ns() >= settles_at:
            self._quiet_folder = folder
        else:
            self._quiet_folder, self._settles_at_ns = None, settles_at

    def reopen(self, connection: sqlite3.Connection) -> sqlite3.Connection:
        """The -wal (or the main file) at the path is no longer the one being written.

        Whatever was committed since lives in an unlinked inode no restart would
        find. Copy it into the main file and reopen at the path, so new records go to
        files a restart reads; reattach() then checks that the records survived the move.
        """
        with contextlib.suppress(sqlite3.Error):
            _wal_checkpoint(connection, "TRUNCATE")
        connection.close()
        try:
            return connect(self._path, "rw")
        except JournalError as exc:
            raise self._cannot_reopen(exc) from None

    def reattach(self, connection: sqlite3.Connection, last_id: int, head_hash: str) -> None:
        """Write through the connection reopen() made, and report the move; if the records did
        not survive it, raise instead, so nothing more is acknowledged."""
        try:
            set_durable(connection, self._path)
            head = connection.execute("SELECT last_id, head_hash FROM chain_head").fetchone()
        except (sqlite3.Error, JournalError) as exc:
            raise self._cannot_reopen(exc) from None
        if tuple(head) != (last_id, head_hash):
            raise JournalStorageError(
                f"{self._moved()}: the journal there ends at record {head[0]}, not {last_id}: "
                "stop the service and restore the journal; unacknowledged cards stay on the "
                "device"
            )
        self._files = _file_identity(self._path)
        self._quiet_folder, self._settles_at_ns = None, 0
        self._notices.append(
            StorageNotice(
                StorageProblem.FILES_REPLACED,
                f"{self._moved()}; every record was saved into {self._path.name} and the "
                "journal reopened: find out who removed them",
            )
        )

    def _moved(self) -> str:
        return f"{self._path}: the journal's files were removed or replaced while the service ran"

    def _cannot_reopen(self, exc: Exception) -> JournalStorageError:
        return JournalStorageError(
            f"{self._moved()} and cannot be reopened ({exc}): stop the service and restore the "
            "journal from its backup; unacknowledged cards stay on the device"
        )

    def checkpoint_passively(self, connection: sqlite3.Connection) -> None:
        """Copy the WAL into the main file; a failure or a WAL that cannot shrink is reported.

        SQLite's own automatic checkpoint is off because it fails silently: with the
        main file unwritable the WAL grew by megabytes a shoe and nobody knew.
        """
        try:
            _busy, frames, copied = _wal_checkpoint(connection, "PASSIVE")
        except sqlite3.Error as exc:
            fault = storage_error(self._path, exc, "checkpointing the WAL into the journal")
            self._notices.append(StorageNotice(StorageProblem.CHECKPOINT_FAILING, str(fault)))
            return
        if frames - copied >= WAL_ALARM_FRAMES:
            detail = (
                f"{wal_path(self._path)}: {frames - copied} WAL frames cannot be copied into "
                "the journal because a reader holds an old snapshot: close long-running "
                "readers of the journal"
            )
            self._notices.append(StorageNotice(StorageProblem.CHECKPOINT_FAILING, detail))


def _wal_checkpoint(connection: sqlite3.Connection, mode: str) -> tuple[int, int, int]:
    row = connection.execute(f"PRAGMA wal_checkpoint({mode})").fetchone()
    return int(row[0]), int(row[1]), int(row[2])


def _file_identity(path: Path) -> tuple[tuple[int, int] | None, ...]:
    """Which inodes the journal's main file and -wal are at the path, to notice a swap."""
    identity: list[tuple[int, int] | None] = []
    for part in (path, wal_path(path)):
        try:
            status = os.stat(part)
        except FileNotFoundError:
            identity.append(None)
        else:
            identity.append((status.st_dev, status.st_ino))
    return tuple(identity)


def _folder_stamp(folder: Path) -> _FolderStamp | None:
    """The folder's identity and times; None when it is gone (its files are then too)."""
    try:
        status = os.stat(folder)
    except FileNotFoundError:
        return None
    return (status.st_dev, status.st_ino, status.st_mtime_ns, status.st_ctime_ns)
