"""The journal's exceptions, and SQLite's complaints turned into one line with the fix.

Separate from the store because every part of the journal raises them (opening, appending,
reading, verifying, watching the files) and every caller up to the command line tells them
apart: a busy journal, a damaged one, one that cannot be written.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from cardshoe.controller.errors import UserError


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


_T = TypeVar("_T")

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


def guarded(path: Path, doing: str, action: Callable[..., _T], *arguments: Any) -> _T:
    """Run one SQLite call; a failure becomes the journal's one-line storage error."""
    try:
        return action(*arguments)
    except sqlite3.Error as exc:
        raise storage_error(path, exc, doing) from None
