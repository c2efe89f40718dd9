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

A job also waits for a pause in the dealing: it starts once no card has
come for QUIET_S (the watcher calls dealt() for each), or once it has waited
MAX_WAIT_S, or at once when drain() is called. Idle priority alone did not
keep the pricing from the card: on a 2-core table PC a process busy on the
other core, the pricing child or any other, doubled the durable
wire-to-decision p99 (bench/bench_session.py: 4.2 ms against 2.0 ms), the
disk's completions being served on that core. At a table the pause comes
with every round's bets, so each round is priced a quarter of a second after
its result; a machine that deals without pausing has its latest shoe priced
every MAX_WAIT_S, and the simulator dealing a whole shoe in under a second
has it priced at the shoe's end, by drain().
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar

import structlog

log = structlog.get_logger(__name__)

Job = TypeVar("Job")

QUIET_S = 0.25
"""How long no card must have come before a pricing starts: longer than a card takes to
follow the one before within a round, shorter than any betting time."""
MAX_WAIT_S = 5.0
"""The longest a job waits for that pause: a machine that never pauses is still priced."""


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
        self._last_card = 0.0
        """time.monotonic() of the latest card dealt."""
        self._hurry = False
        """Set by drain(): the waiting job starts without waiting for a pause."""
        self._skipped = 0
        """Jobs replaced by a newer one since the worker last went idle, logged then."""

    def submit(self, job: Job) -> None:
        with self._changed:
            self._skipped += len(self._jobs)
            self._jobs.append(job)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()

    def dealt(self) -> None:
        """A card was dealt: a waiting job waits for the next pause."""
        self._last_card = time.monotonic()

    def drain(self) -> None:
        """Return once every job submitted so far is done and the thread has ended; a job
        waiting for a pause in the dealing starts at once."""
        with self._changed:
            thread = self._thread
            self._hurry = True
            self._changed.notify_all()
            while self._thread is not None:
                self._changed.wait()
            self._hurry = False
        if thread is not None:
            thread.join()

    def _run(self) -> None:
        waiting_since = time.monotonic()
        while True:
            with self._changed:
                while self._jobs and not self._hurry:
                    now = time.monotonic()
                    wait = min(self._last_card + QUIET_S, waiting_since + MAX_WAIT_S) - now
                    if wait <= 0:
                        break
                    self._changed.wait(wait)
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
            waiting_since = time.monotonic()

    def _report_skipped(self) -> None:
        if self._skipped:
            log.info("rounds not priced: a later round's remaining shoe was", rounds=self._skipped)
            self._skipped = 0
