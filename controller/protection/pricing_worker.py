"""Remaining-shoe pricing off the session thread: the next card never waits for it.

One exact pricing of every bet takes 5-10 ms of pure Python (rules/odds.py).
On the session thread it sat between a round's result and the next card's
acknowledgement; at a fast automatic machine that was the largest share of
the table's wire-to-decision time. The worker does one job at a time and
keeps only the latest job waiting: a round submitted while another waits
replaces it, so the pricing never falls behind the table however fast a
machine deals (the simulator, a loaded PC, a pricing child at idle priority)
and only the latest remaining shoe is priced. The next pricing, of that later
shoe, alarms for every bet then favoured that has not alarmed (watcher.py).
The worker lives only while there is work: a session needs no close, and a
process leaves no thread behind when the table goes quiet. Callers that must
see every pricing done (the end of a shoe, the end of a run) call drain().
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar

import structlog

log = structlog.get_logger(__name__)

Job = TypeVar("Job")


class PricingWorker(Generic[Job]):
    """Runs do(job) on a thread that exits when idle: the job under way, then the latest
    submitted since it began."""

    def __init__(self, do: Callable[[Job], None], name: str = "protection-pricing") -> None:
        self._do = do
        self._name = name
        self._jobs: deque[Job] = deque(maxlen=1)
        """The job waiting, if any: appending a newer one drops it."""
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None
        self._skipped = 0
        """Jobs replaced by a newer one since the worker last went idle, logged then."""

    def submit(self, job: Job) -> None:
        with self._changed:
            self._skipped += len(self._jobs)
            self._jobs.append(job)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()

    def drain(self) -> None:
        """Return once every job submitted so far is done and the thread has ended."""
        with self._changed:
            thread = self._thread
            while self._thread is not None:
                self._changed.wait()
        if thread is not None:
            thread.join()

    def _run(self) -> None:
        while True:
            with self._changed:
                if not self._jobs:
                    self._thread = None
                    self._changed.notify_all()
                    self._report_skipped()
                    return
                job = self._jobs.popleft()
            try:
                self._do(job)
            except Exception:
                # Surveillance must never stop the table; the next round prices the shoe again.
                log.exception("remaining-shoe pricing failed; the next round prices again")

    def _report_skipped(self) -> None:
        if self._skipped:
            log.info("rounds not priced: a later round's remaining shoe was", rounds=self._skipped)
            self._skipped = 0
