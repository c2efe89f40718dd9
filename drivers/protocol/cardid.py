"""The 8-byte card ID a shoe reads from each card, with its check value.

Layout (little-endian), as in docs/protocol.md "Card ID":

    byte 0     suit (bits 4-5) and rank (bits 0-3); bits 6-7 are zero
    bytes 1-4  deck-set serial, u32 (0 = untagged card)
    byte 5     deck number within the set, 1..255 (0 = untagged card)
    bytes 6-7  check value: CRC-16/CCITT-FALSE (binascii.crc_hqx, initial 0xFFFF)
               over bytes 0-5, u16

The check value lets the host tell a misread card from a real one. Drivers
know no games: rank and suit are plain numbers here (rank 1 = ace ... 13 =
king; suit order spades, hearts, diamonds, clubs) and the controller maps
them to its own card type.
"""

from __future__ import annotations

import binascii
import re
import struct
from dataclasses import dataclass
from enum import IntEnum

from cardshoe.drivers.protocol.errors import CardIdError

CARD_ID_SIZE = 8
_BODY = struct.Struct("<BIB")
_CHECK = struct.Struct("<H")
_RANK_SYMBOLS = "A23456789TJQK"
_TEXT_PATTERN = re.compile(r"^([A2-9TJQK])([SHDC])(?:#([0-9A-F]{8})/(\d{1,3}))?$")


class CardSuit(IntEnum):
    """Suit index on the wire; the letter is the suit's symbol in text forms."""

    SPADES = 0
    HEARTS = 1
    DIAMONDS = 2
    CLUBS = 3

    @property
    def letter(self) -> str:
        return "SHDC"[self.value]


def _check_value(body: bytes) -> int:
    """CRC-16/CCITT catches every error of up to 3 bits and every burst of up to 16."""
    return binascii.crc_hqx(body, 0xFFFF)


@dataclass(frozen=True)
class CardId:
    """One physical card: rank, suit and, for tagged cards, its deck set and deck.

    An untagged card (a reader that sees only rank and suit) has deck_set 0
    and deck 0; a tagged card has both non-zero.
    """

    rank: int
    suit: CardSuit
    deck_set: int = 0
    deck: int = 0

    def __post_init__(self) -> None:
        if not 1 <= self.rank <= 13:
            raise CardIdError(f"rank {self.rank} is outside 1..13")
        try:
            object.__setattr__(self, "suit", CardSuit(self.suit))
        except ValueError:
            raise CardIdError(f"suit {self.suit} is outside 0..3") from None
        if not 0 <= self.deck_set <= 0xFFFFFFFF:
            raise CardIdError(f"deck-set serial {self.deck_set} does not fit 32 bits")
        if not 0 <= self.deck <= 0xFF:
            raise CardIdError(f"deck number {self.deck} is outside 0..255")
        if (self.deck_set == 0) != (self.deck == 0):
            raise CardIdError(
                f"deck set {self.deck_set} and deck {self.deck}: "
                "a card is either untagged (both 0) or tagged (both non-zero)"
            )

    @property
    def tagged(self) -> bool:
        return self.deck_set != 0

    def encode(self) -> bytes:
        body = _BODY.pack(self.suit << 4 | self.rank, self.deck_set, self.deck)
        return body + _CHECK.pack(_check_value(body))

    @classmethod
    def decode(cls, data: bytes) -> CardId:
        """Read 8 bytes as a card ID; a wrong check value means the card was misread."""
        if len(data) != CARD_ID_SIZE:
            raise CardIdError(f"a card ID is {CARD_ID_SIZE} bytes, not {len(data)}")
        body = bytes(data[: _BODY.size])
        (check,) = _CHECK.unpack_from(data, _BODY.size)
        if check != _check_value(body):
            raise CardIdError(f"card ID {bytes(data).hex()} fails its check value (misread)")
        rank_suit, deck_set, deck = _BODY.unpack(body)
        if rank_suit >> 6:
            raise CardIdError(f"card ID {bytes(data).hex()} sets reserved bits in byte 0")
        return cls(rank_suit & 0x0F, CardSuit(rank_suit >> 4), deck_set, deck)

    def __str__(self) -> str:
        """Log form: "AS" untagged, "AS#00BC614E/3" tagged (deck set in hex, then deck)."""
        text = _RANK_SYMBOLS[self.rank - 1] + self.suit.letter
        if self.tagged:
            text += f"#{self.deck_set:08X}/{self.deck}"
        return text

    @classmethod
    def parse(cls, text: str) -> CardId:
        """Read the log form back, for simulator profiles and test fixtures."""
        match = _TEXT_PATTERN.match(text.strip().upper())
        if match is None:
            raise CardIdError(
                f"bad card ID {text!r}: write rank and suit, then optionally "
                "#<deck set, 8 hex digits>/<deck>, for example AS or AS#00BC614E/3"
            )
        rank_text, suit_text, deck_set_text, deck_text = match.groups()
        rank = _RANK_SYMBOLS.index(rank_text) + 1
        suit = CardSuit("SHDC".index(suit_text))
        if deck_set_text is None:
            return cls(rank, suit)
        return cls(rank, suit, int(deck_set_text, 16), int(deck_text))
