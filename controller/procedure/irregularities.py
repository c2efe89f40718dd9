"""Irregular cards and events: reason codes, what each one does, and the card check.

The table IRREGULARITIES says, for every reason code, what the procedure does
(Macau Art. 4 and Art. 10, 7 Up section 5): a card that cannot be placed in
its order voids the round (stakes returned, earlier results stand); a card
whose order is known is corrected (burned, or held until the dealer turns
it face up); a reversed card in a manual shoe is valid and only recorded.
inspect_card() is the pure check of one card against the loaded shoe; the
procedure (dealing.py) decides from its context which consequence applies.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass
from enum import StrEnum

from cardshoe.controller.procedure.facts import AlarmKind
from cardshoe.controller.rules.cards import Card, Suit
from cardshoe.drivers.api.events import (
    NO_FLAGS,
    CardId,
    CardSeen,
    CardSuit,
    Orientation,
    ReadFlag,
)


class Irregularity(StrEnum):
    """Reason codes, as they appear in the journal and on void rounds."""

    FOREIGN_CARD = "foreign_card"
    DUPLICATE_CARD = "duplicate_card"
    EXCESS_COPIES = "excess_copies"
    MISREAD_CARD = "misread_card"
    DOUBLE_FEED = "double_feed"
    DOUBLE_FEED_IN_ORDER = "double_feed_in_order"
    CARD_AFTER_ROUND = "card_after_round"
    CARD_OUTSIDE_ROUND = "card_outside_round"
    CARD_DURING_HOLD = "card_during_hold"
    FACE_DOWN_CARD = "face_down_card"
    FACE_UP_CARD = "face_up_card"
    INSUFFICIENT_CARDS = "insufficient_cards"
    SEQUENCE_GAP = "sequence_gap"


class Consequence(StrEnum):
    """What an irregular card does to a round being dealt."""

    VOID_ROUND = "void_round"
    """The card cannot be placed in its order: the round is void (Macau Art. 10)."""
    HOLD = "hold"
    """The card is placed; the table holds until the dealer corrects it."""
    BURN = "burn"
    """No hand is due a card: it is burned and recorded, the round stands."""
    RECORD = "record"
    """The card is valid; the irregularity is only recorded (Macau Art. 4)."""


@dataclass(frozen=True)
class IrregularityRule:
    consequence: Consequence
    alarm: AlarmKind | None
    source: str
    """Where the rule comes from."""
    meaning: str


IRREGULARITIES: Mapping[Irregularity, IrregularityRule] = {
    Irregularity.FOREIGN_CARD: IrregularityRule(
        Consequence.VOID_ROUND,
        AlarmKind.FOREIGN_CARD,
        "7 Up 5.1; Macau Art. 10",
        "the card's deck-set serial is not the loaded set's, or it carries no tag",
    ),
    Irregularity.DUPLICATE_CARD: IrregularityRule(
        Consequence.VOID_ROUND,
        AlarmKind.TAMPER,
        "Macau Art. 10",
        "the same physical card (card ID) was already drawn from this shoe",
    ),
    Irregularity.EXCESS_COPIES: IrregularityRule(
        Consequence.VOID_ROUND,
        AlarmKind.TAMPER,
        "Macau Art. 1 and 10",
        "more copies of this card have been drawn than the loaded decks hold",
    ),
    Irregularity.MISREAD_CARD: IrregularityRule(
        Consequence.HOLD,
        None,
        "Macau Art. 10",
        "the card's code could not be read or failed its check value: its identity is unknown; "
        "due to a hand, the table holds (misread_card): re-read the card (pass it through the "
        "reader again) or have a supervisor enter it (enter-card --card), or void the round "
        "(void-round)",
    ),
    Irregularity.DOUBLE_FEED: IrregularityRule(
        Consequence.VOID_ROUND,
        None,
        "7 Up 5.4; Macau Art. 10",
        "cards left the shoe together and their order is unknown; none is given to a hand",
    ),
    Irregularity.DOUBLE_FEED_IN_ORDER: IrregularityRule(
        Consequence.RECORD,
        None,
        "7 Up 5.4; Macau Art. 10",
        "cards left together but the reader read them one after the other: each goes to the "
        "hand due it (corrected, not void)",
    ),
    Irregularity.CARD_AFTER_ROUND: IrregularityRule(
        Consequence.BURN,
        None,
        "Macau Art. 10",
        "a card drawn when the round was complete: burned, the round stands",
    ),
    Irregularity.CARD_OUTSIDE_ROUND: IrregularityRule(
        Consequence.BURN,
        None,
        "Macau Art. 10",
        "a card drawn when no round and no burn was under way: burned",
    ),
    Irregularity.CARD_DURING_HOLD: IrregularityRule(
        Consequence.RECORD,
        None,
        "Macau Art. 10",
        "a card drawn while the table was on hold: placed in its order if one was due",
    ),
    Irregularity.FACE_DOWN_CARD: IrregularityRule(
        Consequence.HOLD,
        None,
        "Macau Art. 7.2",
        "the automatic machine dealt a card face down: hold until the dealer turns it up",
    ),
    Irregularity.FACE_UP_CARD: IrregularityRule(
        Consequence.RECORD,
        None,
        "Macau Art. 4",
        "a card came out of the manual shoe face up: valid, play continues",
    ),
    Irregularity.INSUFFICIENT_CARDS: IrregularityRule(
        Consequence.VOID_ROUND,
        None,
        "7 Up 5.5",
        "the shoe ran out before the round was complete",
    ),
    Irregularity.SEQUENCE_GAP: IrregularityRule(
        Consequence.VOID_ROUND,
        AlarmKind.SEQUENCE_GAP,
        "docs/protocol.md, event delivery",
        "device events were lost: the round's cards may be missing",
    ),
}

INTRUDER_FINDINGS = frozenset(
    {Irregularity.FOREIGN_CARD, Irregularity.DUPLICATE_CARD, Irregularity.EXCESS_COPIES}
)
"""Findings that mean the card was never part of the loaded pack, so it adds to the count."""

_SUITS = {
    CardSuit.SPADES: Suit.SPADES,
    CardSuit.HEARTS: Suit.HEARTS,
    CardSuit.DIAMONDS: Suit.DIAMONDS,
    CardSuit.CLUBS: Suit.CLUBS,
}


_CARDS: Mapping[tuple[int, CardSuit], Card] = {
    (rank, card_suit): Card(rank, suit)
    for card_suit, suit in _SUITS.items()
    for rank in range(1, 14)
}
"""Each rank and suit's card, built once: every CARD event asks for its card three times."""


