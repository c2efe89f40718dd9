"""shoectl demo --json: the table's events as one JSON object per line.

The stream follows the table at the grain a reader checks it: a shoe's start,
each burn (its cards together), each round (in `shoectl rules play --json`'s
shape, round_json, so a dealt round compares field by field with the rules
engine playing the same cards), irregularities, holds, alarms, and the
shoe's reconciliation. Round, burn and result lines hold no time and no path,
so a given --seed prints them the same on every run.

Like the table display, it reads events in their journal form (kind and
payload), so a resumed shoe's journal records can bring it up to date
(catch_up) before the live events continue.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cardshoe.controller.journal.records import Record
from cardshoe.controller.procedure.facts import WATCHER_ALARMS, Alarm, TableEvent
from cardshoe.controller.rules.cards import ShoeComposition, parse_card
from cardshoe.controller.rules.games import Game
from cardshoe.controller.rules.hands import Hand
from cardshoe.controller.rules.rounds import DealtCard, Outcome
from cardshoe.controller.scoreboard.round_json import round_json

JsonLine = dict[str, Any]
Payload = Mapping[str, Any]

PASSED_THROUGH: dict[str, str] = {
    "shoe.shuffled": "shuffled",
    "shoe.last_round": "last_round",
    "irregularity": "irregularity",
    "card.corrected": "correction",
    "hold.started": "hold",
    "hold.ended": "hold_ended",
    "alarm": "alarm",
    "round.cards_returned": "cards_returned",
}
"""Event kind -> the name its payload is printed under ("round_no" becomes "round")."""
OUTCOME_FIELDS = (
    "player_total",
    "banker_total",
    "natural",
    "player_pair",
    "banker_pair",
    "sevens",
)
IRREGULAR_BURN = "irregular"


@dataclass
class _RoundCards:
    number: int
    demo: bool
    dealt: list[DealtCard] = field(default_factory=list)
    set_aside: list[str | None] = field(default_factory=list)


@dataclass
class _Burn:
    reason: str
    cards: list[str | None] = field(default_factory=list)


class DemoEventStream:
    """An observer turning table events into the demo's JSON lines, handed to `write`.

    start_fields are added to the shoe_started line (the table id, the seed...).
    """

    def __init__(
        self,
        game: Game,
        write: Callable[[JsonLine], None],
        start_fields: Mapping[str, Any] | None = None,
    ) -> None:
        self._game = game
        self._write = write
        self._start_fields = dict(start_fields or {})
        self._round: _RoundCards | None = None
        self._burn: _Burn | None = None
        self._catching_up = False

    def notify(self, event: TableEvent) -> None:
        self.take(event.KIND, event.payload())

    def catch_up(self, records: Iterable[Record]) -> None:
        """Take journal records of events already printed (by an earlier run), printing none."""
        self._catching_up = True
        try:
            for record in records:
                self.take(record.kind, record.payload)
        finally:
            self._catching_up = False

    def take(self, kind: str, payload: Payload) -> None:
        """One table event in journal form; kinds the stream does not print are passed over.

        So are surveillance's alarms, which a journal holds but the table never shows.
        """
        if kind == Alarm.KIND and payload["kind"] in WATCHER_ALARMS:
            return
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, payload)
        elif kind in PASSED_THROUGH:
            self._emit(PASSED_THROUGH[kind], _renamed(payload))

    def _emit(self, name: str, fields: Payload) -> None:
        if not self._catching_up:
            self._write({"event": name, **fields})

    def _shoe_started(self, payload: Payload) -> None:
        cards_loaded = {"cards_loaded": ShoeComposition(payload["decks"]).size}
        self._emit("shoe_started", self._start_fields | dict(payload) | cards_loaded)

    def _burned(self, payload: Payload) -> None:
        reason = payload["reason"]
        if reason == IRREGULAR_BURN:
            self._emit("burn", {"reason": reason, "cards": [payload["card"]]})
            return
        if self._burn is None or self._burn.reason != reason:
            self._flush_burn()
            self._burn = _Burn(reason)
        self._burn.cards.append(payload["card"])
        if payload["burn_remaining"] == 0:
            self._flush_burn()

    def _flush_burn(self) -> None:
        if self._burn is not None:
            self._emit("burn", {"reason": self._burn.reason, "cards": self._burn.cards})
            self._burn = None

    def _round_opened(self, payload: Payload) -> None:
        self._round = _RoundCards(payload["round_no"], payload["demo"])

    def _card_assigned(self, payload: Payload) -> None:
        if self._round is not None:
            card = DealtCard(parse_card(payload["card"]), Hand(payload["to"]))
            self._round.dealt.append(card)

    def _card_set_aside(self, payload: Payload) -> None:
        if self._round is not None:
            self._round.set_aside.append(payload["card"])

    def _round_result(self, payload: Payload) -> None:
        cards = self._cards_of(payload["round_no"])
        outcome = Outcome(*(payload[name] for name in OUTCOME_FIELDS))
        player = [parse_card(card) for card in payload["player"]]
        banker = [parse_card(card) for card in payload["banker"]]
        fields = round_json(self._game, cards.number, cards.dealt, player, banker, outcome, None)
        self._emit_round(fields, payload["demo"], cards, payload["settlement"])

    def _round_void(self, payload: Payload) -> None:
        cards = self._cards_of(payload["round_no"])
        placed = self._game.new_round()
        player = [*placed.player, *(card.card for card in cards.dealt if card.to is Hand.PLAYER)]
        banker = [card.card for card in cards.dealt if card.to is Hand.BANKER]
        fields = round_json(
            self._game, cards.number, cards.dealt, player, banker, None, payload["reason"]
        )
        self._emit_round(fields, cards.demo, cards, None)

    def _cards_of(self, number: int) -> _RoundCards:
        if self._round is None or self._round.number != number:
            return _RoundCards(number, demo=False)
        return self._round

    def _emit_round(
        self, fields: JsonLine, demo: bool, cards: _RoundCards, settlement: Payload | None
    ) -> None:
        extra = {"demo": demo, "set_aside": cards.set_aside, "settlement": settlement}
        self._emit("round", fields | extra)
        self._round = None

    def _shoe_ended(self, payload: Payload) -> None:
        self._flush_burn()
        self._emit("shoe_ended", payload)


def _renamed(payload: Payload) -> JsonLine:
    return {("round" if key == "round_no" else key): value for key, value in payload.items()}


_HANDLERS: dict[str, Callable[[DemoEventStream, Payload], None]] = {
    "shoe.started": DemoEventStream._shoe_started,
    "card.burned": DemoEventStream._burned,
    "round.opened": DemoEventStream._round_opened,
    "card.assigned": DemoEventStream._card_assigned,
    "card.set_aside": DemoEventStream._card_set_aside,
    "round.result": DemoEventStream._round_result,
    "round.void": DemoEventStream._round_void,
    "shoe.ended": DemoEventStream._shoe_ended,
}
"""Event kinds the stream gathers or reshapes; PASSED_THROUGH kinds print as they are."""
