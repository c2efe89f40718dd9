"""Issue 21 case 10: the wall clock set back 3,600 s mid-shoe went unnoticed.

The real service deals a shoe on the simulated shoe over a real pty, and its
wall clock is stepped back an hour while it deals. Setting this machine's
clock would step every other process's too, so the service's Python reads
its wall clock (time.time_ns, what the journal stamps records with) less an
offset the test writes to a file: the service itself is untouched, as under
libfaketime (whose Debian build breaks Python's time.sleep).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.service_support import (
    open_manual_shoe,
    running_service,
    simulated_table,
    wait_until,
)

from cardshoe.controller.journal.store import Journal
from cardshoe.controller.journal.transaction import CLOCK_STEPPED

STEPPED_CLOCK = """
import os
import time

_wall_clock = time.time_ns
_offset_file = os.environ["CARDSHOE_TEST_CLOCK_BACK_S"]


def _stepped_back() -> int:
    with open(_offset_file) as offset:
        return _wall_clock() - int(offset.read() or 0) * 1_000_000_000


time.time_ns = _stepped_back
"""
HOUR_S = 3600


@pytest.fixture
def stepped_clock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A file holding how many seconds the services started now see their clock set back."""
    prelude = tmp_path / "prelude"
    prelude.mkdir()
    (prelude / "sitecustomize.py").write_text(STEPPED_CLOCK)
    back = tmp_path / "clock-back-s"
    back.write_text("0")
    monkeypatch.setenv("PYTHONPATH", str(prelude))
    monkeypatch.setenv("CARDSHOE_TEST_CLOCK_BACK_S", str(back))
    return back


def test_issue21_case_10_the_wall_clock_set_back_an_hour_mid_shoe_is_a_clock_stepped_alarm(
    tmp_path: Path, stepped_clock: Path
) -> None:
    table_folder = tmp_path / "table"
    table_folder.mkdir()
    with simulated_table(table_folder, pull_interval_s=0.05) as table:
        with running_service(table) as service:
            service.wait_for_notification("READY=1")
            open_manual_shoe(table, "S1")
            wait_until(lambda: table.status()["rounds_finished"] >= 2, "two rounds")
            stepped_clock.write_text(str(HOUR_S))
            wait_until(lambda: table.status()["rounds_finished"] >= 4, "two more rounds")
            assert service.stop() == 0
        with running_service(table) as restarted:
            restarted.wait_for_notification("READY=1")
            assert table.status()["shoe_id"] == "S1"
            assert restarted.stop() == 0
    with Journal.open_readonly(table.journal_path) as journal:
        assert journal.verify().ok
        records = list(journal.records())
    steps = [index for index, record in enumerate(records) if record.kind == CLOCK_STEPPED]
    assert len(steps) == 1
    before, step, after = records[steps[0] - 1 : steps[0] + 2]
    assert step.payload["kind"] == "clock"
    assert HOUR_S - 5 < step.payload["stepped_back_s"] < HOUR_S + 5
    assert "the wall clock went back" in step.payload["detail"]
    assert before.time_ns - step.time_ns > (HOUR_S - 5) * 1_000_000_000
    assert step.time_ns <= after.time_ns
    assert (step.shoe_id, after.shoe_id) == ("S1", "S1")
    assert [record.id for record in records] == sorted(record.id for record in records)
