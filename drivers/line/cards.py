"""A card named in a reader's text: rank and suit, as the neutral CardId.

Readers write the ten as "T" or "10", in either case; CardId.parse reads the
one canonical form, so this only normalises what readers vary in.
"""

from __future__ import annotations

from cardshoe.drivers.api.events import CardId, CardIdError

TEN_WORDS = ("10",)
PHYSICAL_ID_MARK = "#"


def card_from_parts(rank: str, suit: str) -> CardId:
    """The untagged card a reader named; CardIdError when the text names none."""
    rank_text = rank.strip().upper()
    if rank_text in TEN_WORDS:
        rank_text = "T"
    if len(rank_text) != 1:
        raise CardIdError(f"bad card {rank + suit!r}: the rank is one of A, 2-9, T or 10, J, Q, K")
    return CardId.parse(rank_text + suit.strip())


def card_from_text(text: str) -> CardId:
    """A card from its text: "AS", "td", "10H" (rank then suit), or one physical card,
    "AS#00BC614E/3" (deck set in hex, then deck), as a tagged pack's card table names it."""
    stripped = text.strip()
    if PHYSICAL_ID_MARK in stripped:
        return CardId.parse(stripped)
    return card_from_parts(stripped[:-1], stripped[-1:])
