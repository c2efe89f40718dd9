"""bench/cpu_use.py reads who used the cores from /proc: checked against processes whose CPU
is known, so a scaling line's accounting cannot silently read zeros or the wrong processes."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"

BURN = "import time\nend = time.process_time() + 0.6\nwhile time.process_time() < end: pass\n"


@pytest.fixture
def cpu_use(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCH))
    return importlib.import_module("cpu_use")


def test_a_window_counts_the_cpu_of_a_process_started_inside_it(cpu_use: ModuleType) -> None:
    pids: list[int] = []
    groups = {"burner": lambda: pids, "idle": lambda: []}
    before = cpu_use.CpuSnapshot.take(groups)
    burner = subprocess.Popen([sys.executable, "-c", BURN + "input()"], stdin=subprocess.PIPE)
    pids.append(burner.pid)
    try:
        deadline = time.monotonic() + 30
        while cpu_use.process_cpu_s(burner.pid) < 0.55 and time.monotonic() < deadline:
            time.sleep(0.05)
        use = cpu_use.CpuUse.between(before, cpu_use.CpuSnapshot.take(groups))
    finally:
        burner.communicate(b"\n")
    assert 0.55 <= use.seconds["burner"] < 5.0
    assert use.seconds["idle"] == 0.0
    assert 0.0 < use.busy <= 1.0
    assert 0.0 <= use.stolen <= 1.0


def test_a_process_gone_counts_nothing_and_children_finds_a_parents_own(
    cpu_use: ModuleType,
) -> None:
    child = subprocess.Popen([sys.executable, "-c", "input()"], stdin=subprocess.PIPE)
    try:
        assert child.pid in cpu_use.children(os.getpid())
        assert child.pid not in cpu_use.children(child.pid)
    finally:
        child.communicate(b"\n")
    assert cpu_use.process_cpu_s(child.pid) == 0.0
