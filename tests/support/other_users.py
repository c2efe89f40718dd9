"""Running the real CLI as another real user, so the kernel (SO_PEERCRED) says who asks."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

NOBODY, DAEMON = 65534, 1

needs_other_uids = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="needs root and setpriv to run clients under other real uids",
)


def as_user(uid: int, socket: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    """`shoectl ARGUMENTS --socket SOCKET` under `setpriv --reuid UID` (its group too)."""
    command = [
        "setpriv",
        f"--reuid={uid}",
        f"--regid={uid}",
        "--clear-groups",
        sys.executable,
        "-m",
        "cardshoe.controller.cli",
        *arguments,
        "--socket",
        str(socket),
    ]
    environment = {**os.environ, "HOME": "/nonexistent", "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(command, capture_output=True, text=True, env=environment, timeout=60)
