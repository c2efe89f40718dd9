"""The chi-squared and Poisson tails the shuffle tests use, against scipy's."""

from __future__ import annotations

import pytest

from cardshoe.controller.protection.distributions import chi_squared_sf, poisson_sf

stats = pytest.importorskip("scipy.stats", reason="scipy comes with the analysis extra")


@pytest.mark.parametrize(
    ("statistic", "dof"),
    [(0.5, 1), (3.84, 1), (10.0, 5), (21.03, 12), (30.0, 12), (4700.0, 4800), (5200.0, 4800)],
)
def test_chi_squared_tail_matches_scipy(statistic: float, dof: int) -> None:
    assert chi_squared_sf(statistic, dof) == pytest.approx(stats.chi2.sf(statistic, dof), rel=1e-9)


@pytest.mark.parametrize(
    ("count", "mean"), [(1, 0.9), (3, 0.9), (10, 3.5), (190, 191.0), (240, 191.0), (2000, 191.0)]
)
def test_poisson_tail_matches_scipy(count: int, mean: float) -> None:
    expected = stats.poisson.sf(count - 1, mean)
    assert poisson_sf(count, mean) == pytest.approx(expected, rel=1e-9, abs=1e-300)


def test_edges() -> None:
    assert chi_squared_sf(0.0, 3) == 1.0
    assert poisson_sf(0, 2.0) == 1.0
    assert poisson_sf(1, 0.0) == 0.0
    with pytest.raises(ValueError, match="degree of freedom"):
        chi_squared_sf(1.0, 0)
