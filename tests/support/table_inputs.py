"""Device events for the procedure tests, in the device-neutral vocabulary.

These are the procedure's real input (what every protocol family delivers),
numbered the way a device numbers them: one counter for every event.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from cardshoe.controller.config import (
    BurnPolicy,
    DeviceConfig,
    DeviceMode,
    ShoeProcedure,
    TableConfig,
)
from cardshoe.controller.procedure.inputs import DeviceCount
from cardshoe.controller.procedure.machine import State
from cardshoe.controller.procedure.operator_commands import (
    CloseBets,
    CutDone,
    ShoeLoaded,
    StartShoe,
)
from cardshoe.controller.procedure.shoe import Fact
from cardshoe.controller.procedure.table import TableModel
from cardshoe.controller.rules.cards import Card, ShoeComposition, Suit, parse_cards
from cardshoe.drivers.api.events import (
    ButtonPressed,
    CardId,
    CardSeen,
    CardSuit,
    CutCardSeen,
    FaultCleared,
    FaultKind,
    FaultRaised,
    Operation,
    OperationDone,
    Orientation,
    ReadFlag,
    ShoeEmptied,
)

DECK_SET = 0x00BC614E
MANUAL = TableConfig(shoe=ShoeProcedure(burn=BurnPolicy.FIXED, burn_fixed=1))
"""A manual shoe whose start-of-shoe burn is one card, so a test reaches round 1 at once."""
AUTOMATIC = TableConfig(device=DeviceConfig(kind=DeviceMode.AUTO))
_SUITS = {Suit.SPADES: 0, Suit.HEARTS: 1, Suit.DIAMONDS: 2, Suit.CLUBS: 3}


def card_id(card: Card, deck: int = 1, deck_set: int = DECK_SET) -> CardId:
    return CardId(card.rank, CardSuit(_SUITS[card.suit]), deck_set, deck)  # type: ignore[index]


def tagged_shoe(decks: int, seed: int, deck_set: int = DECK_SET) -> list[CardId]:
    """A shuffled shoe of tagged cards: every card of `decks` decks, each with its deck number."""
    cards = [
        card_id(card, deck, deck_set)
        for deck in range(1, decks + 1)
        for card in ShoeComposition(1).cards()
    ]
    random.Random(seed).shuffle(cards)
    return cards


def ids(text: str, deck: int = 1) -> list[CardId]:
    return [card_id(card, deck) for card in parse_cards(text)]


@dataclass
class Device:
    """Numbers events 1, 2, 3... as a device does."""

    automatic: bool = False
    seq: int = 0
    time_ms: int = 0
    feed_group: int = 0

    def _next(self) -> tuple[int, int]:
        self.seq += 1
        self.time_ms += 500
        return self.seq, self.time_ms

    def card(
        self,
        card: CardId | None,
        *,
        orientation: Orientation | None = None,
        flags: ReadFlag | None = None,
        feed_group: int = 0,
        feed_size: int = 1,
    ) -> CardSeen:
        if orientation is None:
            orientation = Orientation.FACE_UP if self.automatic else Orientation.FACE_DOWN
        flags = flags or ReadFlag(0)
        if card is None:
            flags |= ReadFlag.UNREADABLE
        code = "" if card is None else str(card)
        return CardSeen(*self._next(), card, flags, orientation, feed_group, feed_size, code)

    def double_feed(self, cards: Iterable[CardId]) -> list[CardSeen]:
        group = list(cards)
        self.feed_group = self.feed_group % 255 + 1
        return [
            self.card(
                card,
                flags=ReadFlag.DOUBLE_FEED_SUSPECTED,
                feed_group=self.feed_group,
                feed_size=len(group),
            )
            for card in group
        ]

    def button(self, number: int = 0) -> ButtonPressed:
        return ButtonPressed(*self._next(), number)

    def cut_card(self) -> CutCardSeen:
        return CutCardSeen(*self._next())

    def shoe_empty(self, cards_dealt: int) -> ShoeEmptied:
        return ShoeEmptied(*self._next(), cards_dealt)

    def fault(self, kind: FaultKind, *, reports_end: bool = True) -> FaultRaised:
        return FaultRaised(*self._next(), kind, 0, reports_end=reports_end)

    def fault_cleared(self, kind: FaultKind) -> FaultCleared:
        return FaultCleared(*self._next(), kind)

    def shuffled(self, count: int, result: str = "ok") -> OperationDone:
        return OperationDone(*self._next(), 1, Operation.SHUFFLE, result == "ok", result, count)

    def returned(self, count: int, result: str = "ok") -> OperationDone:
        return OperationDone(*self._next(), 2, Operation.RETURN, result == "ok", result, count)


@dataclass
class Table:
    """A model fed by a test, keeping every fact and every input it was given."""

    config: TableConfig
    model: TableModel = field(init=False)
    device: Device = field(init=False)
    facts: list[Fact] = field(default_factory=list)
    inputs: list[object] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.model = TableModel(self.config)
        self.device = Device(automatic=not self.config.uses_cut_card_and_burn)

    def feed(self, *items: object) -> list[Fact]:
        new: list[Fact] = []
        for item in items:
            self.inputs.append(item)
            new += self.model.apply(item)
        self.facts += new
        return new

    @property
    def state(self) -> str:
        return self.model.state

    def events(self, kind: type) -> list:
        return [fact.event for fact in self.facts if isinstance(fact.event, kind)]

    def open_manual_shoe(self, shoe_id: str = "S1", deck_set: int | None = DECK_SET) -> None:
        self.feed(StartShoe(shoe_id, deck_set), ShoeLoaded(), CutDone())

    def open_auto_shoe(self, shoe_id: str = "S1", deck_set: int | None = DECK_SET) -> None:
        self.feed(StartShoe(shoe_id, deck_set))
        self.feed(self.device.shuffled(52 * self.config.game.decks))

    def draw(self, cards: Iterable[CardId]) -> list[Fact]:
        return self.feed(*(self.device.card(card) for card in cards))

    def count(self, cards_dealt: int, remaining: int | None) -> list[Fact]:
        return self.feed(DeviceCount(cards_dealt, remaining))


def dealing(config: TableConfig = MANUAL) -> Table:
    """A table whose round 1 has just closed its bets: the next card goes to the Player.

    A manual shoe burns one card first (the 2C of its last deck), so the config's shoe
    procedure must burn exactly one (as MANUAL's does).
    """
    table = Table(config)
    if config.uses_cut_card_and_burn:
        table.open_manual_shoe()
        table.draw(ids("2C", deck=config.game.decks))
    else:
        table.open_auto_shoe()
    table.feed(CloseBets())
    assert table.state == State.DEALING
    return table


def deal_while_due(table: Table, shoe: Iterator[CardId]) -> None:
    """Draw cards while the procedure wants one, as draw control lets them out."""
    while table.model.card_due() is not None:
        table.draw([next(shoe)])


def play_round(table: Table, shoe: Iterator[CardId]) -> None:
    """From bets open to the next round open for bets (the machine's return included)."""
    assert table.state == State.BETTING
    table.feed(CloseBets())
    deal_while_due(table, shoe)
    if table.state == State.RETURNING:
        shoe_state = table.model.shoe
        assert shoe_state is not None
        table.feed(table.device.returned(shoe_state.cards_out))
    assert table.state == State.BETTING
