"""What the table procedure tells the world, and the observers that listen.

Every fact the procedure establishes (a burn, a card given to a hand, a
result, a void, a hold, an alarm) is one TableEvent. The same event is the
journal record (its KIND and payload()) and, once that record has committed,
the notification to observers: the CLI, the logs and the displays see exactly
what the journal holds, never more and never earlier.

Observers never affect the procedure: an observer that raises is logged and
skipped, and the table goes on.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from enum import Enum, StrEnum
from fractions import Fraction
from typing import Any, ClassVar, Protocol

from cardshoe.controller.rules.cards import Card
from cardshoe.controller.rules.hands import Hand

_LOGGER = logging.getLogger(__name__)


class AlarmKind(StrEnum):
    """Why the pit must look at the table now."""

    TAMPER = "tamper"
    """The same physical card twice, or more copies of a card than the decks hold."""
    FOREIGN_CARD = "foreign_card"
    """A card from another deck set: how card switching shows on a tagged shoe."""
    PROCEDURE_VIOLATION = "procedure_violation"
    """An input the procedure does not allow in its current state."""
    RECONCILIATION = "reconciliation"
    """loaded != dealt + burned - returned + remaining at the end of a shoe."""
    CARD_COUNT = "card_count"
    """The automatic machine counted other cards than expected in a shuffle or return."""
    DEVICE_FAULT = "device_fault"
    SEQUENCE_GAP = "sequence_gap"
    """Device events were lost: cards may be missing from the journal."""
    FIRMWARE = "firmware"
    """The device runs a firmware image whose hash is not approved, or failed its self-test."""
    SOFTWARE_FAULT = "software_fault"
    """The procedure itself raised; the table stops in the fault state."""
    SHOE_ABANDONED = "shoe_abandoned"
    CUT_CARD = "cut_card"
    """The cut card came out further from its configured depth than the tolerance."""
    STORAGE = "storage"
    """The journal's disk is short of space, or its files failed or were tampered with."""
    JOURNAL = "journal"
    """Replaying the journal's inputs does not give the facts it holds: altered, or the
    procedure software changed mid-shoe."""
    ADVANTAGE = "advantage"
    """Surveillance: a bet of the remaining shoe favours the player (a card counter's edge)."""
    STACKED_SHOE = "stacked_shoe"
    """Surveillance: a run of cards a fair shuffle would almost never deal."""


WATCHER_ALARMS = frozenset({AlarmKind.ADVANTAGE, AlarmKind.STACKED_SHOE})
"""Raised by game protection from facts already committed, never by the procedure, so
replaying the procedure's inputs does not give them (recovery passes over them)."""


class BurnReason(StrEnum):
    START_OF_SHOE = "start_of_shoe"
    """Macau Art. 2.1: the burn after the cut, by the table's burn policy."""
    START_OF_ROUND = "start_of_round"
    """Macau Art. 8: the house's optional burn before each round."""
    DEALER_RELIEF = "dealer_relief"
    """The house's burn when a dealer relieves another (game.relief_burn), before the deal."""
    IRREGULAR = "irregular"
    """A card that no hand and no burn was due to receive."""


class ShoeEnding(StrEnum):
    """Why the house ends the shoe after the round under way (Macau Art. 3.2)."""

    COMMAND = "command"
    """A person gave end-shoe."""
    MACHINE_ROUNDS = "machine_rounds"
    """The automatic machine's shoe dealt shoe.machine_rounds rounds."""
    MACHINE_END_AT = "machine_end_at"
    """A time of day of shoe.machine_end_at came while the machine's shoe was open."""
    DEALER_RELIEF = "dealer_relief"
    """A dealer relieved another at the machine, under shoe.machine_end_at_relief."""


class TableEvent:
    """One fact of the procedure: a journal record and an observer notification."""

    KIND: ClassVar[str]

    def payload(self) -> dict[str, Any]:
        """The record payload: the fields as plain JSON values."""
        return {name: _plain(getattr(self, name)) for name in _field_names(type(self))}


def _field_names(cls: type) -> tuple[str, ...]:
    """A fact class's field names, read once: every card's facts are journaled."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(item.name for item in fields(cls))
    return names


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}
_AS_IS = frozenset({str, int, float, bool, type(None)})


def _plain(value: Any) -> Any:
    """Cards and hands as their text, fractions as "n/d", containers recursively."""
    if type(value) in _AS_IS:
        return value  # most fields: no isinstance chain, whose Mapping check is an ABC's
    if isinstance(value, Card):
        return str(value)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Fraction):
        return str(value)
    if isinstance(value, Mapping):
        return {str(_plain(key)): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


@dataclass(frozen=True)
class ShoeStarted(TableEvent):
    KIND: ClassVar[str] = "shoe.started"
    shoe_id: str
    game: str
    decks: int
    device_kind: str
    fingerprint: str
    """The approved options the shoe runs under (config.TableConfig.fingerprint)."""
    options: Mapping[str, Any]
    """What the fingerprint hashes: every Art. 18 option, readable."""
    deck_set: str | None
    """The loaded deck set's serial as printed (0x00BC614E), or None until the first tagged
    card shows it."""


@dataclass(frozen=True)
class DeckSetAdopted(TableEvent):
    """No deck set was declared: the first tagged card's set is taken as the loaded one."""

    KIND: ClassVar[str] = "shoe.deck_set"
    deck_set: str
    """As printed: 0x00BC614E."""


