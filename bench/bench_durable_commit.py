"""The durable journal commit of one device event, as a distribution for the results table.

bench/bench_journal.py does the committing (one transaction per device
event, WAL with synchronous=FULL); this module turns its timings into p50
and p99, the part of the wire-to-decision budget (p99 under 5 ms) that the
disk takes before the host may acknowledge a card. A measurement, not a test.

    .venv/bin/python bench/bench_durable_commit.py [--events 2000]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from bench_journal import commit_events
from results import Measurement, percentile, print_measurements

from cardshoe.controller.journal.store import Journal

RECORDS_PER_CARD = 3
"""A card event with the procedure records it causes (assigned to a hand, totals)."""


def measure(events: int = 2000) -> list[Measurement]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "journal.sqlite"
        with Journal.open(path, table_id="BENCH", create=True) as journal:
            durability = (
                f"{journal.durability.journal_mode} synchronous={journal.durability.synchronous}"
            )
            timings = commit_events(journal, events, RECORDS_PER_CARD)
    detail = f"{events} commits of {RECORDS_PER_CARD} records, {durability}, on this disk"
    return [
        Measurement(
            f"journal commit per card {name}", percentile(timings, p) * 1e6, "µs", None, detail
        )
        for name, p in (("p50", 50), ("p99", 99))
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=2000, help="committed device events")
    print_measurements(measure(parser.parse_args().events))


if __name__ == "__main__":
    main()