def card_of(card_id: CardId) -> Card:
    """The rules engine's card for a physical card ID."""
    return _CARDS[card_id.rank, card_id.suit]


@dataclass(frozen=True)
class CardInspection:
    """One CARD event checked against the loaded shoe."""

    card_id: CardId | None
    """None when the card was misread."""
    findings: tuple[Irregularity, ...]

    @property
    def card(self) -> Card | None:
        return None if self.card_id is None else card_of(self.card_id)

    @property
    def voids(self) -> tuple[Irregularity, ...]:
        """Findings that keep the card from any hand."""
        if not self.findings:  # nearly every card: asked for each
            return ()
        return tuple(
            code
            for code in self.findings
            if IRREGULARITIES[code].consequence is Consequence.VOID_ROUND
        )

    @property
    def is_intruder(self) -> bool:
        """The card was never part of the loaded pack: foreign, seen twice, or a copy too many."""
        return not INTRUDER_FINDINGS.isdisjoint(self.findings)

    @property
    def belongs_to_shoe(self) -> bool:
        """Whether the card counts against the shoe's copies: read, and no intruder.

        An intruder must not change the count of the genuine cards: a duplicate
        counted as a copy would make the genuine card's last copy look like one
        too many, voiding a later round for a card that was in the pack.
        """
        return self.card_id is not None and not self.is_intruder


def inspect_card(
    event: CardSeen,
    *,
    automatic: bool,
    deck_set: int | None,
    decks: int,
    seen: Set[CardId],
    copies: Mapping[Card, int],
    starts_feed_group: bool,
) -> CardInspection:
    """Every irregularity one card shows by itself, in the order they are recorded.

    deck_set None means the loaded set is not known yet (nothing to compare);
    0 means an untagged shoe. automatic is true for a shuffler-dealer, whose
    cards must come face up (Art. 7.2); a manual shoe's come face down.
    starts_feed_group is true for the first card of a double feed; the rest
    of its group is the same irregularity, recorded once.
    """
    card_id = event.card
    findings: list[Irregularity] = []
    if card_id is None:
        findings.append(Irregularity.MISREAD_CARD)
    else:
        if deck_set and card_id.deck_set != deck_set:
            findings.append(Irregularity.FOREIGN_CARD)
        elif card_id.tagged and card_id in seen:
            findings.append(Irregularity.DUPLICATE_CARD)
        elif copies.get(card_of(card_id), 0) >= decks:
            findings.append(Irregularity.EXCESS_COPIES)
    if starts_feed_group:
        findings.append(Irregularity.DOUBLE_FEED)
    flags = event.flags
    # NO_FLAGS first: nearly every read is clean, and a Flag's `in` is slow Python.
    if (
        flags is not NO_FLAGS
        and ReadFlag.DOUBLE_FEED_SUSPECTED in flags
        and ReadFlag.FEED_IN_ORDER in flags
    ):
        findings.append(Irregularity.DOUBLE_FEED_IN_ORDER)
    if automatic and event.orientation is Orientation.FACE_DOWN:
        findings.append(Irregularity.FACE_DOWN_CARD)
    if not automatic and event.orientation is Orientation.FACE_UP:
        findings.append(Irregularity.FACE_UP_CARD)
    return CardInspection(card_id, tuple(findings))