@dataclass(frozen=True)
class ShoeShuffled(TableEvent):
    """The automatic machine loaded and shuffled the cards it counted."""

    KIND: ClassVar[str] = "shoe.shuffled"
    card_count: int


@dataclass(frozen=True)
class Burned(TableEvent):
    KIND: ClassVar[str] = "card.burned"
    card: Card | None
    """None when the card could not be read."""
    physical_id: str | None
    reason: BurnReason
    burn_remaining: int | None
    """Cards still to burn in this burn, None while the first-card burn is not yet known."""


@dataclass(frozen=True)
class ReliefBurnDue(TableEvent):
    """A dealer relieved another in the shoe: the house burns before the next deal."""

    KIND: ClassVar[str] = "shoe.relief_burn_due"
    dealer: str | None
    relieves: str
    cards: int
    before_round: int
    """The round whose deal the burn comes before, after its no more bets."""


@dataclass(frozen=True)
class ReliefBurnDropped(TableEvent):
    """The shoe ended with a relief burn still due: no round is left to burn before."""

    KIND: ClassVar[str] = "shoe.relief_burn_dropped"
    cards: int


@dataclass(frozen=True)
class LastRoundSet(TableEvent):
    """The shoe ends after this round: the cut card showed (Art. 3.1) or the house ends it."""

    KIND: ClassVar[str] = "shoe.last_round"
    last_round: int
    cause: str
    """"cut_card" or "house"."""
    reason: ShoeEnding | None = None
    """Why the house ends it; None for the cut card."""


@dataclass(frozen=True)
class RoundOpened(TableEvent):
    KIND: ClassVar[str] = "round.opened"
    round_no: int
    demo: bool
    """A demonstration round (Macau Art. 2.2): dealt, never settled."""


@dataclass(frozen=True)
class BetsClosed(TableEvent):
    KIND: ClassVar[str] = "round.bets_closed"
    round_no: int
    by: str
    """"dealer_button" or "command"."""


@dataclass(frozen=True)
class CardAssigned(TableEvent):
    KIND: ClassVar[str] = "card.assigned"
    round_no: int
    card: Card
    physical_id: str
    to: Hand
    next_recipient: Hand | None
    """Who gets the next card; None once the round is complete."""


class CorrectionMethod(StrEnum):
    """How a card due to a hand that could not be read was put right (Macau Art. 10)."""

    REREAD = "reread"
    """The dealer passed the same card through the reader again and it read."""
    ENTERED = "entered"
    """A supervisor read the card and entered it (enter-card)."""


ENTERED_CARD_ID = "entered"
"""The physical id of a card a supervisor entered: the reader never read its tag."""


@dataclass(frozen=True)
class CardCorrected(TableEvent):
    """An irregular card put right at once (Macau Art. 10): it went to the hand it was due."""

    KIND: ClassVar[str] = "card.corrected"
    round_no: int
    irregularity: str
    """What was wrong: misread_card."""
    correction: CorrectionMethod
    card: Card
    physical_id: str
    """The card's tag as re-read, or "entered" for a card a supervisor entered."""
    to: Hand
    by: Mapping[str, Any] | None
    """Who entered the card (uid, user, role), as the control socket knew them; None for a
    re-read, which the dealer makes at the device's reader."""


@dataclass(frozen=True)
class FirstCardCorrected(TableEvent):
    """The start-of-shoe burn's first card, unread, is known now: under the first-card burn
    its face value fixes how many cards the burn takes (Macau Art. 2.1)."""

    KIND: ClassVar[str] = "shoe.first_card_corrected"
    correction: CorrectionMethod
    card: Card
    physical_id: str
    """The card's tag as re-read, or "entered" for a card a supervisor entered."""
    burn_total: int
    """Cards the start-of-shoe burn takes, the first card included."""
    by: Mapping[str, Any] | None
    """Who entered the card; None for a re-read."""


@dataclass(frozen=True)
class CardSetAside(TableEvent):
    """A card of a round that no hand may receive (its round is void): dealt, not assigned."""

    KIND: ClassVar[str] = "card.set_aside"
    round_no: int
    card: Card | None
    physical_id: str | None
    reason: str


