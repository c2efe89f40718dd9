"""What every benchmark module returns: measurements, each beside the target it answers to.

A bench module exposes measure() -> list[Measurement] and prints them when
run alone; bench/run_all.py collects them into docs/performance.md.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    """A bound from the issue: the value must reach `limit` (at_least) or stay under it."""

    limit: float
    at_least: bool
    text: str
    """How the target reads in the table, e.g. "≥ 100,000 rounds/s"."""

    def met_by(self, value: float) -> bool:
        return value >= self.limit if self.at_least else value < self.limit


@dataclass(frozen=True)
class Measurement:
    """One row of the results table; detail says how it was measured."""

    name: str
    value: float
    unit: str
    target: Target | None = None
    detail: str = ""

    @property
    def met(self) -> bool | None:
        """Whether the target is met; None when the row has no target."""
        return None if self.target is None else self.target.met_by(self.value)

    def value_text(self) -> str:
        if self.value >= 100:
            return f"{self.value:,.0f} {self.unit}"
        return f"{self.value:.3g} {self.unit}"

    def met_text(self) -> str:
        return {True: "yes", False: "**no**", None: "—"}[self.met]


def percentile(samples: list[float], percent: int) -> float:
    """The percent-th percentile, interpolated between samples (statistics.quantiles)."""
    return statistics.quantiles(samples, n=100, method="inclusive")[percent - 1]


def print_measurements(measurements: list[Measurement]) -> None:
    for measurement in measurements:
        line = f"{measurement.name}: {measurement.value_text()}"
        if measurement.target is not None:
            line += f"  target {measurement.target.text}: {measurement.met_text()}"
        if measurement.detail:
            line += f"  ({measurement.detail})"
        print(line)


def median_seconds(runs: int, action: Callable[[], object]) -> float:
    """The median wall time of `runs` calls of action.

    For whole processes: the best of a few would report the one run the
    shared cores happened to leave alone, the median what a person waits for.
    """
    timings = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        timings.append(time.perf_counter() - started)
    return statistics.median(timings)
