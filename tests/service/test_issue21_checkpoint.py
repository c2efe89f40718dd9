"""Issue 21 case 10: after a checkpoint failed for lack of space, a restart wrote on.

The restarted service grew the WAL nothing could copy (4 MB to 8 MB, the main file
staying 28 kB) and stopped again. Here the real service deals on a journal kept on a
small tmpfs, is killed (so its WAL stays uncopied, as after a failed checkpoint), and
the disk is filled until the WAL fits in what is left but cannot be copied into the
main file. The restart must copy it before it writes anything, or write nothing.
"""

from __future__ import annotations

import os
import signal
import sqlite3
from pathlib import Path

from support.service_support import open_manual_shoe, running_service, wait_until
from support.session_support import assert_every_event_journaled_once
from support.storage_support import fill, table_on_small_disk

from cardshoe.controller.journal.store import Journal

PAGE_FILL = 4096


def growth_a_checkpoint_needs(journal: Path) -> int:
    """How many bytes the main file must grow by to take what the WAL holds."""
    connection = sqlite3.connect(f"{journal.as_uri()}?mode=ro", uri=True)
    try:
        pages = connection.execute("PRAGMA page_count").fetchone()[0]
        page_size = connection.execute("PRAGMA page_size").fetchone()[0]
    finally:
        connection.close()
    return pages * page_size - journal.stat().st_size


def record_ids(journal: Path) -> list[int]:
    with Journal.open_readonly(journal) as opened:
        return [record.id for record in opened.records()]


def leave_free(disk: Path, free_bytes: int) -> None:
    """Fill disk until under free_bytes are left, a page at a time at the end."""
    fill(disk, leave_bytes=free_bytes + 128 * 1024)
    with (disk / "last-pages").open("ab") as pages:
        while (status := os.statvfs(disk)).f_bavail * status.f_frsize >= free_bytes:
            pages.write(b"\0" * PAGE_FILL)
            pages.flush()


def test_issue21_case_10_a_restart_after_a_failed_checkpoint_writes_nothing_until_it_checkpoints(
    tmp_path: Path,
) -> None:
    with table_on_small_disk(tmp_path, "16m", floor_mb=0) as (table, disk):
        wal = table.journal_path.with_name(table.journal_path.name + "-wal")
        with running_service(table) as service:
            service.wait_for_notification("READY=1")
            open_manual_shoe(table, "S1")
            wait_until(lambda: table.status()["rounds_finished"] >= 10, "ten rounds")
            service.stop(signal.SIGKILL)
        needed = growth_a_checkpoint_needs(table.journal_path)
        assert needed >= 32 * 1024
        leave_free(disk, needed - 8 * 1024)  # room for a few commits, not for the copy
        wal_before, records_before = wal.read_bytes(), record_ids(table.journal_path)
        with running_service(table) as refused:
            code = refused.process.wait(60)
            log = refused.log_tail()
        errors = [line for line in log.splitlines() if line.startswith("shoectl: error: ")]
        assert code == 1, log
        assert len(errors) == 1 and "Traceback" not in log, log
        assert "-wal holds" in errors[0] and "not yet copied into the journal" in errors[0]
        assert "free space on the journal's filesystem" in errors[0]
        # The copy may have reached part of the main file; the WAL still holds it all.
        assert wal.read_bytes() == wal_before
        assert record_ids(table.journal_path) == records_before
        for filler in disk.iterdir():
            if filler.name in ("filler", "last-pages"):
                filler.unlink()
        with running_service(table) as restarted:
            restarted.wait_for_notification("READY=1")
            rounds = table.status()["rounds_finished"]
            wait_until(lambda: table.status()["rounds_finished"] > rounds, "a round after")
            assert restarted.stop() == 0
        assert_every_event_journaled_once(table.journal_path)
