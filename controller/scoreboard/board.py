"""What a table display shows, kept up to date from the table's events.

The board takes the table's events in their journal form, a kind and a
payload of plain JSON values (observers.TableEvent.KIND and .payload()), so
one board follows a TableSession in the same process, a service's event
stream over a socket, or a journal read back record by record: kinds it does
not show (device inputs, commands) are passed over. The board itself is
plain data: to_json() and from_json() carry it whole, as a snapshot.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from cardshoe.controller import record_kinds
from cardshoe.controller.procedure.facts import WATCHER_ALARMS
from cardshoe.controller.rules.cards import ShoeComposition
from cardshoe.controller.rules.games import get_game
from cardshoe.controller.rules.hands import Winner
from cardshoe.controller.rules.rounds import RoundInProgress
from cardshoe.controller.scoreboard.roads import RoadResult
from cardshoe.controller.scoreboard.stats import (
    NO_ROUNDS,
    ShoeStats,
    shoe_stats,
    super_seven_counts,
)

RESULTS_KEPT = 200
"""The board lists the latest this many rounds. A manual shoe deals fewer (12 decks at four
cards a round: 156); an automatic machine's shoe may deal without end (Art. 7.2), so its
older rounds leave the list for `earlier`'s counts and the board stays the same size."""
RECENT_ALARMS = 6
RECENT_IRREGULARITIES = 6
BURN = "burn"
"""next_card while a burn is under way; otherwise a hand's name or None."""


@dataclass
class ResultRow:
    """One finished round as the results list shows it."""

    round: int
    demo: bool
    player: list[str]
    banker: list[str]
    player_total: int | None = None
    banker_total: int | None = None
    winner: str | None = None
    """"player", "banker" or "tie"; None for a void round."""
    natural: bool = False
    player_pair: bool = False
    banker_pair: bool = False
    sevens: int = 0
    """7s among the round's cards, the 7 Up mandatory seven included."""
    void: str | None = None
    """The reason code of a void round."""

    def road_result(self) -> RoadResult | None:
        """What the scoreboards show of it; None for a void or a demonstration round, which
        settle no bet and appear on no road."""
        if self.winner is None or self.demo:
            return None
        return RoadResult(
            Winner(self.winner), self.player_pair, self.banker_pair, self.natural, self.sevens
        )


@dataclass
class EarlierRounds:
    """The rounds a long shoe's board no longer lists, as the counts the board shows."""

    rows: int = 0
    settled: int = 0
    """Rounds that were on the roads: neither void nor demonstration rounds."""
    voids: int = 0
    stats: ShoeStats = NO_ROUNDS

    def count(self, row: ResultRow, super_sevens: frozenset[int]) -> None:
        self.rows += 1
        self.voids += row.void is not None
        road = row.road_result()
        if road is not None:
            self.settled += 1
            self.stats = self.stats.plus(shoe_stats([road], super_sevens))

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> EarlierRounds:
        return cls(**{**data, "stats": ShoeStats(**data["stats"])})


