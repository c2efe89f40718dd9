"""The tail probabilities the shuffle tests need, in plain Python.

The table PC and a surveillance laptop run `shoectl analyze shuffle --json`
without scipy (it lives in the optional `analysis` extra, for the HTML
report only), so the chi-squared and Poisson tails come from the
regularized incomplete gamma function here; the tests compare them with
scipy's.
"""

from __future__ import annotations

import math

_EPSILON = 1e-15
_MAX_TERMS = 100_000


def chi_squared_sf(statistic: float, dof: int) -> float:
    """P(X >= statistic) for X chi-squared with dof degrees of freedom."""
    if dof < 1:
        raise ValueError(f"a chi-squared distribution needs a degree of freedom, not {dof}")
    if statistic <= 0:
        return 1.0
    return regularized_gamma_q(dof / 2, statistic / 2)


def poisson_sf(count: int, mean: float) -> float:
    """P(X >= count) for X Poisson with this mean."""
    if count <= 0:
        return 1.0
    if mean <= 0:
        return 0.0
    return 1.0 - regularized_gamma_q(count, mean)


def regularized_gamma_q(a: float, x: float) -> float:
    """Q(a, x) = Γ(a, x) / Γ(a): a series below a + 1, a continued fraction above."""
    if x < a + 1:
        return 1.0 - _lower_series(a, x)
    return _upper_continued_fraction(a, x)


def _prefactor(a: float, x: float) -> float:
    return math.exp(a * math.log(x) - x - math.lgamma(a))


def _lower_series(a: float, x: float) -> float:
    term = total = 1.0 / a
    denominator = a
    for _ in range(_MAX_TERMS):
        denominator += 1
        term *= x / denominator
        total += term
        if abs(term) < abs(total) * _EPSILON:
            break
    return total * _prefactor(a, x)


def _upper_continued_fraction(a: float, x: float) -> float:
    """Lentz's method for the continued fraction of Γ(a, x)."""
    tiny = 1e-300
    b = x + 1 - a
    c = 1 / tiny
    d = 1 / b
    fraction = d
    for step in range(1, _MAX_TERMS):
        an = -step * (step - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        fraction *= delta
        if abs(delta - 1) < _EPSILON:
            break
    return fraction * _prefactor(a, x)
