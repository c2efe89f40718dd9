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
import struct

from cardshoe.drivers.api.events import CardId as NeutralCardId
from cardshoe.drivers.api.events import CardSuit
from cardshoe.drivers.protocol.errors import CardIdError

CARD_ID_SIZE = 8
_BODY = struct.Struct("<BIB")
_CHECK = struct.Struct("<H")


def _check_value(body: bytes) -> int:
    """CRC-16/CCITT catches every error of up to 3 bits and every burst of up to 16."""
    return binascii.crc_hqx(body, 0xFFFF)


class CardId(NeutralCardId):
    """A card with its 8-byte wire form: the device-neutral card (api/events.py) plus the
    codec, raising this protocol's CardIdError."""

    invalid = CardIdError

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