@dataclass
class TableBoard:
    """The table as a display shows it: the shoe, the round on the layout, results, alarms."""

    table_id: str | None = None
    shoe_id: str | None = None
    game: str | None = None
    decks: int | None = None
    device_kind: str | None = None
    fingerprint: str | None = None
    phase: str = "idle"
    """What the table is doing: idle, burning, betting, dealing, round over, shoe ended."""
    loaded: int = 0
    dealt: int = 0
    burned: int = 0
    returned: int = 0
    burn_remaining: int | None = None
    last_round: int | None = None
    last_round_cause: str | None = None
    """"cut_card" once the cut card has shown, or "house"."""
    round_no: int | None = None
    round_demo: bool = False
    player: list[str] = field(default_factory=list)
    banker: list[str] = field(default_factory=list)
    set_aside: list[str | None] = field(default_factory=list)
    next_card: str | None = None
    """"player", "banker", BURN, or None when no card may leave."""
    results: list[ResultRow] = field(default_factory=list)
    """The latest RESULTS_KEPT rounds, oldest first."""
    earlier: EarlierRounds = field(default_factory=EarlierRounds)
    """The shoe's rounds before those."""
    holds: list[str] = field(default_factory=list)
    alarms: list[dict[str, str]] = field(default_factory=list)
    """The latest alarms, oldest first: {"kind", "detail", "round"} (the round on the layout
    when it came, or None)."""
    irregularities: list[dict[str, Any]] = field(default_factory=list)
    """The latest irregularities, oldest first: {"code", "round", "consequence"}."""
    ended: dict[str, Any] | None = None
    """The shoe.ended payload once the shoe has ended: its reconciliation."""

    @property
    def in_shoe(self) -> int:
        """Cards still in the device, by the table's own count."""
        return self.loaded - self.dealt - self.burned + self.returned

    def road_results(self) -> list[RoadResult]:
        """The listed rounds the roads show (the shoe's latest, RESULTS_KEPT)."""
        return [road for row in self.results if (road := row.road_result()) is not None]

    @property
    def rounds(self) -> int:
        """Every round of the shoe that ended, listed or earlier, void ones included."""
        return self.earlier.rows + len(self.results)

    @property
    def voids(self) -> int:
        return self.earlier.voids + sum(row.void is not None for row in self.results)

    def settled_rounds(self, listed: list[RoadResult]) -> int:
        """The rounds on the roads over the whole shoe, given the listed ones."""
        return self.earlier.settled + len(listed)

    def stats(self, listed: list[RoadResult]) -> ShoeStats:
        """The whole shoe's statistics, given the listed rounds the roads show."""
        return self.earlier.stats.plus(shoe_stats(listed, super_seven_counts(self.game)))

    # --- feeding ----------------------------------------------------------------------

    def apply(self, kind: str, payload: Mapping[str, Any]) -> None:
        """Take one table event in its journal form; kinds the board does not show are skipped."""
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, payload)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TableBoard:
        known = {item.name for item in fields(cls)}
        values = {key: value for key, value in data.items() if key in known}
        values["results"] = [ResultRow(**row) for row in values.get("results", [])]
        if "earlier" in values:
            values["earlier"] = EarlierRounds.from_json(values["earlier"])
        return cls(**values)

    # --- one handler per event kind ---------------------------------------------------

    def _shoe_started(self, payload: Mapping[str, Any]) -> None:
        manual = payload["device_kind"] == "shoe"
        self.shoe_id, self.game, self.decks = payload["shoe_id"], payload["game"], payload["decks"]
        self.device_kind, self.fingerprint = payload["device_kind"], payload["fingerprint"]
        self.loaded = ShoeComposition(self.decks).size
        self.dealt = self.burned = self.returned = 0
        self.burn_remaining = None
        self.last_round = self.last_round_cause = None
        self._clear_round(None)
        self.results, self.earlier, self.ended = [], EarlierRounds(), None
        self.phase = "burning" if manual else "shuffling"
        self.next_card = BURN if manual else None

    def _shuffled(self, payload: Mapping[str, Any]) -> None:
        self.loaded = payload["card_count"]
        self.phase = "shuffled"

    def _burned(self, payload: Mapping[str, Any]) -> None:
        self.burned += 1
        if payload["reason"] == "irregular":
            return
        self.burn_remaining = payload["burn_remaining"]
        if self.burn_remaining != 0:
            self.next_card = BURN
        elif payload["reason"] == "start_of_round":
            self.next_card = self._first_recipient()
        else:
            self.next_card = None

    def _last_round(self, payload: Mapping[str, Any]) -> None:
        self.last_round, self.last_round_cause = payload["last_round"], payload["cause"]

    def _round_opened(self, payload: Mapping[str, Any]) -> None:
        self._clear_round(payload["round_no"])
        self.round_demo = payload["demo"]
        empty = self._new_round()
        self.player = [] if empty is None else [str(card) for card in empty.player]
        self.phase = "betting"

    def _bets_closed(self, payload: Mapping[str, Any]) -> None:
        self.phase = "dealing"
        self.next_card = self._first_recipient()

    def _card_assigned(self, payload: Mapping[str, Any]) -> None:
        self.dealt += 1
        hand = self.player if payload["to"] == "player" else self.banker
        hand.append(payload["card"])
        self.next_card = payload["next_recipient"]

    def _card_set_aside(self, payload: Mapping[str, Any]) -> None:
        self.dealt += 1
        self.set_aside.append(payload["card"])
        self.next_card = None

    def _round_result(self, payload: Mapping[str, Any]) -> None:
        self.player, self.banker = list(payload["player"]), list(payload["banker"])
        self._list(
            ResultRow(
                round=payload["round_no"],
                demo=payload["demo"],
                player=list(self.player),
                banker=list(self.banker),
                player_total=payload["player_total"],
                banker_total=payload["banker_total"],
                winner=payload["winner"],
                natural=payload["natural"],
                # A game without the pair bets (7 Up) records null: no pair to show.
                player_pair=bool(payload["player_pair"]),
                banker_pair=bool(payload["banker_pair"]),
                sevens=payload["sevens"],
            )
        )
        self.phase, self.next_card = "round over", None

    def _round_void(self, payload: Mapping[str, Any]) -> None:
        number = payload["round_no"]
        settled = [row for row in self.results if row.round == number]
        if settled:
            # A settled round voided within its correction window: its result is cancelled,
            # it leaves the roads; the round open now goes on.
            (row,) = settled
            void_row = ResultRow(number, row.demo, row.player, row.banker, void=payload["reason"])
            self.results[self.results.index(row)] = void_row
            return
        self._list(
            ResultRow(
                round=number,
                demo=self.round_demo,
                player=list(self.player),
                banker=list(self.banker),
                void=payload["reason"],
            )
        )
        self.phase, self.next_card = "round void", None

    def _cards_returned(self, payload: Mapping[str, Any]) -> None:
        self.returned += payload["expected"]

    def _hold_started(self, payload: Mapping[str, Any]) -> None:
        if payload["reason"] not in self.holds:
            self.holds.append(payload["reason"])

    def _hold_ended(self, payload: Mapping[str, Any]) -> None:
        self.holds = list(payload["holds_left"])

    def _alarm(self, payload: Mapping[str, Any]) -> None:
        if payload["kind"] in WATCHER_ALARMS:
            return  # surveillance's, read from the journal: never on a display the players see
        alarm = {"kind": payload["kind"], "detail": payload["detail"], "round": self.round_no}
        self.alarms = [*self.alarms, alarm][-RECENT_ALARMS:]

    def _irregularity(self, payload: Mapping[str, Any]) -> None:
        entry = {
            "code": payload["code"],
            "round": payload["round_no"],
            "consequence": payload["consequence"],
        }
        self.irregularities = [*self.irregularities, entry][-RECENT_IRREGULARITIES:]

    def _shoe_ended(self, payload: Mapping[str, Any]) -> None:
        self.ended = dict(payload)
        self.loaded, self.dealt = payload["loaded"], payload["dealt"]
        self.burned, self.returned = payload["burned"], payload["returned"]
        self.phase, self.next_card = "shoe ended", None

    # --- helpers ----------------------------------------------------------------------

    def _list(self, row: ResultRow) -> None:
        """List a finished round; the oldest listed one goes to `earlier` past RESULTS_KEPT."""
        self.results.append(row)
        if len(self.results) > RESULTS_KEPT:
            self.earlier.count(self.results.pop(0), super_seven_counts(self.game))

    def _clear_round(self, round_no: int | None) -> None:
        self.round_no, self.round_demo = round_no, False
        self.player, self.banker, self.set_aside = [], [], []
        self.next_card = None

    def _new_round(self) -> RoundInProgress | None:
        """An empty round of the board's game (the rules engine knows who is dealt first);
        None while the board has not seen which game the shoe deals."""
        return None if self.game is None else get_game(self.game).new_round()

    def _first_recipient(self) -> str | None:
        empty = self._new_round()
        first = None if empty is None else empty.next_recipient()
        return None if first is None else first.value


