"""A card named in a reader's text: rank and suit, as the neutral CardId.

Readers write the ten as "T" or "10", in either case; CardId.parse reads the
one canonical form, so this only normalises what readers vary in.
"""

from __future__ import annotations

from cardshoe.drivers.api.events import CardId, CardIdError

TEN_WORDS = ("10",)


def card_from_parts(rank: str, suit: str) -> CardId:
    """The untagged card a reader named; CardIdError when the text names none."""
    rank_text = rank.strip().upper()
    if rank_text in TEN_WORDS:
        rank_text = "T"
    if len(rank_text) != 1:
        raise CardIdError(f"bad card {rank + suit!r}: the rank is one of A, 2-9, T or 10, J, Q, K")
    return CardId.parse(rank_text + suit.strip())


def card_from_text(text: str) -> CardId:
    """ "AS", "td", "10H": rank then suit."""
    stripped = text.strip()
    return card_from_parts(stripped[:-1], stripped[-1:])
