"""The cards each shoe of a journal let out, in order: what every protection check reads.

A reading shoe sees every card that leaves it, burned, dealt or set aside,
and the journal holds them in that order with each card's physical id (its
deck set and copy). The journal is the truth, so the analyses, the odds of a
remaining shoe and the live watcher after a restart all read it, never a
display's copy.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cardshoe.controller.errors import UserError
from cardshoe.controller.journal.records import Record
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.procedure.facts import (
    Burned,
    CardAssigned,
    CardSetAside,
    CardsReturned,
    RoundResult,
    RoundVoided,
    ShoeEnded,
    ShoeStarted,
)
from cardshoe.controller.rules.cards import Card, parse_card

CARD_KINDS = (Burned.KIND, CardAssigned.KIND, CardSetAside.KIND)
ROUND_END_KINDS = (RoundResult.KIND, RoundVoided.KIND)
SHOE_KINDS = (ShoeEnded.KIND, CardsReturned.KIND, *CARD_KINDS, *ROUND_END_KINDS)
"""The records of a shoe that say what left it, what went back into an automatic machine,
and when its rounds and itself ended."""


@dataclass(frozen=True)
class SeenCard:
    """One card that left the shoe; card and physical_id are None when it could not be read."""

    card: Card | None
    physical_id: str | None

    @property
    def tagged_id(self) -> str | None:
        """The physical id when it names one physical card (deck set and copy), else None."""
        return self.physical_id if self.physical_id and "#" in self.physical_id else None


@dataclass
class JournaledShoe:
    """One shoe as its journal records it."""

    shoe_id: str
    game: str
    decks: int
    cards: list[SeenCard] = field(default_factory=list)
    seen_at_round_end: dict[int, int] = field(default_factory=dict)
    """Round number -> how many cards had left the shoe when that round ended."""
    returns: list[int] = field(default_factory=list)
    """How many cards had left at each return to an automatic machine: every card out then
    went back in, so it may be dealt again and is part of the remaining shoe once more."""
    ended: bool = False

    @property
    def size(self) -> int:
        return 52 * self.decks

    def known_cards(self, upto: int | None = None) -> list[Card]:
        """The readable cards among the first `upto` that left (all of them by default)."""
        return [seen.card for seen in self.cards[:upto] if seen.card is not None]

    def still_out(self, upto: int | None = None) -> list[Card]:
        """The readable cards out of the shoe once the first `upto` had left (all by default):
        those dealt since the last return to the machine before then."""
        upto = len(self.cards) if upto is None else upto
        since = max((at for at in self.returns if at <= upto), default=0)
        return [seen.card for seen in self.cards[since:upto] if seen.card is not None]

    def cards_after_round(self, round_no: int) -> list[Card]:
        """The readable cards out of the shoe when round `round_no` ended."""
        if round_no not in self.seen_at_round_end:
            rounds = sorted(self.seen_at_round_end)
            known = f"rounds {rounds[0]}-{rounds[-1]}" if rounds else "no round yet"
            raise UserError(
                f"shoe {self.shoe_id} has no round {round_no} that ended: it has {known}"
            )
        return self.still_out(self.seen_at_round_end[round_no])


def read_shoes(
    journal: Journal, *, last: int | None = None, shoe_id: str | None = None
) -> list[JournaledShoe]:
    """The journal's shoes (only the `last` ones, or only the shoe `shoe_id`, when given) in
    the order they started, each with its cards in the order seen.

    The starts are found through the journal's index by kind and each shoe's records
    through its index by shoe, so the live watcher, which needs the last two shoes, and
    `shoectl odds --journal`, one, never read a year of cards.
    """
    if shoe_id is not None:
        starts = list(journal.records(shoe_id=shoe_id, kinds=[ShoeStarted.KIND]))
    elif last is not None:
        starts = journal.latest([ShoeStarted.KIND], last)
    else:
        starts = list(journal.records(kinds=[ShoeStarted.KIND]))
    shoes = []
    for start in starts:
        payload = start.payload
        shoe = JournaledShoe(payload["shoe_id"], payload["game"], int(payload["decks"]))
        for record in journal.records(shoe_id=shoe.shoe_id, kinds=SHOE_KINDS):
            _take(shoe, record)
        shoes.append(shoe)
    return shoes


def _take(shoe: JournaledShoe, record: Record) -> None:
    if record.kind in CARD_KINDS:
        text = record.payload.get("card")
        card = None if text is None else parse_card(text)
        shoe.cards.append(SeenCard(card, record.payload["physical_id"]))
    elif record.kind in ROUND_END_KINDS:
        # A settled round voided later (its correction window) ended at its result.
        shoe.seen_at_round_end.setdefault(int(record.payload["round_no"]), len(shoe.cards))
    elif record.kind == CardsReturned.KIND:
        shoe.returns.append(len(shoe.cards))
    elif record.kind == ShoeEnded.KIND:
        shoe.ended = True


def journal_shoe(journal: Journal, shoe_id: str | None, source: str) -> JournaledShoe:
    """The shoe named, or the latest one, read alone; bad input when there is none."""
    found = read_shoes(journal, last=1) if shoe_id is None else read_shoes(journal, shoe_id=shoe_id)
    if found:
        return found[0]
    latest = [start.payload["shoe_id"] for start in journal.latest([ShoeStarted.KIND], 3)]
    if not latest:
        raise UserError(f"{source} holds no shoe: deal one first, or give another journal")
    raise UserError(
        f"{source} holds no shoe {shoe_id!r}; its latest shoes are " + ", ".join(latest)
    )
