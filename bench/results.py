"""What every benchmark module returns: measurements, each beside the target it answers to.

A bench module exposes measure() -> list[Measurement] and prints them when
run alone; bench/run_all.py collects them into docs/performance.md. A
measurement that needs a part not written yet is still listed, with no
value and the reason, so the table never shows a number nobody measured.
"""

from __future__ import annotations

import statistics
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
    """One row of the results table; value None means not measured, and detail says why."""

    name: str
    value: float | None
    unit: str
    target: Target | None = None
    detail: str = ""

    @property
    def met(self) -> bool | None:
        if self.value is None or self.target is None:
            return None
        return self.target.met_by(self.value)

    def value_text(self) -> str:
        if self.value is None:
            return "not measured yet"
        if self.value >= 100:
            return f"{self.value:,.0f} {self.unit}"
        return f"{self.value:.3g} {self.unit}"

    def met_text(self) -> str:
        return {True: "yes", False: "**no**", None: "—"}[self.met]


def not_measured(name: str, needs: str, target: Target | None = None) -> Measurement:
    """A row for a measurement whose code under test does not exist yet."""
    return Measurement(name, None, "", target, f"needs {needs}")


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
