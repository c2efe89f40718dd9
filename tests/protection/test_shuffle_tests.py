"""The shuffle tests: their false-alarm rate on fair shoes, and what they catch."""

from __future__ import annotations

from itertools import pairwise

import pytest
from support.shuffled_shoes import UNREAD, shuffled_shoes

from cardshoe.controller.protection.shoe_records import JournaledShoe, SeenCard
from cardshoe.controller.protection.shuffle_tests import (
    CONFIDENCE,
    analyze_shuffles,
    carry_over,
    position_groups,
    rank_by_position_test,
)
from cardshoe.controller.rules.cards import ShoeComposition

stats = pytest.importorskip("scipy.stats", reason="scipy comes with the analysis extra")

FAIR_SHOES = 200
ALPHA = 1 - CONFIDENCE


@pytest.fixture(scope="module")
def fair() -> list[JournaledShoe]:
    return shuffled_shoes("fair", FAIR_SHOES, seed=20261201)


def most_failures(trials: int) -> int:
    """The most failures a test at ALPHA shows in `trials` with probability 99.9%."""
    return int(stats.binom.ppf(0.999, trials, ALPHA))


def test_rank_by_position_fails_fair_shoes_at_its_nominal_rate(fair) -> None:
    p_values = [rank_by_position_test(position_groups([shoe])).p_value for shoe in fair]
    failures = sum(p < ALPHA for p in p_values)
    assert int(stats.binom.ppf(0.001, FAIR_SHOES, ALPHA)) <= failures <= most_failures(FAIR_SHOES)
    # Not merely the rate at 5%: under a fair shuffle the p-values are uniform.
    assert stats.kstest(p_values, "uniform").pvalue > 0.001


def test_carry_over_fails_fair_shoes_at_most_at_its_nominal_rate(fair) -> None:
    """A count is discrete, so the rate is at most 5%; its mean is the exact expectation."""
    successive = list(pairwise(fair))
    pairs = [carry_over(first, second) for first, second in successive]
    p_values = [analyze_shuffles([list(two)]).tests[-1].p_value for two in successive]
    assert sum(p < ALPHA for p in p_values) <= most_failures(len(pairs))
    kept = sum(item.kept for item in pairs)
    expected = sum(item.expected for item in pairs)
    low, high = stats.poisson.ppf([0.0005, 0.9995], expected)
    assert low <= kept <= high
    # A pair counts when the next shoe let both its cards out: not the ones behind its cut card.
    for item, first in zip(pairs, fair, strict=False):
        assert len(first.cards) - 1 - 2 * UNREAD <= item.pairs < len(first.cards) - 1


def test_both_tests_report_every_field(fair) -> None:
    analysis = analyze_shuffles([fair[:20]])
    record = analysis.as_json()
    assert record["shoes"] == 20
    assert [test["name"] for test in record["tests"]] == ["rank_by_position", "carry_over"]
    chi_squared, carried = record["tests"]
    assert chi_squared["dof"] == (len(analysis.groups) - 1) * 12
    assert carried["dof"] is None
    assert min(min(group.expected) for group in analysis.groups) >= 5


@pytest.mark.parametrize("method", ["riffle:2", "riffle:4"])
def test_riffled_shoes_fail_the_carry_over_test(method: str) -> None:
    shoes = shuffled_shoes(method, 4, seed=11)
    (verdict,) = [test for test in analyze_shuffles([shoes]).tests if test.name == "carry_over"]
    assert not verdict.passed
    assert verdict.p_value < 1e-9


def test_a_stacked_pack_fails_rank_by_position() -> None:
    """Each shoe dealt in new-deck order (A-K, suit after suit): ranks sit by position."""
    deck = [SeenCard(card, None) for card in ShoeComposition(1).cards()]
    shoes = [JournaledShoe(f"S{number}", "punto-banco", 1, list(deck)) for number in range(10)]
    (verdict,) = analyze_shuffles([shoes]).tests[:1]
    assert verdict.name == "rank_by_position" and not verdict.passed


def test_no_carry_over_test_without_two_shoes(fair) -> None:
    assert [test.name for test in analyze_shuffles([fair[:1]]).tests] == ["rank_by_position"]