@dataclass(frozen=True)
class RoundResult(TableEvent):
    KIND: ClassVar[str] = "round.result"
    round_no: int
    demo: bool
    player: tuple[Card, ...]
    banker: tuple[Card, ...]
    player_total: int
    banker_total: int
    winner: str
    natural: bool
    player_pair: bool | None
    """None in a game with no pair bet (7 Up), as banker_pair."""
    banker_pair: bool | None
    sevens: int | None
    """Sevens among the round's cards; None in a game without a Super 7's bet."""
    settlement: Mapping[str, Fraction] | None
    """Net return per unit staked on each bet the paytable offers; None for a demo round."""
    tie_bets: str | None = None
    """On a tie, the table's Art. 11 option for the Banker and Player bets (rules/ties.py)."""


@dataclass(frozen=True)
class BetsCarried(TableEvent):
    """After a tie, the Banker and Player bets stay on the layout into the next round
    (Macau Art. 11(2) stand, or 11(3) change)."""

    KIND: ClassVar[str] = "round.bets_carried"
    round_no: int
    into_round: int
    option: str


class CarriedBetsEnd(StrEnum):
    """Why bets carried from a tie go back to the players instead of into a deciding round."""

    NO_ROUND_FOLLOWS = "no_round_follows"
    """The tie was the shoe's last round (the cut card, the house or an empty shoe): Art. 3.1
    deals no round past it, so nothing can decide the bets."""
    ROUND_VOID = "round_void"
    """The round they were carried into was void: a void returns every stake of the round."""


@dataclass(frozen=True)
class CarriedBetsReturned(TableEvent):
    """Bets a tie left on the layout (Macau Art. 11(2) or 11(3)) are returned, undecided."""

    KIND: ClassVar[str] = "round.carried_bets_returned"
    round_no: int
    """The tied round the bets were carried from."""
    reason: CarriedBetsEnd
    voided_round: int | None = None
    """The round they were carried into, when it was void."""


@dataclass(frozen=True)
class RoundVoided(TableEvent):
    """The round settles nothing: every stake is returned; earlier results stand."""

    KIND: ClassVar[str] = "round.void"
    round_no: int
    reason: str
    cards: tuple[Card | None, ...]


@dataclass(frozen=True)
class IrregularityFound(TableEvent):
    KIND: ClassVar[str] = "irregularity"
    code: str
    round_no: int | None
    card: Card | None
    physical_id: str | None
    consequence: str
    detail: str


@dataclass(frozen=True)
class HoldStarted(TableEvent):
    KIND: ClassVar[str] = "hold.started"
    reason: str
    held_state: str
    """Where the procedure stood; it resumes exactly there."""


@dataclass(frozen=True)
class HoldEnded(TableEvent):
    KIND: ClassVar[str] = "hold.ended"
    reason: str
    holds_left: tuple[str, ...]


@dataclass(frozen=True)
class Alarm(TableEvent):
    KIND: ClassVar[str] = "alarm"
    kind: AlarmKind
    detail: str


@dataclass(frozen=True)
class RefusedCommand(TableEvent):
    """An operator command the procedure does not allow now: journaled and counted, but no
    alarm, since a command given too early is not a reason for the pit to look."""

    KIND: ClassVar[str] = "command.refused"
    command: str
    """As the operator types it: no-more-bets."""
    reason: str


@dataclass(frozen=True)
class CardsReturned(TableEvent):
    KIND: ClassVar[str] = "round.cards_returned"
    expected: int
    counted: int


@dataclass(frozen=True)
class ShoeEnded(TableEvent):
    """The shoe's card accounting: loaded + intruders = dealt + burned - returned + remaining."""

    KIND: ClassVar[str] = "shoe.ended"
    shoe_id: str
    rounds: int
    loaded: int
    dealt: int
    burned: int
    returned: int
    intruders: int
    """Cards found that were never loaded (foreign, duplicate, excess copies)."""
    remaining: int | None
    """The device's count of cards still in it; None when it cannot tell."""
    device_cards_dealt: int | None
    reconciled: bool
    """Every count that could be compared agreed; false also for an abandoned shoe."""


@dataclass(frozen=True)
class TableIdle(TableEvent):
    """No shoe open and no hold active: recovery replays from the latest of these."""

    KIND: ClassVar[str] = "table.idle"


class Observer(Protocol):
    """Anything that wants to hear what the table does."""

    def notify(self, event: TableEvent) -> None: ...


class ObserverHub:
    """Delivers events to every observer; a failing observer is logged, never propagated."""

    def __init__(self, observers: Iterable[Observer] = ()) -> None:
        self._observers = list(observers)

    def subscribe(self, observer: Observer) -> None:
        self._observers.append(observer)

    def publish(self, events: Iterable[TableEvent]) -> None:
        for event in events:
            for observer in self._observers:
                try:
                    observer.notify(event)
                except Exception:
                    _LOGGER.exception(
                        "observer %r failed on %s; the table goes on", observer, event.KIND
                    )
