"""Files the service makes and keeps for itself (lock files), opened so nobody can redirect them.

A lock file is opened read-write and truncated before the pid goes in. Were
it a symbolic link, the service would write through it into whatever the
link names: pointed at the journal, a restart cut the journal to a pid. So
a lock file is made with O_EXCL when it is missing, never opened through a
symbolic link (O_NOFOLLOW), must be a regular file of the user that runs
the service (or root), and its folder must belong to that user (or root) and be
writable by nobody else, so nobody else can put a file or a link there.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from cardshoe.controller.errors import EXIT_DEVICE_UNAVAILABLE, UserError

OWN_FILE_MODE = 0o640
_OPEN_FLAGS = os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC


def check_private_folder(folder: Path, fix: str) -> None:
    """Refuse a folder another user could put files or links in; fix says what else to do."""
    status = folder.stat()
    owners = {0, os.geteuid()}
    if status.st_uid not in owners:
        raise UserError(
            f"{folder} belongs to user id {status.st_uid}, not to the service's user: "
            f"chown it to the service's user, or {fix}",
            EXIT_DEVICE_UNAVAILABLE,
        )
    if status.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise UserError(
            f"{folder} is writable by other users (mode {stat.S_IMODE(status.st_mode):04o}): "
            f"chmod go-w {folder}, or {fix}",
            EXIT_DEVICE_UNAVAILABLE,
        )


def open_own_file(path: Path) -> int:
    """A read-write descriptor of the service's own file at path, made if missing.

    Raises UserError (exit 3) when path is a symbolic link or anything but a regular file
    of this user or root (`shoectl journal init` may have run as root); OSError for other
    failures (the caller names them).
    """
    try:
        descriptor = os.open(path, _OPEN_FLAGS | os.O_CREAT | os.O_EXCL, OWN_FILE_MODE)
    except FileExistsError:
        descriptor = _open_existing(path)
    status = os.fstat(descriptor)
    if not stat.S_ISREG(status.st_mode) or status.st_uid not in {0, os.geteuid()}:
        os.close(descriptor)
        raise UserError(
            f"{path} is not a regular file of the service's user or root: remove it "
            "(the service makes its own)",
            EXIT_DEVICE_UNAVAILABLE,
        )
    return descriptor


def _open_existing(path: Path) -> int:
    try:
        return os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UserError(
                f"{path} is a symbolic link: remove it (the service writes its own file "
                "there and never follows a link)",
                EXIT_DEVICE_UNAVAILABLE,
            ) from None
        raise


def sync_folder(folder: Path) -> None:
    """Make a rename in folder durable: after a power cut the new name is there, not the old."""
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