_HANDLERS: dict[str, Callable[[TableBoard, Mapping[str, Any]], None]] = {
    record_kinds.SHOE_STARTED: TableBoard._shoe_started,
    record_kinds.SHOE_SHUFFLED: TableBoard._shuffled,
    record_kinds.CARD_BURNED: TableBoard._burned,
    record_kinds.SHOE_LAST_ROUND: TableBoard._last_round,
    record_kinds.ROUND_OPENED: TableBoard._round_opened,
    record_kinds.ROUND_BETS_CLOSED: TableBoard._bets_closed,
    record_kinds.CARD_ASSIGNED: TableBoard._card_assigned,
    record_kinds.CARD_SET_ASIDE: TableBoard._card_set_aside,
    record_kinds.ROUND_RESULT: TableBoard._round_result,
    record_kinds.ROUND_VOID: TableBoard._round_void,
    record_kinds.ROUND_CARDS_RETURNED: TableBoard._cards_returned,
    record_kinds.HOLD_STARTED: TableBoard._hold_started,
    record_kinds.HOLD_ENDED: TableBoard._hold_ended,
    record_kinds.ALARM: TableBoard._alarm,
    record_kinds.IRREGULARITY: TableBoard._irregularity,
    record_kinds.SHOE_ENDED: TableBoard._shoe_ended,
}
"""Event kind (observers.TableEvent.KIND) -> how the board takes it."""
