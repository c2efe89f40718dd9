"""A card's face as a line reader names it: rank and suit letters, nothing more.

Drivers know no games, so ranks and suits are the plain numbers the cardshoe
wire uses too (rank 1 = ace ... 13 = king; suit 0..3 = spades, hearts,
diamonds, clubs); the controller maps them to its own card type.
"""

from __future__ import annotations

from dataclasses import dataclass

RANK_LETTERS = "A23456789TJQK"
SUIT_LETTERS = "SHDC"
_RANK_WORDS = {"10": 10}
"""Ranks some readers write as a number instead of a letter."""


class FaceError(ValueError):
    """Text that names no card."""


@dataclass(frozen=True)
class CardFace:
    """A card seen by a reader that knows only its face."""

    rank: int
    suit: int

    @property
    def text(self) -> str:
        return RANK_LETTERS[self.rank - 1] + SUIT_LETTERS[self.suit]


def parse_rank(text: str) -> int:
    """1..13 from "A", "2".."9", "T" or "10", "J", "Q", "K" (any case)."""
    upper = text.strip().upper()
    if upper in _RANK_WORDS:
        return _RANK_WORDS[upper]
    if len(upper) == 1 and upper in RANK_LETTERS:
        return RANK_LETTERS.index(upper) + 1
    raise FaceError(f"{text!r} is not a rank (A, 2-9, T or 10, J, Q, K)")


def parse_suit(text: str) -> int:
    """0..3 from "S", "H", "D", "C" (any case)."""
    upper = text.strip().upper()
    if len(upper) == 1 and upper in SUIT_LETTERS:
        return SUIT_LETTERS.index(upper)
    raise FaceError(f"{text!r} is not a suit (S, H, D, C)")


def parse_face(text: str) -> CardFace:
    """A card from its short name: "AS", "TD", "10D", "kc"."""
    stripped = text.strip()
    if len(stripped) < 2:
        raise FaceError(f"{text!r} is not a card: write rank then suit, e.g. AS, TD, 10D")
    return CardFace(parse_rank(stripped[:-1]), parse_suit(stripped[-1]))
