"""How the simulated device's cards are shuffled into a new shoe: fair, or as people do.

Game-protection checks (docs/game-protection.md) need shoes that a person
shuffled badly, not only perfect ones:

- fair: every order equally likely (the default);
- riffle:N: N Gilbert-Shannon-Reeds riffle shuffles of the previous shoe's
  order, dealt cards first: cut the pack binomially, then drop cards from
  either half with probability proportional to its size. A real hand
  shuffle of eight decks is a few riffles of split piles, and 2 riffles
  leave many cards next to their old neighbours;
- carry:LEN: a fair shoe in which LEN consecutive cards of the previous
  shoe's order sit together, still in that order, at a random place (a
  slug the dealer failed to shuffle).

The first shoe of a device has no previous shoe and is fair. The same seed
gives the same shoes.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from cardshoe.drivers.protocol.cardid import CardId
from cardshoe.drivers.text_input import whole_number
from cardshoe.firmware_sim.errors import SimConfigError


class ShuffleKind(Enum):
    FAIR = "fair"
    RIFFLE = "riffle"
    CARRY = "carry"


@dataclass(frozen=True)
class ShuffleMethod:
    """A way of shuffling: the kind, and its riffle count or slug length."""

    kind: ShuffleKind = ShuffleKind.FAIR
    count: int = 0

    def __str__(self) -> str:
        kind = self.kind.value
        if self.kind is ShuffleKind.FAIR:
            return kind
        return f"{kind}:{self.count}"

    def arrange(
        self, cards: Sequence[CardId], previous: Sequence[CardId] | None, rng: random.Random
    ) -> list[CardId]:
        """The new shoe's order of `cards`; previous is the last shoe's order, or None.

        previous may be known only in part (the cards a reader saw leave, each where it
        first left): the cards of `cards` it does not list follow it in pack order.
        """
        if self.kind is ShuffleKind.FAIR or previous is None:
            order = list(cards)
            rng.shuffle(order)
            return order
        previous = completed(previous, cards)
        if self.kind is ShuffleKind.RIFFLE:
            order = list(previous)
            for _ in range(self.count):
                order = riffle(order, rng)
            return order
        return carried_over(cards, previous, self.count, rng)


FAIR = ShuffleMethod()


def parse_shuffle(text: str) -> ShuffleMethod:
    """Read fair, riffle:N (N >= 1) or carry:LEN (LEN >= 2)."""
    name, _, number = text.strip().lower().partition(":")
    kinds = {kind.value: kind for kind in ShuffleKind}
    kind = kinds.get(name)
    usage = "use fair, riffle:N (N riffles, N >= 1) or carry:LEN (a slug of LEN >= 2 cards)"
    if kind is None:
        raise SimConfigError(f"unknown shuffle {text!r}: {usage}")
    if kind is ShuffleKind.FAIR:
        if number:
            raise SimConfigError(f"fair takes no number, not {text!r}: {usage}")
        return FAIR
    least = 1 if kind is ShuffleKind.RIFFLE else 2
    count = whole_number(number, 6)
    if count is None or count < least:
        raise SimConfigError(f"bad shuffle {text!r}: {usage}")
    return ShuffleMethod(kind, count)


def completed(previous: Sequence[CardId], cards: Sequence[CardId]) -> list[CardId]:
    """previous restricted to `cards`, each card where it first appears, then the rest."""
    present = set(cards)
    listed = [card for card in dict.fromkeys(previous) if card in present]
    seen = set(listed)
    return listed + [card for card in cards if card not in seen]


def riffle(order: Sequence[CardId], rng: random.Random) -> list[CardId]:
    """One Gilbert-Shannon-Reeds riffle shuffle."""
    cut = sum(rng.random() < 0.5 for _ in order)
    left, right = list(order[:cut]), list(order[cut:])
    shuffled: list[CardId] = []
    i = j = 0
    while i < len(left) or j < len(right):
        left_size, right_size = len(left) - i, len(right) - j
        if rng.random() * (left_size + right_size) < left_size:
            shuffled.append(left[i])
            i += 1
        else:
            shuffled.append(right[j])
            j += 1
    return shuffled


def carried_over(
    cards: Sequence[CardId], previous: Sequence[CardId], length: int, rng: random.Random
) -> list[CardId]:
    """A fair shuffle of `cards`, then a slug of `length` cards of `previous` put back together."""
    length = min(length, len(previous))
    start = rng.randrange(len(previous) - length + 1)
    slug = list(previous[start : start + length])
    kept = set(slug)
    rest = [card for card in cards if card not in kept]
    rng.shuffle(rest)
    at = rng.randrange(len(rest) + 1)
    return rest[:at] + slug + rest[at:]
