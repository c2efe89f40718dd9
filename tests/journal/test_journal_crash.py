"""A writer killed with SIGKILL leaves a journal that verifies and holds only whole transactions."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from cardshoe.controller.journal.store import Journal

PARTS = 3

# The child writes groups of PARTS records, one transaction per group, and
# prints each group number once its transaction has committed. With "hang"
# it stops half-way through group 5, transaction open, and waits to be killed.
CHILD = f"""
import sys, time
from cardshoe.controller.journal.store import Journal

path, mode = sys.argv[1], sys.argv[2]
with Journal.open(path, table_id="T1", create=True) as journal:
    for group in range(100_000):
        with journal.transaction() as tx:
            for part in range({PARTS}):
                tx.append(
                    "part",
                    {{"group": group, "part": part}},
                    shoe_id="S1",
                    round_no=group,
                    device_serial="SN1",
                    device_seq=group * {PARTS} + part,
                )
                if mode == "hang" and group == 5 and part == 1:
                    print("mid-transaction", flush=True)
                    time.sleep(60)
        print(group, flush=True)
"""


def run_and_kill(path: Path, mode: str, kill_after: str) -> list[int]:
    """Start the writer, SIGKILL it once it prints kill_after; return the groups it committed."""
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), mode], stdout=subprocess.PIPE, text=True
    )
    committed: list[int] = []
    try:
        assert child.stdout is not None
        for line in child.stdout:
            if line.strip() == kill_after:
                os.kill(child.pid, signal.SIGKILL)
                break
            committed.append(int(line))
    finally:
        child.kill()
        child.wait(timeout=30)
        if child.stdout is not None:
            child.stdout.close()
    assert child.returncode == -signal.SIGKILL
    return committed


def groups_in(path: Path) -> Counter[int]:
    with Journal.open_readonly(path) as journal:
        assert journal.verify().ok
        return Counter(record.payload["group"] for record in journal.records())


def test_kill_inside_an_open_transaction_loses_only_that_transaction(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    committed = run_and_kill(path, "hang", "mid-transaction")
    assert committed == [0, 1, 2, 3, 4]
    assert groups_in(path) == Counter({group: PARTS for group in committed})


@pytest.mark.parametrize("kill_after", ["40", "97"])
def test_kill_while_writing_fast_keeps_every_committed_transaction(
    tmp_path: Path, kill_after: str
) -> None:
    path = tmp_path / "journal.sqlite"
    committed = run_and_kill(path, "run", kill_after)
    groups = groups_in(path)
    assert set(committed) <= set(groups)
    assert all(count == PARTS for count in groups.values()), groups
    assert sorted(groups) == list(range(len(groups)))


def test_writer_resumes_after_a_kill(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    run_and_kill(path, "hang", "mid-transaction")
    with Journal.open(path, table_id="T1", create=True) as journal:
        assert journal.last_device_seq("SN1") == 5 * PARTS - 1
        with journal.transaction() as tx:
            tx.append("resumed", {}, shoe_id="S1", round_no=5, device_serial=None)
        result = journal.verify()
    assert result.ok
    assert result.records == 5 * PARTS + 1
