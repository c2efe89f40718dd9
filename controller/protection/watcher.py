"""The live game-protection watcher: after every card and round, for surveillance only.

The session hands it every committed fact. It follows the shoe's cards and

- after each round prices every bet of the game for the shoe that is left
  (exactly, in milliseconds: rules/odds.py) in a child process
  (pricing_process.py), waited for on a worker thread (pricing_worker.py),
  so the next card never waits for it; when a bet's expected return to the player
  rises above surveillance.advantage_threshold it journals an `advantage`
  record and a surveillance alarm, once each time the bet turns;
- after each card asks the stacked-shoe detector, and journals a
  surveillance alarm for a run a fair shuffle would almost never deal.

Its alarms are ordinary `alarm` records, so the floor copies them like any
other, but they go to the journal, the log and the surveillance listeners
(add_alarm_listener: the demo's own output) only: never to the session's
observers, so no table display or scoreboard shows them to the players.
After a restart it rebuilds its shoe from the journal, alarms included, and
its first pricing first prices the shoe as the restart found it, to know which
alarmed bets are still favoured; a pricing the restart cut short is made good
by the next round's, which alarms for every favoured bet not yet alarmed.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import ClassVar

import structlog

from cardshoe.controller import record_kinds
from cardshoe.controller.config import TableConfig
from cardshoe.controller.journal.records import Record
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.procedure.facts import (
    WATCHER_ALARMS,
    Alarm,
    AlarmKind,
    Burned,
    CardAssigned,
    CardSetAside,
    CardsReturned,
    RoundResult,
    RoundVoided,
    ShoeEnded,
    ShoeStarted,
    TableEvent,
)
from cardshoe.controller.protection.pricing_process import PRICING, PricedGame
from cardshoe.controller.protection.pricing_worker import PricingWorker
from cardshoe.controller.protection.shoe_records import JournaledShoe, SeenCard, read_shoes
from cardshoe.controller.protection.stacked_shoe import StackedShoeDetector
from cardshoe.controller.rules.cards import Card, ShoeComposition
from cardshoe.controller.rules.errors import RulesError
from cardshoe.controller.rules.paytables import Bet

log = structlog.get_logger(__name__)

ORDER_KEPT_PACKS = 2
"""The watcher keeps the order of the latest this many packs' worth of cards for the next
shoe's carry-over test: a manual shoe's whole order, and an automatic machine's latest
passes through its pack, whose shoe may deal the same cards again without end (Art. 7.2)."""


@dataclass(frozen=True)
class Advantage(TableEvent):
    """A bet of the remaining shoe turned in the player's favour (journal record only)."""

    KIND: ClassVar[str] = record_kinds.ADVANTAGE
    bet: Bet
    player_edge: float
    """The player's expected return per unit staked on the remaining shoe."""
    player_edge_exact: str
    round_no: int
    """The round after which the remaining shoe was priced."""
    cards_left: int


def is_watcher_record(record: Record) -> bool:
    """A record the watcher wrote, which no replay of the procedure gives."""
    if record.kind == Advantage.KIND:
        return True
    return record.kind == Alarm.KIND and record.payload.get("kind") in WATCHER_ALARMS


@dataclass
class _Shoe:
    """The shoe being dealt, as the watcher follows it."""

    shoe_id: str
    decks: int
    detector: StackedShoeDetector
    cards: deque[SeenCard] = field(init=False)
    """The cards that left, in order, returned or not, the latest ORDER_KEPT_PACKS packs'
    worth: the order the next shoe's stacked-shoe test compares with."""

    def __post_init__(self) -> None:
        self.cards = deque(maxlen=ORDER_KEPT_PACKS * ShoeComposition(self.decks).size)

    out: list[Card] = field(default_factory=list)
    """The readable cards out of the shoe now; an automatic machine takes them back in."""
    favoured: set[Bet] = field(default_factory=set)
    """Bets whose last pricing was above the threshold: they alarmed when they turned.
    Only the pricing worker touches it once the watcher is running."""
    unpriceable: bool = False
    """Whether a pricing of this shoe has failed already (warned once, not every round)."""
    recovered: _Recovered | None = None
    """A shoe open at a restart: what its first pricing settles before it prices the round."""

    def not_priced(self, round_no: int | None, error: RulesError) -> None:
        """A remaining shoe the rules cannot price (more copies of a card out than the decks
        hold, after a double read or a foreign card): the procedure has its own words for
        that; surveillance says once, in one line, that it is not pricing this shoe."""
        if not self.unpriceable:
            self.unpriceable = True
            log.warning(
                "remaining shoe not priced", shoe_id=self.shoe_id, round=round_no, reason=str(error)
            )


@dataclass(frozen=True)
class _Recovered:
    """An open shoe at a restart: the bets it alarmed for before, and the cards then out.

    Which of those bets are still favoured takes a pricing of the restart's remaining shoe:
    the worker does it before the shoe's first round after the restart, on the child, so
    start-up neither waits for the child nor loads the pricing table into the service."""

    alarmed: frozenset[Bet]
    out: tuple[Card, ...]


@dataclass(frozen=True)
class _Pricing:
    """One round's pricing: the cards out when it ended, copied for the worker."""

    shoe: _Shoe
    round_no: int
    out: tuple[Card, ...]


