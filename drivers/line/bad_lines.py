"""Bad-line accounting: count every bad line, journal each kind once per interval.

A failing reader or a wrong profile can send hundreds of bad lines a
second; one journal record each would flood the journal and the floor. So
the first bad line of a kind is reported at once, the next ones of that
kind are only counted until the interval has passed, and then one report
carries the count. A burst (burst_lines bad lines of any kind within
burst_window_s) is reported once, for the table to hold: a reader in that
state cannot be trusted to have read every card. Time is passed in, so the
policy is a pure state machine.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from cardshoe.drivers.line.matching import LineKind
from cardshoe.drivers.line.profile import BadLinePolicy


@dataclass(frozen=True)
class BadLineReport:
    """`count` bad lines of `kind` since the last report of that kind; `example` is the last."""

    kind: LineKind
    count: int
    example: str


@dataclass
class _KindState:
    reported_at: float
    pending: int = 0
    example: str = ""


@dataclass
class BadLineCounter:
    policy: BadLinePolicy
    totals: dict[LineKind, int] = field(default_factory=dict)
    """Every bad line ever counted, by kind (for status and selftest)."""
    _kinds: dict[LineKind, _KindState] = field(default_factory=dict)
    _recent: deque[float] = field(default_factory=deque)
    _in_burst: bool = False

    def count(self, kind: LineKind, example: str, now: float) -> BadLineReport | None:
        """Count one bad line; a report when this kind has none within the interval."""
        self.totals[kind] = self.totals.get(kind, 0) + 1
        self._recent.append(now)
        state = self._kinds.get(kind)
        if state is None or now - state.reported_at >= self.policy.report_interval_s:
            pending = (state.pending if state is not None else 0) + 1
            self._kinds[kind] = _KindState(reported_at=now)
            return BadLineReport(kind, pending, example)
        state.pending += 1
        state.example = example
        return None

    def due(self, now: float) -> list[BadLineReport]:
        """Reports of the kinds whose interval has passed with lines still uncounted."""
        reports = []
        for kind, state in self._kinds.items():
            if state.pending and now - state.reported_at >= self.policy.report_interval_s:
                reports.append(BadLineReport(kind, state.pending, state.example))
                self._kinds[kind] = _KindState(reported_at=now)
        return reports

    @property
    def in_burst(self) -> bool:
        return self._in_burst

    def burst_started(self, now: float) -> bool:
        """True once when the bad lines within the window reach the burst size.

        It is True again only after a window with fewer bad lines has passed (in_burst
        then turns False: the reader reads properly again).
        """
        while self._recent and now - self._recent[0] > self.policy.burst_window_s:
            self._recent.popleft()
        bursting = len(self._recent) >= self.policy.burst_lines
        started = bursting and not self._in_burst
        self._in_burst = bursting
        return started
