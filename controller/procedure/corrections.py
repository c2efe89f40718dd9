"""Art. 10 as data: which errors are corrected and which void the round, and why.

Macau Art. 10: an error in the deal "is corrected at once; where it cannot be
corrected, the round is cancelled". Whether it can be corrected depends on
what went wrong, when, and whether the order of the cards is known: a card
whose place in the deal is known can be put right, one whose place is not
cannot (7 Up 5.2-5.4 void only "when the hand cannot be reconstructed" or
"it is not possible to ascertain the order"). CORRECTIONS is that decision
for everything the procedure decides by itself; VOID_REASONS are the reasons
a supervisor may give to void the round under way for an error only a person
sees (the void-round command).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from cardshoe.controller.procedure.irregularities import Irregularity


class When(StrEnum):
    """Where in the round the irregularity shows."""

    INITIAL_DEAL = "initial deal"
    THIRD_CARD = "third card"
    BURN = "burn"
    """The start-of-shoe burn or the round's burn: no hand is due the card."""


class Remedy(StrEnum):
    CORRECT = "correct"
    """Put right at once; the round goes on."""
    VOID = "void"
    """Cannot be put right: the round is cancelled, stakes returned, earlier results stand."""


@dataclass(frozen=True)
class Correction:
    remedy: Remedy
    how: str
    rule: str


CorrectionKey = tuple[Irregularity, When, bool]
"""(irregularity, when, does the device know the cards' order?)"""

_EITHER_DEAL = (When.INITIAL_DEAL, When.THIRD_CARD)


def _rows() -> dict[CorrectionKey, Correction]:
    rows: dict[CorrectionKey, Correction] = {}
    for when in _EITHER_DEAL:
        rows[(Irregularity.DOUBLE_FEED, when, False)] = Correction(
            Remedy.VOID,
            "cards left together and nobody knows their order: none goes to a hand",
            "7 Up 5.4 (initial deal); Macau Art. 10 (cannot be corrected)",
        )
        rows[(Irregularity.DOUBLE_FEED, when, True)] = Correction(
            Remedy.CORRECT,
            "the reader read the cards one after the other (FEED_IN_ORDER): each goes to the "
            "hand due it, recorded as double_feed_in_order",
            "7 Up 5.4 voids only when the order cannot be established; Macau Art. 10",
        )
        rows[(Irregularity.MISREAD_CARD, when, True)] = Correction(
            Remedy.CORRECT,
            "its place is known, only its identity is not: the table holds (misread_card) "
            "until the card is passed through the reader again (the re-read) or a supervisor "
            "enters it (enter-card); it then goes to the hand due it, recorded as "
            "card.corrected. The re-read is checked like any card: unreadable again, the table "
            "holds on; foreign, a duplicate or a copy too many, the round is void. void-round "
            "stays possible. A misread card of a double feed cannot wait (the group's next "
            "card comes at once): its round is void",
            "Macau Art. 10 (corrected at once; cancelled only where it cannot be corrected)",
        )
        rows[(Irregularity.FOREIGN_CARD, when, True)] = Correction(
            Remedy.VOID, "a card not of the pack is in the round", "7 Up 5.1; Macau Art. 10"
        )
        rows[(Irregularity.DUPLICATE_CARD, when, True)] = Correction(
            Remedy.VOID, "a second physical card with one tag: tampering", "Macau Art. 10"
        )
        rows[(Irregularity.EXCESS_COPIES, when, True)] = Correction(
            Remedy.VOID, "more copies of a card than the decks hold", "Macau Arts. 1 and 10"
        )
        rows[(Irregularity.FACE_DOWN_CARD, when, True)] = Correction(
            Remedy.CORRECT,
            "the table holds until the dealer turns the card face up (confirm-face-up)",
            "Macau Art. 7.2",
        )
        rows[(Irregularity.FACE_UP_CARD, when, True)] = Correction(
            Remedy.CORRECT, "valid as it lies; play continues", "Macau Art. 4"
        )
    rows[(Irregularity.INSUFFICIENT_CARDS, When.THIRD_CARD, True)] = Correction(
        Remedy.VOID, "the shoe ran out before the round was complete", "7 Up 5.5"
    )
    for code in (Irregularity.DOUBLE_FEED, Irregularity.MISREAD_CARD):
        for known in (False, True):
            if code is Irregularity.MISREAD_CARD and not known:
                continue
            rows[(code, When.BURN, known)] = Correction(
                Remedy.CORRECT, "burned like any burn card: no hand was due it", "Macau Art. 10"
            )
    return rows


CORRECTIONS: Mapping[CorrectionKey, Correction] = _rows()


class VoidReason(StrEnum):
    """Why a supervisor voids the round under way: errors only a person sees."""

    MISDEAL = "misdeal"
    DRAW_AGAINST_RULES = "draw_against_rules"
    PLAYER_HAND_NOT_RECONSTRUCTABLE = "player_hand_not_reconstructable"
    BANKER_HAND_NOT_RECONSTRUCTABLE = "banker_hand_not_reconstructable"
    CARDS_DRAWN_TOGETHER = "cards_drawn_together"
    FOREIGN_CARD_FOUND = "foreign_card_found"


MACAU_TEXT_GAMES = ("punto-banco", "macau-1", "macau-2")
"""Games dealt by the Macau 2007 text's procedure (docs/rules-engine.md, Sources)."""
SEVEN_UP_TEXT_GAMES = ("seven-up",)
"""Games dealt by the MBS 7 Up text, whose section 5 names its own irregularities."""


@dataclass(frozen=True)
class VoidRule:
    meaning: str
    rule: str
    games: tuple[str, ...]
    """The games whose rule text gives this reason: each table offers only its own text's."""


VOID_REASONS: Mapping[VoidReason, VoidRule] = {
    VoidReason.MISDEAL: VoidRule(
        "a card was dealt in error and cannot be put right",
        "Macau Art. 10 派牌时如出现错误",
        MACAU_TEXT_GAMES,
    ),
    VoidReason.DRAW_AGAINST_RULES: VoidRule(
        "a card was drawn against the drawing rules and cannot be put right",
        "Macau Art. 10 增牌不依规例",
        MACAU_TEXT_GAMES,
    ),
    VoidReason.PLAYER_HAND_NOT_RECONSTRUCTABLE: VoidRule(
        "more than one card reached the Player hand in the initial deal and it cannot be "
        "reconstructed",
        "7 Up 5.2",
        SEVEN_UP_TEXT_GAMES,
    ),
    VoidReason.BANKER_HAND_NOT_RECONSTRUCTABLE: VoidRule(
        "more than two cards reached the Banker hand in the initial deal and it cannot be "
        "reconstructed",
        "7 Up 5.3",
        SEVEN_UP_TEXT_GAMES,
    ),
    VoidReason.CARDS_DRAWN_TOGETHER: VoidRule(
        "two or more cards were drawn at once in the initial deal and their order is unknown",
        "7 Up 5.4",
        SEVEN_UP_TEXT_GAMES,
    ),
    VoidReason.FOREIGN_CARD_FOUND: VoidRule(
        "a person found a foreign card in the round",
        "7 Up 5.1; Macau Art. 10",
        (*MACAU_TEXT_GAMES, *SEVEN_UP_TEXT_GAMES),
    ),
}


def void_reasons_of(game: str) -> Mapping[VoidReason, VoidRule]:
    """The void-round reasons a table of `game` offers: those its own rule text gives."""
    return {reason: rule for reason, rule in VOID_REASONS.items() if game in rule.games}
