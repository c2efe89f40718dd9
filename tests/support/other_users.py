"""Running the real CLI as another real user, so the kernel (SO_PEERCRED) says who asks."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

NOBODY, DAEMON = 65534, 1

needs_other_uids = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="needs root and setpriv to run clients under other real uids",
)


def open_to_other_users(socket: Path) -> None:
    """Let every uid connect to the control socket (the service makes it 0660), so that the
    service, not the file mode, decides what each of them may do."""
    socket.chmod(socket.stat().st_mode | stat.S_IROTH | stat.S_IWOTH)


def as_user(uid: int, socket: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    """`shoectl ARGUMENTS --socket SOCKET` under `setpriv --reuid UID` (its group too)."""
    return shoectl_as(uid, *arguments, "--socket", str(socket))


def shoectl_as(uid: int, *arguments: str) -> subprocess.CompletedProcess[str]:
    """`shoectl ARGUMENTS` under `setpriv --reuid UID` (its group too, no other groups)."""
    return _shoectl(as_uid_prefix(uid), arguments)


def as_uid_prefix(uid: int) -> list[str]:
    """The command words that run what follows them as uid, its group too, no other groups."""
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]


def unprivileged_uid() -> int:
    """A uid the kernel checks file permissions for: this one, or nobody when tests run as root."""
    return NOBODY if os.geteuid() == 0 else os.geteuid()


def shoectl_unprivileged(*arguments: str) -> subprocess.CompletedProcess[str]:
    """`shoectl ARGUMENTS` as unprivileged_uid(): root may write anywhere, so it runs as nobody."""
    if os.geteuid() == 0:
        return shoectl_as(NOBODY, *arguments)
    return _shoectl([], arguments)


def _shoectl(prefix: list[str], arguments: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    command = [*prefix, sys.executable, "-m", "cardshoe.controller.cli", *arguments]
    environment = {**os.environ, "HOME": "/nonexistent", "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(command, capture_output=True, text=True, env=environment, timeout=60)
