"""What a technician waits for at the table: whole-process time of `shoectl list`.

`shoectl list` is the first command of the technician's guide (find the
shoe), so it must print within 0.3 s like `shoectl --help`
(bench/bench_cli.py): it imports pyserial's port listing and pyusb, and
nothing else heavy. Measured with interpreter start-up, the median of a few runs.
A measurement, not a test.

    .venv/bin/python bench/bench_technician.py
"""

from __future__ import annotations

import sys

from bench_cli import RUNS, whole_process_seconds
from results import Measurement, Target, print_measurements

LIST_COMMAND = [sys.executable, "-m", "cardshoe.controller.cli", "list"]


def measure() -> list[Measurement]:
    return [
        Measurement(
            "shoectl list (whole process)",
            whole_process_seconds(LIST_COMMAND),
            "s",
            Target(0.3, at_least=False, text="< 0.3 s"),
            f"median of {RUNS}, serial and USB discovery included",
        )
    ]


def main() -> None:
    print_measurements(measure())


if __name__ == "__main__":
    main()
