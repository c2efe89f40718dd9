"""shoectl as a technician runs it: whole-process time of `--help` and of `odds`.

Both include interpreter start-up, because that is what a person at the
table waits for. `shoectl --help` must stay under 0.3 s (the reason command
modules import heavy libraries lazily); `shoectl odds` for 8-deck Punto
Banco under 1 s (bench/bench_odds.py); `shoectl odds --seen` for 8 decks
within 0.15 s of `--help` (issue 22: the pricing table ships built), the
median of runs taken in turn with `--help`'s. A measurement, not a test.

    .venv/bin/python bench/bench_cli.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys

from bench_odds import ODDS_COMMAND
from results import Measurement, Target, median_seconds, print_measurements

HELP_COMMAND = [sys.executable, "-m", "cardshoe.controller.cli", "--help"]
SEEN_COMMAND = [*ODDS_COMMAND, "--seen", "5H,KD,3C,9S,QH,2C,7D,AS"]
RUNS = 5
"""Runs of each whole-process line; the line is their median."""
TURNS = 7
"""Runs of odds --seen and --help for a median, taken in turn so load falls on both alike."""


def whole_process_seconds(command: list[str], runs: int = RUNS) -> float:
    return median_seconds(
        runs, lambda: subprocess.run(command, check=True, capture_output=True, text=True)
    )


def one_run_seconds(command: list[str]) -> float:
    return whole_process_seconds(command, runs=1)


def seen_over_help_seconds() -> tuple[float, float, float]:
    """Median whole-process seconds of `odds --seen` and `--help`, and the difference."""
    seen, helps = [], []
    for _ in range(TURNS):
        seen.append(one_run_seconds(SEEN_COMMAND))
        helps.append(one_run_seconds(HELP_COMMAND))
    return (
        statistics.median(seen),
        statistics.median(helps),
        statistics.median([odds - help for odds, help in zip(seen, helps, strict=True)]),
    )


def measure() -> list[Measurement]:
    seen, helps, over = seen_over_help_seconds()
    return [
        Measurement(
            "shoectl --help (whole process)",
            whole_process_seconds(HELP_COMMAND),
            "s",
            Target(0.3, at_least=False, text="< 0.3 s"),
            f"median of {RUNS}",
        ),
        Measurement(
            "shoectl odds --game punto-banco --decks 8 (whole process)",
            whole_process_seconds(ODDS_COMMAND),
            "s",
            Target(1.0, at_least=False, text="< 1 s"),
            f"median of {RUNS}, exact enumeration",
        ),
        Measurement(
            "shoectl odds --seen (8 decks) over shoectl --help (whole processes)",
            over,
            "s",
            Target(0.15, at_least=False, text="< 0.15 s"),
            f"median of {TURNS} differences, each run in turn with --help; medians "
            f"{seen:.3f} s and {helps:.3f} s",
        ),
    ]


def main() -> None:
    print_measurements(measure())


if __name__ == "__main__":
    main()