class ProtectionWatcher:
    """An observer of the session that journals the surveillance alarms (see module docstring)."""

    def __init__(self, config: TableConfig, journal: Journal, device_serial: str | None) -> None:
        self._game = PricedGame(config.game.build_game())
        self._threshold = config.surveillance.advantage_threshold
        self._journal = journal
        self._device_serial = device_serial
        self._previous_order: list[str] = []
        self._shoe: _Shoe | None = None
        self._pricing: PricingWorker[_Pricing] = PricingWorker(self._price)
        self._alarm_listeners: list[Callable[[Alarm], None]] = []
        self._recover(read_shoes(journal, last=2))
        PRICING.start()  # now, not at round 1's pricing

    def notify(self, event: TableEvent) -> None:
        if isinstance(event, ShoeStarted):
            self._start(event.shoe_id, event.decks)
        elif isinstance(event, ShoeEnded):
            if self._shoe is not None:
                self._previous_order = _tagged_order(self._shoe.cards)
            self._shoe = None
            self.drain()
        elif self._shoe is not None:
            if isinstance(event, Burned | CardAssigned | CardSetAside):
                self._take(self._shoe, SeenCard(event.card, event.physical_id), event)
            elif isinstance(event, CardsReturned):
                self._shoe.out.clear()
            elif isinstance(event, RoundResult | RoundVoided):
                shoe = self._shoe
                self._pricing.submit(_Pricing(shoe, event.round_no, tuple(shoe.out)))

    def add_alarm_listener(self, listener: Callable[[Alarm], None]) -> None:
        """Hand each alarm, once journaled, to a surveillance consumer (the demo's own output):
        never to a table display, which subscribes to the session, not here. The listener runs
        on the pricing worker's thread or the session's."""
        self._alarm_listeners.append(listener)

    def drain(self) -> None:
        """Wait until every round handed over so far is priced and its alarms journaled."""
        self._pricing.drain()

    def _start(self, shoe_id: str, decks: int) -> _Shoe:
        self._shoe = _Shoe(shoe_id, decks, StackedShoeDetector(decks, self._previous_order))
        return self._shoe

    def _take(self, shoe: _Shoe, seen: SeenCard, event: TableEvent) -> None:
        self._pricing.dealt()
        shoe.cards.append(seen)
        if seen.card is not None:
            shoe.out.append(seen.card)
        round_no = getattr(event, "round_no", None)
        for run in shoe.detector.take(seen):
            self._raise(shoe, round_no, AlarmKind.STACKED_SHOE, run.detail, None)

    def _price(self, job: _Pricing) -> None:
        """On the pricing worker: alarm for each bet that turned in the player's favour."""
        shoe, round_no = job.shoe, job.round_no
        try:
            if shoe.recovered is not None:
                self._settle_recovered(shoe, shoe.recovered)
            priced = PRICING.price(self._game, shoe.decks, job.out)
        except RulesError as error:
            shoe.not_priced(round_no, error)
            return
        favoured = priced.above(self._threshold)
        shoe.favoured &= set(favoured)
        for bet, edge in favoured.items():
            if bet in shoe.favoured:
                continue
            shoe.favoured.add(bet)
            advantage = Advantage(bet, float(edge), str(edge), round_no, priced.cards_left)
            detail = (
                f"{bet.value} returns {float(edge):+.2%} to the player after round {round_no}, "
                f"{priced.cards_left} cards left"
            )
            self._raise(shoe, round_no, AlarmKind.ADVANTAGE, detail, advantage)

    def _settle_recovered(self, shoe: _Shoe, recovered: _Recovered) -> None:
        """The bets alarmed before the restart and favoured at it stay alarmed; the others
        alarm again when they turn, as they would have without the restart."""
        shoe.recovered = None
        edges = PRICING.price(self._game, shoe.decks, recovered.out)
        shoe.favoured = set(recovered.alarmed) & set(edges.above(self._threshold))

    def _raise(
        self,
        shoe: _Shoe,
        round_no: int | None,
        kind: AlarmKind,
        detail: str,
        record: TableEvent | None,
    ) -> None:
        """Journal the record and its alarm together, and log it: surveillance only."""
        alarm = Alarm(kind, detail)
        with self._journal.transaction() as transaction:
            for event in (record, alarm):
                if event is not None:
                    transaction.append(
                        event.KIND,
                        event.payload(),
                        shoe_id=shoe.shoe_id,
                        round_no=round_no,
                        device_serial=self._device_serial,
                    )
        log.warning("surveillance alarm", kind=str(kind), detail=detail, shoe_id=shoe.shoe_id)
        for listener in self._alarm_listeners:
            listener(alarm)

    def _recover(self, shoes: list[JournaledShoe]) -> None:
        """Stand where the journal leaves the table: the last shoe's order, an open shoe's runs."""
        if shoes and not shoes[-1].ended:
            *finished, open_shoe = shoes
        else:
            finished, open_shoe = shoes, None
        if finished:
            self._previous_order = _tagged_order(finished[-1].cards)
        if open_shoe is None:
            return
        shoe = self._start(open_shoe.shoe_id, open_shoe.decks)
        for seen in open_shoe.cards:
            shoe.cards.append(seen)
            shoe.detector.take(seen)  # a run it reports now had its alarm before the restart
        shoe.out = open_shoe.still_out()
        alarmed = self._journal.records(shoe_id=open_shoe.shoe_id, kinds=[Advantage.KIND])
        shoe.recovered = _Recovered(
            frozenset(Bet(record.payload["bet"]) for record in alarmed), tuple(shoe.out)
        )


def _tagged_order(cards: Iterable[SeenCard]) -> list[str]:
    return [seen.tagged_id for seen in cards if seen.tagged_id is not None]
