"""Issue 11 case 18, the storage-fault campaign: one table, one simulated shoe, and the
journal on a small tmpfs, put through every storage fault in turn with a restart after each.

1. the disk driven to full: the free-space floor holds the table first; a start on a
   full disk is one line and exit 1; the hold survives a restart, and freeing space
   resumes the shoe;
2. the -wal made unwritable mid-run (the kernel's file size limit, set on the running
   service with prlimit): one line naming the path, exit 1, and the restart resumes;
3. the journal corrupted while stopped: the restart refuses in one line, exit 1; the
   backup taken at the last stop is restored and the table goes on;
4. the journal deleted while stopped: the restart refuses in one line, exit 2; a new
   journal (shoectl journal init) holds journal_behind_device until a person clears it.

Throughout, no acknowledged event is lost or invented: the device's acknowledged seq is
always the journal's last device seq, and the journal's device seqs run without a gap
except where the journal says why (journal_behind_device). Mounts and prlimit need root:
CI here runs as root; elsewhere the test says so in its skip reason.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest
from support.service_support import (
    Table,
    open_manual_shoe,
    running_service,
    wait_until,
)
from support.session_support import assert_every_event_journaled_once, journaled
from support.shoectl import ShoectlRunner
from support.storage_support import device_events, fill, table_on_small_disk

from cardshoe.controller.procedure.holds import HoldReason
from cardshoe.controller.service.control_client import request

MB = 1024 * 1024
FLOOR_MB = 2
WAL_LIMIT_BYTES = 256 * 1024
"""RLIMIT_FSIZE for the running service: the -wal cannot grow past it."""
JOURNAL_PARTS = ("", "-wal", "-shm")


def rounds_finished(table: Table) -> int:
    return table.status()["rounds_finished"]


def holds(table: Table) -> list[str]:
    return table.status()["holds"]


def one_more_round(table: Table) -> None:
    rounds = rounds_finished(table)
    wait_until(lambda: rounds_finished(table) > rounds, "one more round")


def assert_nothing_lost_or_invented(table: Table) -> None:
    assert_every_event_journaled_once(table.journal_path)
    assert table.core.link.last_acked_seq == device_events(table.journal_path)[-1].device_seq


def error_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("shoectl: error: ")]


def test_case18_storage_fault_campaign(tmp_path: Path, shoectl: ShoectlRunner) -> None:
    if os.geteuid() != 0:
        pytest.skip("the campaign mounts a tmpfs and sets prlimit: it needs root (CI has it)")
    if shutil.which("prlimit") is None:
        pytest.skip("prlimit (util-linux) is missing")
    with table_on_small_disk(tmp_path, "8m", floor_mb=FLOOR_MB) as (table, disk):
        config = str(table.config_path)

        # 1. the disk driven to full: held before it is, across a restart
        with running_service(table) as service:
            service.wait_for_notification("READY=1")
            open_manual_shoe(table, "SHOE-1")
            wait_until(lambda: rounds_finished(table) >= 1, "a round")
            filler = fill(disk, leave_bytes=FLOOR_MB * MB // 2)
            wait_until(lambda: HoldReason.JOURNAL_SPACE_LOW in holds(table), "the space hold")
            assert service.stop() == 0, service.log_tail()
        assert_nothing_lost_or_invented(table)
        full = fill(disk, name="the-last-bytes")
        refused = shoectl("run", "--config", config, "--device-wait", "5")
        assert refused.returncode == 1, refused.stderr
        (line,) = refused.stderr.splitlines()
        assert f"{table.journal_path}: database or disk is full" in line
        full.unlink()
        assert_nothing_lost_or_invented(table)
        with running_service(table) as service:
            service.wait_for_notification("READY=1")
            assert HoldReason.JOURNAL_SPACE_LOW in holds(table)
            filler.unlink()
            wait_until(lambda: HoldReason.JOURNAL_SPACE_LOW not in holds(table), "the release")
            one_more_round(table)
            assert service.stop() == 0, service.log_tail()
        assert_nothing_lost_or_invented(table)

        # 2. the -wal made unwritable mid-run
        with running_service(table) as service:
            service.wait_for_notification("READY=1")
            subprocess.run(
                ["prlimit", f"--pid={service.process.pid}", f"--fsize={WAL_LIMIT_BYTES}"],
                check=True,
            )
            assert service.process.wait(60) == 1
            log = service.log_tail()
        (line,) = error_lines(log)
        assert str(table.journal_path) in line and "file size limit" in line
        assert "Traceback" not in log
        assert_nothing_lost_or_invented(table)
        with running_service(table) as service:
            service.wait_for_notification("READY=1")
            one_more_round(table)
            assert service.stop() == 0, service.log_tail()
        assert_nothing_lost_or_invented(table)

        # 3. the journal corrupted while stopped, then restored from the backup
        backup = tmp_path / "backup"
        backup.mkdir()
        shutil.copy(table.journal_path, backup / table.journal_path.name)
        spoil_every_page_but_the_first(table.journal_path, random.Random(18))
        refused = shoectl("run", "--config", config, "--device-wait", "5")
        assert refused.returncode == 1, refused.stderr
        (line,) = refused.stderr.splitlines()
        assert str(table.journal_path) in line
        for part in JOURNAL_PARTS:
            Path(f"{table.journal_path}{part}").unlink(missing_ok=True)
        shutil.copy(backup / table.journal_path.name, table.journal_path)
        with running_service(table) as service:
            service.wait_for_notification("READY=1")
            one_more_round(table)
            assert service.stop() == 0, service.log_tail()
        assert_nothing_lost_or_invented(table)
        acked_before_loss = table.core.link.last_acked_seq

        # 4. the journal deleted while stopped
        for part in JOURNAL_PARTS:
            Path(f"{table.journal_path}{part}").unlink(missing_ok=True)
        refused = shoectl("run", "--config", config, "--device-wait", "5")
        assert refused.returncode == 2, refused.stderr
        assert len(refused.stderr.splitlines()) == 1 and "no journal" in refused.stderr
        assert shoectl("journal", "init", "--config", config).returncode == 0
        with running_service(table) as service:
            service.wait_for_notification("READY=1")
            assert HoldReason.JOURNAL_BEHIND_DEVICE in holds(table)
            request(table.socket_path, "clear-hold", reason=HoldReason.JOURNAL_BEHIND_DEVICE)
            open_manual_shoe(table, "SHOE-2")
            wait_until(lambda: rounds_finished(table) >= 1, "a round of the new shoe")
            assert service.stop() == 0, service.log_tail()
        (behind,) = journaled(table.journal_path, "host.journal_behind_device")
        assert behind.payload == {"journaled_seq": 0, "device_acked_seq": acked_before_loss}
        seqs = [record.device_seq for record in device_events(table.journal_path)]
        assert seqs == list(range(acked_before_loss + 1, acked_before_loss + 1 + len(seqs)))
        assert table.core.link.last_acked_seq == seqs[-1]


def spoil_every_page_but_the_first(path: Path, rng: random.Random) -> None:
    """Random bytes over every page after the header page, as a failing disk leaves a file."""
    size = path.stat().st_size
    with path.open("r+b") as file:
        file.seek(4096)
        file.write(rng.randbytes(size - 4096))
