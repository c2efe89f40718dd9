"""What an operator types, checked before it reaches the procedure: shoe ids, deck sets, cards.

A shoe id names the shoe in the journal, the logs and every display, so it
keeps to a safe alphabet (the table id's) and is unique within a journal (the
session checks that, against the journal). A deck set is the u32 serial the
card tags carry; every output prints it as 0x followed by eight hex digits
(0x00BC614E), and an operator may type it that way or in decimal.
"""

from __future__ import annotations

from cardshoe.controller.errors import UserError
from cardshoe.controller.rules.cards import Card, parse_cards
from cardshoe.controller.rules.errors import CardNotationError
from cardshoe.controller.safe_names import SAFE_NAME_PATTERN, SAFE_NAME_RULE

DECK_SET_MAX = 0xFFFF_FFFF
"""A deck set is a u32 on the wire (docs/protocol.md, card IDs)."""


def deck_set_text(deck_set: int) -> str:
    """The one printed form of a deck set: 0x00BC614E."""
    return f"0x{deck_set:08X}"


def parse_deck_set(value: int | str, key: str = "--deck-set") -> int:
    """A deck set as typed (0x00BC614E or 12345678) or sent as a JSON number; UserError if not.

    0 is an untagged shoe; anything outside 0-0xFFFFFFFF cannot be on a card.
    """
    number: int | None
    if isinstance(value, bool):
        number = None
    elif isinstance(value, int):
        number = value
    else:
        text = value.strip()
        try:
            number = int(text, 16) if text.lower().startswith("0x") else int(text, 10)
        except ValueError:
            number = None
    if number is None or not 0 <= number <= DECK_SET_MAX:
        raise UserError(
            f"{key} {value!r} is not a deck set: give the serial printed on the box, "
            f"as 0x followed by 8 hex digits (0x00BC614E) or in decimal, 0-{DECK_SET_MAX}"
        )
    return number


def check_shoe_id(shoe_id: str, key: str = "--shoe-id") -> None:
    """Refuse a shoe id outside the safe alphabet; the session checks it is new."""
    if not SAFE_NAME_PATTERN.match(shoe_id):
        raise UserError(f"{key} {shoe_id!r} is not usable: use {SAFE_NAME_RULE}")


def parse_entered_card(text: str, key: str = "--card") -> Card:
    """One card of the shoe as a supervisor types it (7H, TD, 10d); UserError if not.

    The rules engine's notation, so the card is printed back as the journal
    holds it; 7 Up's mandatory seven is placed by the dealer, never read.
    """
    try:
        cards = parse_cards(text)
    except CardNotationError as error:
        raise UserError(f"{key}: {error}") from None
    if len(cards) != 1:
        raise UserError(
            f"{key} {text!r} is not one card: enter the one card the reader could not read, "
            "as rank (A 2-9 T J Q K, or 10) then suit (S H D C), for example 7H"
        )
    return cards[0]
