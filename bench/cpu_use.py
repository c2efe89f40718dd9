"""Who used the cores during a measurement, and how busy the machine was (from /proc).

A scaling line, two processes against one, cannot be read without it: on a
machine whose two cores also run the database and the broker, one process
leaves a core mostly free and two leave none, so what the second process can
add is bounded by the cores, not by the code. The bench prints the share of the
machine each run kept busy and the CPU seconds each part spent, so the reader
sees which of the two limited the line.

Per process, CPU is utime + stime from /proc/<pid>/stat, keyed by pid: a
process that started inside the window counts from zero. Linux only, as the
bench's servers are.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

_TICK_S = 1 / os.sysconf("SC_CLK_TCK")

PidGroups = dict[str, Callable[[], Iterable[int]]]
"""Each part's name with how to find its processes' ids at the moment of a snapshot."""


def _stat_fields(stat: Path) -> list[str] | None:
    """The fields of a /proc/<pid>/stat after the command name (which may hold spaces and
    parentheses), from the state on; None for a process already gone."""
    try:
        text = stat.read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()


def process_cpu_s(pid: int) -> float:
    """The user and system CPU seconds of one process so far; 0 for one already gone."""
    fields = _stat_fields(Path(f"/proc/{pid}/stat"))
    return 0.0 if fields is None else (int(fields[11]) + int(fields[12])) * _TICK_S


def children(parent: int) -> list[int]:
    """The processes whose parent is `parent` (a PostgreSQL server's backends and workers)."""
    found = []
    for entry in Path("/proc").iterdir():
        fields = _stat_fields(entry / "stat") if entry.name.isdigit() else None
        if fields is not None and int(fields[1]) == parent:
            found.append(int(entry.name))
    return found


@dataclass(frozen=True)
class CpuSnapshot:
    busy_s: float
    """CPU seconds the machine spent not idle and not waiting on I/O, all cores together."""
    total_s: float
    """CPU seconds that passed, all cores together."""
    stolen_s: float
    """CPU seconds the hypervisor gave to other guests while this one had work (steal): a
    virtual machine whose host is busy runs every benchmark slower, however idle it looks."""
    by_pid: dict[str, dict[int, float]]

    @classmethod
    def take(cls, groups: PidGroups) -> CpuSnapshot:
        with open("/proc/stat", encoding="ascii") as stat:
            ticks = [int(field) for field in stat.readline().split()[1:]]
        idle = ticks[3] + ticks[4]  # idle and iowait
        return cls(
            (sum(ticks) - idle) * _TICK_S,
            sum(ticks) * _TICK_S,
            ticks[7] * _TICK_S,
            {name: {pid: process_cpu_s(pid) for pid in pids()} for name, pids in groups.items()},
        )


@dataclass(frozen=True)
class CpuUse:
    """What a window between two snapshots cost the machine."""

    busy: float
    """The share of all cores that was busy, 0 to 1."""
    stolen: float
    """The share of all cores' time the hypervisor took (CpuSnapshot.stolen_s), 0 to 1."""
    seconds: dict[str, float]
    """CPU seconds each named part spent in the window."""

    @classmethod
    def between(cls, before: CpuSnapshot, after: CpuSnapshot) -> CpuUse:
        seconds = {
            name: sum(cpu - before.by_pid[name].get(pid, 0.0) for pid, cpu in pids.items())
            for name, pids in after.by_pid.items()
        }
        passed = after.total_s - before.total_s
        return cls(
            (after.busy_s - before.busy_s) / passed,
            (after.stolen_s - before.stolen_s) / passed,
            seconds,
        )
