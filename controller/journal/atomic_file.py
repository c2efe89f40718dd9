"""Small files replaced whole: written to a temporary name, flushed, renamed over the old one.

After a power cut such a file holds either its old content or its new one,
never half of each; the uplink's positions and a table's signing key are kept
this way.
"""

from __future__ import annotations

import os
from pathlib import Path

from cardshoe.controller.own_files import sync_folder


def replace_file(path: Path, body: bytes, mode: int) -> None:
    """Write body to path atomically, the file created with mode (before the umask)."""
    temporary = path.with_name(path.name + ".tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, mode)
    try:
        os.write(fd, body)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temporary, path)
    sync_folder(path.parent)
