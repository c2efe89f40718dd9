"""Remaining-shoe pricing off the session thread: the next card never waits for it.

One exact pricing of every bet takes 5-10 ms of pure Python (rules/odds.py).
On the session thread it sat between a round's result and the next card's
acknowledgement; at a fast automatic machine that was the largest share of
the table's wire-to-decision time. The worker prices in submission order, so
alarms stay in round order; it keeps at most MAX_PENDING rounds waiting, so a
machine dealing faster than the pricing (the simulator, a loaded PC) cannot
grow a backlog without end: the oldest waiting round goes unpriced, and the
next pricing, of a later remaining shoe, alarms for every bet then favoured
that has not alarmed. The worker lives only while
there is work: a session needs no close, and a process leaves no thread behind
when the table goes quiet. Callers that must see every pricing done (the end
of a shoe, the end of a run) call drain().
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar

import structlog

log = structlog.get_logger(__name__)

Job = TypeVar("Job")

MAX_PENDING = 32
"""Rounds waiting to be priced, at most; about a third of a second of pricing."""


class PricingWorker(Generic[Job]):
    """Runs do(job) for each submitted job, in order, on a thread that exits when idle."""

    def __init__(self, do: Callable[[Job], None], name: str = "protection-pricing") -> None:
        self._do = do
        self._name = name
        self._jobs: deque[Job] = deque()
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None
        self._skipped = 0
        """Jobs dropped since the backlog last emptied, logged once it has."""

    def submit(self, job: Job) -> None:
        with self._changed:
            if len(self._jobs) >= MAX_PENDING:
                self._jobs.popleft()
                self._skipped += 1
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
            log.warning("rounds left unpriced while the pricing was behind", rounds=self._skipped)
            self._skipped = 0
