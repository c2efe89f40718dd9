"""The live stacked-shoe alarm: runs a fair shuffle would almost never deal.

Card by card, three runs are followed:

- order: cards leaving in the same order as in the previous shoe, by
  physical id (a slug carried over unshuffled, a skipped shuffle);
- rank: cards of one rank in a row; suit: cards of one suit in a row
  (a stacked or unshuffled pack).

Each kind has its alarm length: the shortest run whose probability of
appearing anywhere in a fair shoe of this size is below one in a million.
That probability is bounded exactly, by symmetry: every window of L
positions of a uniformly shuffled shoe holds a given L-card sequence with
probability 1 / (N)_L, so the chance of a run of L anywhere is at most
(windows) x (sequences that make a run) / (N)_L. A fair shoe therefore
raises each alarm with probability under one in a million, and every run
at least that long raises it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction
from itertools import pairwise
from math import perm

from cardshoe.controller.protection.shoe_records import SeenCard
from cardshoe.controller.rules.cards import Card

FALSE_ALARM = Fraction(1, 1_000_000)
"""The most a fair shoe may show a run that raises the alarm."""


class RunKind(StrEnum):
    ORDER = "order"
    RANK = "rank"
    SUIT = "suit"


@dataclass(frozen=True)
class StackedRun:
    """A run long enough to raise the alarm."""

    kind: RunKind
    length: int
    started_at: int
    """The run's first card's position in the shoe (0 = the first card out)."""
    chance: float
    """The bound on a fair shoe showing a run this long: below FALSE_ALARM."""

    @property
    def detail(self) -> str:
        what = {
            RunKind.ORDER: "in the order of the previous shoe (by physical card)",
            RunKind.RANK: "of one rank",
            RunKind.SUIT: "of one suit",
        }[self.kind]
        odds = (
            f"a fair shuffle deals such a run with probability below {self.chance:.2g}"
            if self.chance
            else "the decks do not hold such a run: a card was read twice or is foreign"
        )
        return f"{self.length} cards in a row {what} from card {self.started_at + 1}: {odds}"


def run_chance(kind: RunKind, length: int, decks: int, previous_cards: int) -> Fraction:
    """The bound on a fair shoe of `decks` decks holding a run of `length` of this kind."""
    size = 52 * decks
    windows = size - length + 1
    if windows <= 0:
        return Fraction(0)
    if kind is RunKind.ORDER:
        sequences = max(previous_cards - length + 1, 0)
    elif kind is RunKind.RANK:
        sequences = 13 * perm(4 * decks, length)
    else:
        sequences = 4 * perm(13 * decks, length)
    return Fraction(windows * sequences, perm(size, length))


def alarm_length(kind: RunKind, decks: int, previous_cards: int) -> int:
    """The shortest run of this kind that a fair shoe shows with probability below 1e-6."""
    length = 2
    while run_chance(kind, length, decks, previous_cards) >= FALSE_ALARM:
        length += 1
    return length


class StackedShoeDetector:
    """Follows one shoe's cards as they leave; says when a run reaches its alarm length.

    previous_order holds the tagged physical ids of the previous shoe in the
    order they left (empty when there was none); each kind alarms once a shoe.
    """

    def __init__(self, decks: int, previous_order: Sequence[str]) -> None:
        self._successor = dict(pairwise(previous_order))
        self._decks = decks
        self._previous_cards = len(previous_order)
        self.alarm_lengths = {
            kind: alarm_length(kind, decks, len(previous_order)) for kind in RunKind
        }
        self.runs = dict.fromkeys(RunKind, 0)
        """The length of each kind's run that ends at the latest card."""
        self._starts = dict.fromkeys(RunKind, 0)
        self._raised: set[RunKind] = set()
        self._last: SeenCard | None = None
        self._position = 0
        self.longest_order_run = 0
        """The most cards so far that left in the previous shoe's order."""

    def take(self, seen: SeenCard) -> list[StackedRun]:
        """The card that left next; the runs it makes long enough to alarm (once a kind)."""
        last, position = self._last, self._position
        self._last, self._position = seen, position + 1
        found = []
        for kind in RunKind:
            if last is not None and _continues(kind, last, seen, self._successor):
                self.runs[kind] += 1
            else:
                self.runs[kind] = 1 if _can_start(kind, seen) else 0
                self._starts[kind] = position
            length = self.runs[kind]
            if kind is RunKind.ORDER:
                self.longest_order_run = max(self.longest_order_run, length)
            if length >= self.alarm_lengths[kind] and kind not in self._raised:
                self._raised.add(kind)
                chance = run_chance(kind, length, self._decks, self._previous_cards)
                found.append(StackedRun(kind, length, self._starts[kind], float(chance)))
        return found


def _can_start(kind: RunKind, seen: SeenCard) -> bool:
    return seen.tagged_id is not None if kind is RunKind.ORDER else seen.card is not None


def _continues(kind: RunKind, last: SeenCard, seen: SeenCard, successor: dict[str, str]) -> bool:
    if kind is RunKind.ORDER:
        following = successor.get(last.tagged_id or "")
        return following is not None and following == seen.tagged_id
    if last.card is None or seen.card is None:
        return False
    return _same(kind, last.card, seen.card)


def _same(kind: RunKind, first: Card, second: Card) -> bool:
    return first.rank == second.rank if kind is RunKind.RANK else first.suit == second.suit
