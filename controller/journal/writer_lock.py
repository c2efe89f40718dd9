"""One writer per journal file, across processes: the flock on <journal>.lock.

Separate from the store because it guards the file, not the SQLite connection: init takes it
before a journal exists, open before the connection, and both release it on every failure.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from cardshoe.controller.journal.errors import JournalBusy, JournalError
from cardshoe.controller.own_files import open_own_file


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
