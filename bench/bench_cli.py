"""shoectl as a technician runs it: whole-process time of `--help` and of `odds`.

Both include interpreter start-up, because that is what a person at the
table waits for. `shoectl --help` must stay under 0.3 s (the reason command
modules import heavy libraries lazily); `shoectl odds` for 8-deck Punto
Banco under 1 s (bench/bench_odds.py). A measurement, not a test.

    .venv/bin/python bench/bench_cli.py
"""

from __future__ import annotations

import subprocess
import sys

from bench_odds import ODDS_COMMAND
from results import Measurement, Target, median_seconds, print_measurements

HELP_COMMAND = [sys.executable, "-m", "cardshoe.controller.cli", "--help"]
RUNS = 5
"""Runs of each whole-process line; the line is their median."""


def whole_process_seconds(command: list[str]) -> float:
    return median_seconds(
        RUNS, lambda: subprocess.run(command, check=True, capture_output=True, text=True)
    )


def measure() -> list[Measurement]:
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
    ]


def main() -> None:
    print_measurements(measure())


if __name__ == "__main__":
    main()
