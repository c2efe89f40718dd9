"""shoectl demo --json: the table's events as one JSON object per line.

The stream follows the table at the grain a reader checks it: a shoe's start,
each burn (its cards together), each round (in `shoectl rules play --json`'s
shape, round_json, so a dealt round compares field by field with the rules
engine playing the same cards), irregularities, holds, alarms, and the
shoe's reconciliation. Round, burn and result lines hold no time and no path,
so a given --seed prints them the same on every run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cardshoe.controller.cards import Card, ShoeComposition
from cardshoe.controller.games import Game
from cardshoe.controller.hands import Hand
from cardshoe.controller.observers import (
    Alarm,
    Burned,
    BurnReason,
    CardAssigned,
    CardSetAside,
    CardsReturned,
    HoldEnded,
    HoldStarted,
    IrregularityFound,
    LastRoundSet,
    RoundOpened,
    RoundResult,
    RoundVoided,
    ShoeEnded,
    ShoeShuffled,
    ShoeStarted,
    TableEvent,
)
from cardshoe.controller.round_json import round_json
from cardshoe.controller.rounds import DealtCard, Outcome

JsonLine = dict[str, Any]

PASSED_THROUGH: dict[type[TableEvent], str] = {
    ShoeShuffled: "shuffled",
    LastRoundSet: "last_round",
    IrregularityFound: "irregularity",
    HoldStarted: "hold",
    HoldEnded: "hold_ended",
    Alarm: "alarm",
    CardsReturned: "cards_returned",
}
"""Events printed as their journal payload under this name ("round_no" becomes "round")."""


@dataclass
class _RoundCards:
    number: int
    demo: bool
    dealt: list[DealtCard] = field(default_factory=list)
    set_aside: list[Card | None] = field(default_factory=list)


@dataclass
class _Burn:
    reason: BurnReason
    cards: list[Card | None] = field(default_factory=list)


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

    def notify(self, event: TableEvent) -> None:
        match event:
            case ShoeStarted():
                cards_loaded = {"cards_loaded": ShoeComposition(event.decks).size}
                self._emit("shoe_started", self._start_fields | _payload(event) | cards_loaded)
            case Burned():
                self._take_burn(event)
            case RoundOpened():
                self._round = _RoundCards(event.round_no, event.demo)
            case CardAssigned() if self._round is not None:
                self._round.dealt.append(DealtCard(event.card, event.to))
            case CardSetAside() if self._round is not None:
                self._round.set_aside.append(event.card)
            case RoundResult():
                self._round_result(event)
            case RoundVoided():
                self._round_void(event)
            case ShoeEnded():
                self._flush_burn()
                self._emit("shoe_ended", _payload(event))
            case _ if type(event) in PASSED_THROUGH:
                self._emit(PASSED_THROUGH[type(event)], _payload(event))

    def _emit(self, name: str, fields: Mapping[str, Any]) -> None:
        self._write({"event": name, **fields})

    def _take_burn(self, event: Burned) -> None:
        if event.reason is BurnReason.IRREGULAR:
            self._emit("burn", {"reason": event.reason.value, "cards": [_text(event.card)]})
            return
        if self._burn is None or self._burn.reason is not event.reason:
            self._flush_burn()
            self._burn = _Burn(event.reason)
        self._burn.cards.append(event.card)
        if event.burn_remaining == 0:
            self._flush_burn()

    def _flush_burn(self) -> None:
        if self._burn is not None:
            cards = [_text(card) for card in self._burn.cards]
            self._emit("burn", {"reason": self._burn.reason.value, "cards": cards})
            self._burn = None

    def _cards_of(self, number: int) -> _RoundCards:
        if self._round is None or self._round.number != number:
            return _RoundCards(number, demo=False)
        return self._round

    def _round_result(self, event: RoundResult) -> None:
        cards = self._cards_of(event.round_no)
        outcome = Outcome(
            event.player_total,
            event.banker_total,
            event.natural,
            event.player_pair,
            event.banker_pair,
            event.sevens,
        )
        fields = round_json(event.round_no, cards.dealt, event.player, event.banker, outcome, None)
        self._emit_round(fields, event.demo, cards, _payload(event)["settlement"])

    def _round_void(self, event: RoundVoided) -> None:
        cards = self._cards_of(event.round_no)
        placed = self._game.new_round()
        player = [*placed.player, *(card.card for card in cards.dealt if card.to is Hand.PLAYER)]
        banker = [card.card for card in cards.dealt if card.to is Hand.BANKER]
        fields = round_json(event.round_no, cards.dealt, player, banker, None, event.reason)
        self._emit_round(fields, cards.demo, cards, None)

    def _emit_round(
        self,
        fields: JsonLine,
        demo: bool,
        cards: _RoundCards,
        settlement: Mapping[str, str] | None,
    ) -> None:
        self._emit(
            "round",
            fields
            | {
                "demo": demo,
                "set_aside": [_text(card) for card in cards.set_aside],
                "settlement": settlement,
            },
        )
        self._round = None


def _text(card: Card | None) -> str | None:
    return None if card is None else str(card)


def _payload(event: TableEvent) -> JsonLine:
    payload = event.payload()
    if "round_no" in payload:
        payload["round"] = payload.pop("round_no")
    return payload
