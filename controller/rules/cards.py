"""Playing cards in the common two-character notation, and shoe compositions.

A card is written rank then suit: rank A 2-9 T J Q K ("10" is accepted on
input), suit S H D C (on input also the symbols the page and the terminal
show, black or white: ♠ ♥ ♦ ♣, ♤ ♡ ♢ ♧). Baccarat counts A as 1, 2-9 at face value and
10/J/Q/K as 0. The 7 Up mandatory seven is not a shoe card; it is written
"7*" and has no suit.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import Enum

from cardshoe.controller.rules.errors import CardNotationError, RulesError

RANK_SYMBOLS = "A23456789TJQK"
"""Index i holds the symbol of rank i + 1 (A = 1 ... K = 13)."""

MANDATORY_SEVEN_TEXT = "7*"


class Suit(Enum):
    SPADES = "S"
    HEARTS = "H"
    DIAMONDS = "D"
    CLUBS = "C"

    # Hashed by identity, as its members compare: Enum's own __hash__ is Python, and the
    # shoe's copy count hashes a card (and so its suit) several times for every card out.
    __hash__ = object.__hash__


@dataclass(frozen=True, order=True)
class Card:
    """A card by rank (1 = ace ... 13 = king) and suit.

    suit is None only for the 7 Up mandatory seven, which never comes
    from the shoe.
    """

    rank: int
    suit: Suit | None

    def __post_init__(self) -> None:
        if not 1 <= self.rank <= 13:
            raise CardNotationError(f"rank {self.rank} is outside 1..13")

    @property
    def value(self) -> int:
        """Baccarat point value: A = 1, 2-9 face value, 10/J/Q/K = 0."""
        return self.rank if self.rank < 10 else 0

    @property
    def is_mandatory_seven(self) -> bool:
        return self.suit is None

    def __str__(self) -> str:
        if self.suit is None:
            return MANDATORY_SEVEN_TEXT
        return RANK_SYMBOLS[self.rank - 1] + self.suit.value


MANDATORY_SEVEN = Card(7, None)

SUIT_OF_SYMBOL = {
    "♠": "S", "♤": "S",
    "♥": "H", "♡": "H",
    "♦": "D", "♢": "D",
    "♣": "C", "♧": "C",
}  # fmt: skip
"""The suit symbols accepted on input, by the letter they stand for."""

_CARD_PATTERN = re.compile(r"^(10|[A2-9TJQK])([SHDC])$")


def parse_card(text: str) -> Card:
    """Read one card such as "AS", "TD", "10d", "7H" or "K♦" (case does not matter)."""
    token = text.strip().upper()
    if token[-1:] in SUIT_OF_SYMBOL:
        token = token[:-1] + SUIT_OF_SYMBOL[token[-1]]
    if token == MANDATORY_SEVEN_TEXT:
        return MANDATORY_SEVEN
    match = _CARD_PATTERN.match(token)
    if match is None:
        raise CardNotationError(
            f"bad card {text!r}: write rank (A 2-9 T J Q K, or 10) then suit (S H D C, "
            "or ♠ ♥ ♦ ♣), for example AS, TD, 7H, K♦"
        )
    rank_text, suit_text = match.groups()
    rank = 10 if rank_text == "10" else RANK_SYMBOLS.index(rank_text) + 1
    return Card(rank, Suit(suit_text))


def parse_cards(text: str) -> list[Card]:
    """Read a list of shoe cards separated by spaces or commas."""
    cards = [parse_card(token) for token in re.split(r"[\s,]+", text.strip()) if token]
    for card in cards:
        if card.is_mandatory_seven:
            raise CardNotationError(
                "7* is the 7 Up mandatory seven, which the dealer places; "
                "list only the cards that leave the shoe"
            )
    return cards


@dataclass(frozen=True)
class ShoeComposition:
    """What n full decks hold, for counting and for exact odds."""

    decks: int

    def __post_init__(self) -> None:
        if self.decks < 1:
            raise RulesError(f"a shoe needs at least one deck, not {self.decks}")

    @property
    def size(self) -> int:
        return 52 * self.decks

    @property
    def copies_per_card(self) -> int:
        """How many copies of one exact card (rank and suit) the shoe holds."""
        return self.decks

    def rank_counts(self) -> dict[int, int]:
        return {rank: 4 * self.decks for rank in range(1, 14)}

    def value_counts(self) -> tuple[int, ...]:
        """Cards per baccarat value 0..9: value 0 has the 10s and court cards."""
        return (16 * self.decks,) + (4 * self.decks,) * 9

    def remaining(self, seen: Iterable[Card]) -> dict[Card, int]:
        """Each distinct card -> copies left once the seen cards (burned or dealt) are out.

        A seen card the shoe cannot hold (a second ace of spades from one deck) is bad
        input: the list is wrong, or the shoe holds a foreign card.
        """
        left = {card: self.copies_per_card for card in ShoeComposition(1).cards()}
        for card, times in Counter(seen).items():
            if card.is_mandatory_seven or left.get(card, 0) < times:
                raise RulesError(
                    f"{card} seen {times} times, but {self.decks} deck(s) hold "
                    f"{self.copies_per_card} of it: correct the seen cards or the decks"
                )
            left[card] -= times
        return left

    def cards(self) -> Iterator[Card]:
        """Every card of the shoe, deck by deck, in new-deck order."""
        for _ in range(self.decks):
            for suit in Suit:
                for rank in range(1, 14):
                    yield Card(rank, suit)
