"""Shuffle quality across shoes: rank by position, and cards carried over from shoe to shoe.

Both tests condition on what the shoe actually let out, so their nominal
false-alarm rate (5% at 95% confidence) holds for shoes of any size, cut
card depth or unreadable card:

- Rank by position: under a fair shuffle the cards a shoe let out come in a
  uniformly random order, whatever they are, so a position's rank is drawn
  from that shoe's own mix of ranks. Positions are grouped (first cards
  first) until every expected count of the group is at least 5, and
  Pearson's statistic of the groups x 13 ranks table is chi-squared with
  (groups - 1) x 12 degrees of freedom.
- Carry-over: of the pairs of physical cards adjacent in one shoe's order,
  both read again in the next shoe of the same table, each is adjacent in
  the same order there with probability 1 / (tagged cards read in the next
  shoe). Their count is close to Poisson with that summed mean (as the
  successions of a random permutation are), and the test is one-sided: a
  skipped or poor shuffle leaves far more pairs together, never fewer.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from cardshoe.controller.protection.distributions import chi_squared_sf, poisson_sf
from cardshoe.controller.protection.shoe_records import JournaledShoe

CONFIDENCE = 0.95
MIN_EXPECTED = 5.0
"""The smallest expected count a chi-squared cell may have."""
RANKS = tuple(range(1, 14))
MIN_POSITION_CARDS = 2 * len(RANKS) * math.ceil(MIN_EXPECTED)
"""The fewest readable cards, over all the shoes, that make the two position groups rank by
position needs when the ranks are evenly mixed; fewer, and that test cannot run."""
MEAN_CARDS_PER_ROUND = 4.94
"""A baccarat round deals 4 to 6 cards, 4.94 on average: a count of cards said in rounds."""


@dataclass(frozen=True)
class TestResult:
    """One test's verdict, as `shoectl analyze shuffle --json` prints it."""

    name: str
    statistic: float
    dof: int | None
    p_value: float

    @property
    def passed(self) -> bool:
        return self.p_value >= 1 - CONFIDENCE

    def as_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "statistic": self.statistic,
            "dof": self.dof,
            "p_value": self.p_value,
            "pass": self.passed,
        }


@dataclass(frozen=True)
class PositionGroup:
    """Positions first..last (0 = the first card out) and their rank counts over every shoe."""

    first: int
    last: int
    observed: tuple[int, ...]
    expected: tuple[float, ...]


@dataclass(frozen=True)
class CarryOver:
    """One shoe and the next at the same table: pairs kept together, and how many to expect."""

    shoe_id: str
    next_shoe_id: str
    pairs: int
    """Adjacent pairs of the first shoe whose two cards the next shoe also let out."""
    kept: int
    expected: float


@dataclass(frozen=True)
class ShuffleAnalysis:
    shoes: int
    tests: tuple[TestResult, ...]
    groups: tuple[PositionGroup, ...]
    carry_overs: tuple[CarryOver, ...]
    cards_read: int
    rounds: int

    @property
    def positions_tested(self) -> bool:
        return len(self.groups) >= 2

    def too_few_cards(self) -> str:
        """Why rank by position did not run, and how much more dealing it needs."""
        rounds = math.ceil(MIN_POSITION_CARDS / MEAN_CARDS_PER_ROUND)
        return (
            f"rank by position needs at least {MIN_POSITION_CARDS} cards read over the shoes "
            f"(about {rounds} rounds), and these journals hold {self.cards_read} in "
            f"{self.rounds} rounds: analyze more shoes, or shoes dealt further"
        )

    def as_json(self) -> dict[str, object]:
        return {"shoes": self.shoes, "tests": [test.as_json() for test in self.tests]}


def analyze_shuffles(tables: Sequence[Sequence[JournaledShoe]]) -> ShuffleAnalysis:
    """Both tests over every shoe; tables holds each journal's shoes in the order dealt.

    The carry-over test is left out when no table has two shoes that share cards.
    """
    shoes = [shoe for table in tables for shoe in table]
    groups = position_groups(shoes)
    tests = [rank_by_position_test(groups)] if len(groups) >= 2 else []
    carry_overs = tuple(
        carry_over(first, second) for table in tables for first, second in pairwise(table)
    )
    carried = [item for item in carry_overs if item.pairs]
    if carried:
        kept = sum(item.kept for item in carried)
        expected = sum(item.expected for item in carried)
        tests.append(TestResult("carry_over", float(kept), None, poisson_sf(kept, expected)))
    return ShuffleAnalysis(
        len(shoes),
        tuple(tests),
        tuple(groups),
        carry_overs,
        cards_read=sum(len(shoe.known_cards()) for shoe in shoes),
        rounds=sum(len(shoe.seen_at_round_end) for shoe in shoes),
    )


def position_groups(shoes: Sequence[JournaledShoe]) -> list[PositionGroup]:
    """Positions grouped in order until each rank's expected count reaches MIN_EXPECTED."""
    observed: list[Counter[int]] = []
    expected: list[list[float]] = []
    for shoe in shoes:
        known = shoe.known_cards()
        mix = Counter(card.rank for card in known)
        share = [mix[rank] / len(known) if known else 0.0 for rank in RANKS]
        for position, seen in enumerate(shoe.cards):
            if seen.card is None:
                continue
            while len(observed) <= position:
                observed.append(Counter())
                expected.append([0.0] * len(RANKS))
            observed[position][seen.card.rank] += 1
            for index, value in enumerate(share):
                expected[position][index] += value
    groups: list[PositionGroup] = []
    start = 0
    counts: Counter[int] = Counter()
    sums = [0.0] * len(RANKS)
    for position, (seen_here, expected_here) in enumerate(zip(observed, expected, strict=True)):
        counts += seen_here
        sums = [total + value for total, value in zip(sums, expected_here, strict=True)]
        if min(sums) >= MIN_EXPECTED:
            groups.append(_group(start, position, counts, sums))
            start, counts, sums = position + 1, Counter(), [0.0] * len(RANKS)
    if any(sums) and groups:
        last = groups.pop()
        merged = Counter(dict(zip(RANKS, last.observed, strict=True))) + counts
        total = [a + b for a, b in zip(last.expected, sums, strict=True)]
        groups.append(_group(last.first, len(observed) - 1, merged, total))
    return groups


def _group(first: int, last: int, counts: Counter[int], sums: list[float]) -> PositionGroup:
    return PositionGroup(first, last, tuple(counts[rank] for rank in RANKS), tuple(sums))


def rank_by_position_test(groups: Sequence[PositionGroup]) -> TestResult:
    statistic = sum(
        (seen - wanted) ** 2 / wanted
        for group in groups
        for seen, wanted in zip(group.observed, group.expected, strict=True)
    )
    dof = (len(groups) - 1) * (len(RANKS) - 1)
    return TestResult("rank_by_position", statistic, dof, chi_squared_sf(statistic, dof))


def carry_over(first: JournaledShoe, second: JournaledShoe) -> CarryOver:
    """How many of the first shoe's adjacent pairs the second shoe let out adjacent again."""
    before = [seen.tagged_id for seen in first.cards]
    after = [seen.tagged_id for seen in second.cards if seen.tagged_id is not None]
    present = set(after)
    follows = dict(pairwise(after))
    pairs = kept = 0
    for card, successor in pairwise(before):
        if card in present and successor in present:
            pairs += 1
            kept += follows.get(card) == successor
    expected = pairs / len(after) if after else 0.0
    return CarryOver(first.shoe_id, second.shoe_id, pairs, kept, expected)
