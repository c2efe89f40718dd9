"""Measure durable journal commits on this disk: what one device event costs before its ack.

The controller acknowledges a device event only after its transaction
commits with synchronous=FULL, so the commit time bounds how fast cards can
be journaled. Prints commits per second and microseconds per commit for
one record per commit (a bare device event) and for a device event with
the procedure records it causes, then how long verify() takes over the
result. A measurement, not a test: it asserts nothing.

    .venv/bin/python bench/bench_journal.py [--events 3000]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from cardshoe.controller.journal.store import Journal

CARD_EVENT = {"card": "9H", "face_up": False, "reader": "optical", "tag": "3f2a91c0"}
PROCEDURE_RECORD = {"hand": "banker", "position": 2, "total": 7}


def commit_events(journal: Journal, events: int, records_per_event: int) -> list[float]:
    """Seconds per committed transaction, one transaction per device event."""
    timings = []
    for seq in range(events):
        started = time.perf_counter()
        with journal.transaction() as tx:
            tx.append(
                "card_read",
                CARD_EVENT,
                shoe_id="S1",
                round_no=seq // 6,
                device_serial="SN1",
                device_seq=seq,
            )
            for _ in range(records_per_event - 1):
                tx.append(
                    "card_assigned",
                    PROCEDURE_RECORD,
                    shoe_id="S1",
                    round_no=seq // 6,
                    device_serial=None,
                )
        timings.append(time.perf_counter() - started)
    return timings


def report(label: str, timings: list[float]) -> None:
    total = sum(timings)
    ordered = sorted(timings)
    p99 = ordered[int(len(ordered) * 0.99) - 1]
    print(
        f"{label:<38} {len(timings) / total:>8,.0f} commits/s  "
        f"median {statistics.median(timings) * 1e6:>6.0f} µs  p99 {p99 * 1e6:>6.0f} µs"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=3000, help="device events per case")
    parser.add_argument("--dir", type=Path, default=None, help="folder on the disk to measure")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=arguments.dir) as folder:
        path = Path(folder) / "journal.sqlite"
        with Journal.open(path, table_id="BENCH", create=True) as journal:
            print(f"journal {path} ({journal.durability})")
            for records_per_event in (1, 3):
                timings = commit_events(journal, arguments.events, records_per_event)
                report(f"1 event = {records_per_event} record(s) per commit", timings)
            started = time.perf_counter()
            result = journal.verify()
            seconds = time.perf_counter() - started
        print(f"verify: {result.records:,} records in {seconds:.3f} s (ok={result.ok})")


if __name__ == "__main__":
    main()
