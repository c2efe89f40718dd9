"""For the floor benchmark only: many tables' uplinks in one process, one thread each.

A real floor runs one `shoectl uplink` per table PC. Two hundred Python
processes on the benchmark's two cores would measure process start-up and
scheduling, not the feed, so the simulation runs the same Uplink class for
many journals in threads of one process (docs/performance.md says so). At
most GROUP journals a process: paho waits on its sockets with select(),
which cannot watch a descriptor above 1023, and each uplink holds about six
(its journal, WAL and index, its socket and paho's wake-up pair).

    .venv/bin/python bench/floor_uplinks.py BROKER_URL STATE_DIR JOURNAL...
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
from pathlib import Path

from cardshoe.controller.floor.broker import BrokerSettings
from cardshoe.controller.floor.uplink import Uplink, UplinkSettings

GROUP = 50
"""Uplinks a process, so every descriptor stays below select()'s 1024."""


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(threadName)s %(message)s")
    broker_url, state_dir, *journals = sys.argv[1:]
    if len(journals) > GROUP:
        raise SystemExit(f"at most {GROUP} journals a process, not {len(journals)}")
    uplinks = [
        Uplink(
            UplinkSettings(
                journal_path=Path(path),
                broker=BrokerSettings(broker_url),
                site="bench",
                state_dir=Path(state_dir),
                resend_after_s=30.0,
            )
        )
        for path in journals
    ]
    threads = [threading.Thread(target=uplink.run, daemon=True) for uplink in uplinks]
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    for thread in threads:
        thread.start()
    print("uplinks running", flush=True)
    stopped.wait()
    for uplink in uplinks:
        uplink.stop()
    for thread in threads:
        thread.join(timeout=10)


if __name__ == "__main__":
    main()
