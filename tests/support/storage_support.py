"""Real storage faults for the journal: a small tmpfs to fill, files to pull away, bytes to spoil.

Mounting needs root (CI here runs as root); elsewhere the tests that need a
mount skip and say so. Nothing is mocked: SQLite meets the kernel's ENOSPC.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from cardshoe.controller.journal.records import Record
from cardshoe.controller.journal.store import Journal
from support.reader_service import simulated_reader_table
from support.service_support import Table, simulated_table

FILLER_CHUNK = 64 * 1024


@contextlib.contextmanager
def small_filesystem(mount_point: Path, size: str) -> Iterator[Path]:
    """A tmpfs of the given size (e.g. "8m") mounted at mount_point for the block."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs to fill needs root (CI here runs as root)")
    mount_point.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=True)


@contextlib.contextmanager
def table_on_small_disk(
    folder: Path, size: str, floor_mb: int, *, line_reader: bool = False
) -> Iterator[tuple[Table, Path]]:
    """A simulated table in folder/table whose journal lives on a tmpfs of size at folder/disk,
    with service.journal_min_free_mb = floor_mb; yields the table and the tmpfs.
    line_reader: the table's device is a line reader (support/reader_service.py)."""
    (folder / "table").mkdir()
    make_table = simulated_reader_table if line_reader else simulated_table
    with (
        small_filesystem(folder / "disk", size) as disk,
        make_table(
            folder / "table",
            journal_dir=disk,
            service_lines=f"journal_min_free_mb = {floor_mb}\n",
        ) as table,
    ):
        yield table, disk


def fill(folder: Path, leave_bytes: int = 0, name: str = "filler") -> Path:
    """Write a filler file until at most leave_bytes remain free (0: until ENOSPC)."""
    filler = folder / name
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        while True:
            status = os.statvfs(folder)
            free = status.f_bavail * status.f_frsize
            if leave_bytes and free - FILLER_CHUNK < leave_bytes:
                return filler
            try:
                os.write(fd, b"\0" * min(FILLER_CHUNK, max(free, 4096)))
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                return filler
    finally:
        os.close(fd)


def device_events(path: Path) -> list[Record]:
    with Journal.open_readonly(path) as journal:
        return [record for record in journal.records() if record.kind.startswith("device.")]
