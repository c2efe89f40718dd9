"""What the procedure knows about the shoe and the round in play: plain data.

The model (table.py and the jobs it builds on, listed in base.py) changes
these; the session and the displays read them. Fact is one established observer
event with the shoe and round it belongs to, as the journal stores it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import NamedTuple

from cardshoe.controller.procedure.facts import BurnReason, TableEvent
from cardshoe.controller.rules.cards import Card
from cardshoe.controller.rules.hands import Hand
from cardshoe.controller.rules.rounds import RoundInProgress
from cardshoe.drivers.api.events import CardId

CARDS_PER_DECK = 52


class Fact(NamedTuple):
    """An established fact with the shoe and round it belongs to, for the journal."""

    event: TableEvent
    shoe_id: str | None
    round_no: int | None


CardDue = Hand | BurnReason
"""What the next card from the shoe is for: a hand, or a burn."""


@dataclass
class FeedGroup:
    """A double feed whose remaining cards are still to be reported."""

    group: int
    remaining: int
    burn: BurnReason | None
    """The group's cards are burned for this reason; None: set aside in the round."""
    in_order: bool = False
    """The reader read the group's cards one after the other (FEED_IN_ORDER): each is dealt as
    if alone; no other card may leave, nor the round end, before the group is complete."""


@dataclass(frozen=True)
class MisreadCard:
    """A card of the round that could not be read, awaiting its re-read or its entry."""

    hand: Hand
    """The hand it was due: the one it goes to once its identity is known."""
    index: int
    """Its place among the round's cards (Round.cards), where its identity goes."""


@dataclass
class Round:
    number: int
    demo: bool
    deal: RoundInProgress
    void_reason: str | None = None
    cards: list[Card | None] = field(default_factory=list)
    """Every card the round took: assigned, set aside, or misread and not yet corrected."""
    misread: MisreadCard | None = None
    """A card due to a hand that could not be read: the table holds until it is corrected."""
    carried_in: int | None = None
    """The tied round whose Banker and Player bets stand for this one (Art. 11)."""


@dataclass
class ShoeState:
    shoe_id: str
    deck_set: int | None
    loaded: int
    deck_set_declared: bool = False
    """The operator named the deck set (rather than the first card showing it)."""
    declared_set_seen: bool = False
    """A card of the declared set came out: the pack loaded is the one declared."""
    pack_checked: bool = False
    """The device's count of the pack was compared with the table's decks."""
    set_evidence: list[tuple[CardId, int | None]] = field(default_factory=list)
    """With no deck set declared, the readable cards so far and the round each came out in,
    until the set most of them show is adopted."""
    seen: set[CardId] = field(default_factory=set)
    copies: Counter[Card] = field(default_factory=Counter)
    """Cards out of the shoe; an automatic machine takes them back, and may deal them again,
    after each return (continuous shuffling)."""
    dealt: int = 0
    """Cards a round took (assigned to a hand or set aside in a void round)."""
    burned: int = 0
    intruders: int = 0
    """Cards that came out but were never loaded: foreign, a physical card seen twice, or a
    copy more than the decks hold. The shoe held them on top of what was loaded."""
    returned: int = 0
    cards_out: int = 0
    """Cards taken out of the automatic machine since its last shuffle or return."""
    burn_reason: BurnReason | None = None
    burn_remaining: int | None = 0
    """Cards still to burn; None until the first card of the start-of-shoe burn is seen."""
    first_card_unread: bool = False
    """Under the first-card burn the first card could not be read: the burn count waits
    for its re-read or its entry (Art. 2.1, and Art. 18 makes the option binding)."""
    relief_burn_due: bool = False
    """A dealer relieved another: the next round's burn begins with game.relief_burn cards."""
    rounds_opened: int = 0
    rounds_finished: int = 0
    last_round: int | None = None
    carried_from: int | None = None
    """A tied round whose Banker and Player bets stand for the next round to open (Art. 11)."""
    settled: Round | None = None
    """The round just settled, while a supervisor may still void it: until the next round's
    bets close (the correction window, docs/procedure.md)."""
    empty: bool = False
    feed: FeedGroup | None = None
