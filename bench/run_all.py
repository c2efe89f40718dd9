"""Run every benchmark and write the results table to docs/performance.md (`make bench`).

BENCHES lists the bench modules in the order of the table, the issue's
order: each module's measure() returns its rows. A new measurement is a new
bench_<name>.py with a measure(), and its name here. Benchmarks report;
nothing here fails on a missed target.

    .venv/bin/python bench/run_all.py [--output docs/performance.md]
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import os
import platform
import subprocess
from pathlib import Path

from cpu_use import CpuSnapshot, CpuUse
from results import Measurement, print_measurements

REPO = Path(__file__).resolve().parent.parent
BENCHES = (
    "bench_session",
    "bench_pty_echo",
    "bench_link",
    "bench_durable_commit",
    "bench_controller",
    "bench_rules",
    "bench_cli",
    "bench_technician",
    "bench_service",
    "bench_journal_growth",
    "bench_soak",
    "bench_scoreboard",
    "bench_protection",
    "bench_floor",
    "bench_pit",
)


def run_benchmarks() -> list[Measurement]:
    measurements: list[Measurement] = []
    for name in BENCHES:
        print(f"running {name} ...", flush=True)
        found = importlib.import_module(name).measure()
        print_measurements(found)
        measurements.extend(found)
    return measurements


def machine_lines(load_before: float, run: CpuUse) -> list[str]:
    return [
        f"- machine: {platform.machine()}, {_cpu_model()}, {_cores()} cores, "
        f"Linux {platform.release()}",
        f"- load average (1 min): {load_before:.2f} before the run, "
        f"{os.getloadavg()[0]:.2f} after; other work on the cores lowers every figure",
        f"- CPU steal during the run: {run.stolen:.1%} of the cores' time went to the "
        "hypervisor's other guests (a busy host slows every figure, however idle this "
        "machine looks)",
        f"- Python: {platform.python_version()} ({platform.python_implementation()})",
        f"- date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC",
        f"- cardshoe commit: {_commit()}",
    ]


def _cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.partition(":")[2].strip()
    return platform.processor() or "unknown CPU"


def _cores() -> int:
    return len(os.sched_getaffinity(0))


def _commit() -> str:
    """The commit measured, marked when the work tree had uncommitted changes."""
    head = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    if head.returncode != 0:
        return "unknown (not a git checkout)"
    dirty = subprocess.run(
        ["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
    ).stdout
    return head.stdout.strip() + (" with uncommitted changes" if dirty else "")


def summary(measurements: list[Measurement]) -> str:
    with_target = [item for item in measurements if item.target is not None]
    missed = [item.name for item in with_target if not item.met]
    text = f"Targets met: {len(with_target) - len(missed)} of {len(with_target)}"
    if missed:
        text += "; missed: " + "; ".join(missed)
    return text + "."


def render(measurements: list[Measurement], load_before: float, run: CpuUse) -> str:
    lines = [
        "# Performance",
        "",
        "Written by `make bench` (bench/run_all.py); edit the benchmarks, not this file.",
        "Benchmarks report and tests never assert a time; the targets come from issues 7 and 13.",
        "",
        *machine_lines(load_before, run),
        "",
        summary(measurements),
        "",
        "| measurement | value | target | met? | how |",
        "|---|---|---|---|---|",
    ]
    for item in measurements:
        target = item.target.text if item.target else "—"
        lines.append(
            f"| {item.name} | {item.value_text()} | {target} | {item.met_text()} | {item.detail} |"
        )
    lines += [
        "",
        "Run one benchmark alone with `.venv/bin/python bench/<module>.py`; each prints its rows.",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=REPO / "docs" / "performance.md")
    output = parser.parse_args().output
    load_before = os.getloadavg()[0]
    before = CpuSnapshot.take({})
    measurements = run_benchmarks()
    run = CpuUse.between(before, CpuSnapshot.take({}))
    output.write_text(render(measurements, load_before, run), encoding="utf-8")
    print(summary(measurements))
    print(f"wrote {output}")


if __name__ == "__main__":
    main()
