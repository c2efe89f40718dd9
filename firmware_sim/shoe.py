"""The cards inside a simulated device: building decks, shuffling, the cut card.

Cards are the drivers' CardId, so what the simulator deals is exactly what
a reader would put on the wire: tagged cards carry the deck-set serial and
their deck number. Shuffling is cryptographically secure unless a seed is
given, because a predictable shuffle is a cheating tool.
"""

from __future__ import annotations

import random
import secrets
from dataclasses import dataclass, field

from cardshoe.drivers.api.events import CardSuit
from cardshoe.drivers.protocol.cardid import CardId

CARDS_PER_DECK = 52
DEFAULT_DECKS = 8
DEFAULT_DECK_SET = 0x00BC614E
DEFAULT_CUT_CARD_DEPTH = 12
"""The cut card goes in above about the last 12 cards (Macau rules, 2011 amendment)."""


def make_rng(seed: int | None) -> random.Random:
    """A secure shuffler by default; a seeded one only for reproducible tests."""
    return secrets.SystemRandom() if seed is None else random.Random(seed)


def build_decks(decks: int, deck_set: int, tagged: bool) -> list[CardId]:
    """`decks` complete decks in pack order; untagged readers see rank and suit only."""
    return [
        CardId(rank, suit, deck_set, deck) if tagged else CardId(rank, suit)
        for deck in range(1, decks + 1)
        for suit in CardSuit
        for rank in range(1, 14)
    ]


@dataclass
class CardPack:
    """The cards waiting to leave, front first, and what has left since loading."""

    cards: list[CardId]
    cut_card_depth: int | None
    """The cut card sits above this many cards; None when there is no cut card."""
    dealt: list[CardId] = field(default_factory=list)
    cut_card_seen: bool = False
    slipped_in: int = 0
    """Cards slipped in at the exit (put_on_top) that have not left yet."""
    intruders: set[int] = field(default_factory=set)
    """Places in `dealt` of the slipped-in cards: the dealer sets them apart, as the host's
    hold asks, so an automatic machine never takes them back in."""

    @property
    def remaining(self) -> int:
        return len(self.cards)

    @property
    def cut_card_at_exit(self) -> bool:
        """True once the cards above the cut card are gone and it has not been reported."""
        return (
            not self.cut_card_seen
            and self.cut_card_depth is not None
            and self.remaining <= self.cut_card_depth
        )

    @property
    def order(self) -> list[CardId]:
        """The cards that left, in order, then those still in, front first.

        A continuous shuffler takes returned cards back into its stock, so a card may
        be listed twice; a new shoe's shuffle counts it where it first left.
        """
        return [*self.dealt, *self.cards]

    def take(self) -> CardId:
        card = self.cards.pop(0)
        if self.slipped_in:
            self.slipped_in -= 1
            self.intruders.add(len(self.dealt))
        self.dealt.append(card)
        return card

    def put_on_top(self, card: CardId) -> None:
        """A card slipped in at the exit (a foreign or duplicate card)."""
        self.cards.insert(0, card)
        self.slipped_in += 1

    def keep_only(self, count: int) -> None:
        """The shoe turns out to hold only `count` more cards."""
        del self.cards[count:]

    def shuffle_in(self, cards: list[CardId], rng: random.Random) -> None:
        """Continuous shuffling: each returned card goes to a random place in the stock."""
        for card in cards:
            self.cards.insert(rng.randint(0, len(self.cards)), card)
