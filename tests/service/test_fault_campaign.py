"""The fault campaign: every simulator fault kind x both device kinds x all four games.

Each cell deals a short shoe (the fewest decks each game allows, three
rounds) on the real session, driver and simulator, with one fault injected
at the first card of round 2. What the table must do about it is the data
table FAULT_OUTCOMES, one row per fault kind and device kind, each with the
rule it follows; the check reads the journal (void, irregularity, alarm,
hold and last-round records, the results and the shoe's reconciliation),
never the logs. The fault kinds come from the simulator's own enum, so a
new kind joins the matrix at once and fails until its row is written.

A kind that cannot happen on a device kind (a face-down card from a
manual shoe, a reversed card or a cut card on the automatic machine) is
refused by the simulator when the fault is injected, with a one-line reason.

Cells run in process over sim://; a few run over a real pty as well.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import pytest
from support.session_support import (
    SIM_DECK_SET,
    ConfirmsFaceUp,
    RemovesIntruders,
    assert_every_event_journaled_once,
    journaled,
    procedure_alarms,
    rounds_as_the_rules_engine_plays_them,
    session_on,
    simulated_device,
)

from cardshoe.controller.config import (
    DeviceConfig,
    DeviceMode,
    GameConfig,
    TableConfig,
)
from cardshoe.controller.procedure.facts import HoldStarted, ShoeEnded, TableEvent
from cardshoe.controller.rules.games import GAME_NAMES, deck_range
from cardshoe.controller.service.session import TableSession
from cardshoe.firmware_sim.errors import SimConfigError
from cardshoe.firmware_sim.faults import (
    DEFAULT_DURATION_S,
    LINE_ONLY_KINDS,
    TRANSFER_KINDS,
    InjectionKind,
)
from cardshoe.firmware_sim.profiles import get_profile

ROUNDS = 3
"""The house ends each shoe after this many rounds (run_shoe(rounds=...))."""
FAULT_ROUND = 2
"""The fault strikes when the first card of this round is about to leave."""
FAULT_DURATION_S = 0.05
"""How long a fault that lasts (a jam, an open door, an unplug, a held-back ACK) lasts."""
SEED = 7
DEADLINE_S = 30.0
"""A cell that has not finished by then is stopped and fails, rather than hang the suite."""
GAMES = GAME_NAMES
PROFILES = {DeviceMode.SHOE: "cs-1", DeviceMode.AUTO: "cs-auto"}


class Outcome(StrEnum):
    """What the fault does to the table, in one word (the row's headline)."""

    VOID = "void"
    """The round is void: stakes returned, earlier results stand."""
    CORRECTION = "correction"
    """The card stands in its place once the dealer corrects it; the table holds meanwhile."""
    HOLD = "hold"
    """The table holds and resumes exactly where it stood."""
    ALARM = "alarm"
    """The pit is alarmed; the table cannot go on by itself."""
    RECORD = "record"
    """The card is valid and play goes on; the irregularity is only recorded."""
    LAST_ROUND = "last-round"
    """The shoe ends after this round."""
    NOTHING = "nothing"
    """The link absorbs the fault: the journal is as if nothing happened."""
    REJECTED = "rejected"
    """The fault cannot happen on this device kind: the simulator refuses it."""


class ShoeEnd(StrEnum):
    """How the shoe of a cell ends."""

    HOUSE = "house"
    """After ROUNDS rounds, by the house."""
    CUT_CARD = "cut_card"
    """After the fault round: the cut card came out in it."""
    EMPTY = "empty"
    """After the fault round: the shoe ran out in it."""
    NEVER = "never"
    """The table holds in the fault round until a person acts."""


@dataclass(frozen=True)
class Expected:
    """One row of the fault table: the journal a cell must leave."""

    outcome: Outcome
    rule: str
    """The rule article (or design rule) the outcome follows."""
    void: str | None = None
    """The fault round's void reason."""
    irregularities: tuple[tuple[str, str], ...] = ()
    """(reason code, consequence) recorded in the fault round, in order."""
    alarms: frozenset[str] = frozenset()
    """Every alarm kind the journal holds."""
    holds: tuple[str, ...] = ()
    """Holds started in the fault round, in order; each ends unless the shoe never does."""
    shoe_end: ShoeEnd = ShoeEnd.HOUSE


def on_both(expected: Expected) -> Mapping[DeviceMode, Expected]:
    return {DeviceMode.SHOE: expected, DeviceMode.AUTO: expected}


def link_absorbs(rule: str) -> Mapping[DeviceMode, Expected]:
    return on_both(Expected(Outcome.NOTHING, rule))


RECONCILIATION = "reconciliation"

FAULT_OUTCOMES: Mapping[InjectionKind, Mapping[DeviceMode, Expected]] = {
    InjectionKind.FOREIGN_CARD: {
        DeviceMode.SHOE: Expected(
            Outcome.VOID,
            "7 Up 5.1; Macau Art. 10",
            void="foreign_card",
            irregularities=(("foreign_card", "void_round"),),
            alarms=frozenset({"foreign_card"}),
        ),
        DeviceMode.AUTO: Expected(
            Outcome.VOID,
            "7 Up 5.1; Macau Art. 10; Art. 7.2 returns the round's own cards: the intruder is "
            "set apart, never returned, and the table holds until it is removed",
            void="foreign_card",
            irregularities=(("foreign_card", "void_round"),),
            alarms=frozenset({"foreign_card"}),
            holds=("intruder_on_table",),
        ),
    },
    InjectionKind.DUPLICATE_CARD: {
        DeviceMode.SHOE: Expected(
            Outcome.VOID,
            "Macau Art. 10; a second physical card with one tag is tampering",
            void="duplicate_card",
            irregularities=(("duplicate_card", "void_round"),),
            alarms=frozenset({"tamper"}),
        ),
        DeviceMode.AUTO: Expected(
            Outcome.VOID,
            "Macau Art. 10; a second physical card with one tag is tampering. The simulator "
            "copies a card still out, so the automatic machine's copy is seen beside its twin; "
            "the copy is set apart, never returned, and the table holds until it is removed",
            void="duplicate_card",
            irregularities=(("duplicate_card", "void_round"),),
            alarms=frozenset({"tamper"}),
            holds=("intruder_on_table",),
        ),
    },
    InjectionKind.DOUBLE_FEED: on_both(
        Expected(
            Outcome.VOID,
            "7 Up 5.4; Macau Art. 10: the order of the cards is unknown",
            void="double_feed",
            irregularities=(("double_feed", "void_round"),),
        )
    ),
    InjectionKind.DOUBLE_FEED_IN_ORDER: on_both(
        Expected(
            Outcome.RECORD,
            "7 Up 5.4 voids only when the order cannot be established; Macau Art. 10: the "
            "reader read the cards one after the other, so each goes to the hand due it",
            irregularities=(("double_feed_in_order", "record"),) * 2,
        )
    ),
    InjectionKind.MISREAD_CARD: on_both(
        Expected(
            Outcome.CORRECTION,
            "Macau Art. 10: the card's place is known, only its identity is not; the table "
            "holds until the dealer re-reads it, and it goes to the hand due it",
            irregularities=(("misread_card", "hold"),),
            holds=("misread_card",),
        )
    ),
    InjectionKind.UNREADABLE_CARD: on_both(
        Expected(
            Outcome.CORRECTION,
            "Macau Art. 10: a card that will not read waits for a supervisor to enter it "
            "(enter-card) or to void the round; nothing else may leave the device meanwhile",
            irregularities=(("misread_card", "hold"),),
            holds=("misread_card",),
            shoe_end=ShoeEnd.NEVER,
        )
    ),
    **{
        kind: on_both(
            Expected(
                Outcome.REJECTED,
                "a line reader's own fault: a cardshoe device sends frames, not lines "
                "(the readers' faults: tests/service/test_reader_whole_shoes.py)",
            )
        )
        for kind in LINE_ONLY_KINDS
    },
    InjectionKind.REVERSED_CARD: {
        DeviceMode.SHOE: Expected(
            Outcome.RECORD,
            "Macau Art. 4: a card out of the shoe face up is valid, its round stands",
            irregularities=(("face_up_card", "record"),),
        ),
        DeviceMode.AUTO: Expected(
            Outcome.REJECTED, "Macau Art. 7.2: the machine deals every card face up"
        ),
    },
    InjectionKind.FACE_DOWN: {
        DeviceMode.SHOE: Expected(Outcome.REJECTED, "Macau Art. 2.1: a manual shoe is face down"),
        DeviceMode.AUTO: Expected(
            Outcome.CORRECTION,
            "Macau Art. 7.2: cards are dealt face up; the dealer turns it and play goes on",
            irregularities=(("face_down_card", "hold"),),
            holds=("face_down_card",),
        ),
    },
    InjectionKind.JAM: on_both(
        Expected(
            Outcome.HOLD,
            "design: a device fault holds the table, which resumes exactly where it stood",
            holds=("fault.jam",),
        )
    ),
    InjectionKind.DOOR_OPEN: on_both(
        Expected(
            Outcome.HOLD,
            "design: a device fault holds the table, which resumes exactly where it stood",
            holds=("fault.door_open",),
        )
    ),
    InjectionKind.EARLY_CUT_CARD: {
        DeviceMode.SHOE: Expected(
            Outcome.LAST_ROUND,
            "Macau Art. 3.1 (last-round policy): the round the cut card comes out in is the "
            "last; Art. 2.1 puts it above about the last 12 cards, so one this early alarms",
            alarms=frozenset({"cut_card"}),
            shoe_end=ShoeEnd.CUT_CARD,
        ),
        DeviceMode.AUTO: Expected(
            Outcome.REJECTED, "Macau Art. 2.3: the machine deals without a cut card"
        ),
    },
    InjectionKind.OUT_OF_CARDS: {
        DeviceMode.SHOE: Expected(
            Outcome.VOID,
            "7 Up 5.5; a shoe that runs out early held fewer cards than were loaded",
            void="insufficient_cards",
            irregularities=(("insufficient_cards", "void_round"),),
            alarms=frozenset({RECONCILIATION}),
            shoe_end=ShoeEnd.EMPTY,
        ),
        DeviceMode.AUTO: Expected(
            Outcome.VOID,
            "7 Up 5.5; a machine that runs out holds fewer cards than were loaded",
            void="insufficient_cards",
            irregularities=(("insufficient_cards", "void_round"),),
            alarms=frozenset({RECONCILIATION}),
            shoe_end=ShoeEnd.EMPTY,
        ),
    },
    InjectionKind.UNPLUG: on_both(
        Expected(
            Outcome.HOLD,
            "design, acknowledgement after durable commit: the card is resent, lost by no one",
            holds=("link_lost",),
        )
    ),
    InjectionKind.CORRUPT_BYTES: link_absorbs("protocol: a frame failing its CRC is resent"),
    InjectionKind.DROP_FRAME: link_absorbs("protocol: an unacknowledged event is resent"),
    InjectionKind.DUPLICATE_FRAME: link_absorbs("protocol: a repeated seq is dropped"),
    InjectionKind.DELAY_ACK: link_absorbs("protocol: the event is resent until acknowledged"),
    InjectionKind.BAD_FIRMWARE_HASH: on_both(
        Expected(
            Outcome.ALARM,
            "design, software verification: a failed self-test or an unapproved image deals "
            "nothing until a technician acts",
            alarms=frozenset({"device_fault", "firmware"}),
            holds=("self_test_failed", "firmware_not_approved"),
            shoe_end=ShoeEnd.NEVER,
        )
    ),
}

DEALING_KINDS = [kind for kind in InjectionKind if kind not in TRANSFER_KINDS]
"""Every fault that strikes while a shoe is dealt; a firmware transfer's own faults strike only
during an update, which tests/cli/test_firmware_update.py covers."""
CELLS = [
    pytest.param(kind, device, game, id=f"{kind}-{device}-{game}")
    for kind in DEALING_KINDS
    for device in DeviceMode
    for game in GAMES
]
PTY_CELLS = [
    pytest.param(kind, device, game, id=f"{kind}-{device}-{game}-pty")
    for kind, device, game in [
        (InjectionKind.UNPLUG, DeviceMode.SHOE, "seven-up"),
        (InjectionKind.CORRUPT_BYTES, DeviceMode.AUTO, "macau-1"),
        (InjectionKind.DROP_FRAME, DeviceMode.SHOE, "punto-banco"),
        (InjectionKind.DUPLICATE_FRAME, DeviceMode.AUTO, "macau-2"),
        (InjectionKind.FOREIGN_CARD, DeviceMode.AUTO, "punto-banco"),
    ]
]


def expected_for(kind: InjectionKind, device: DeviceMode) -> Expected:
    rows = FAULT_OUTCOMES.get(kind)
    if rows is None or device not in rows:
        pytest.fail(f"the fault table has no row for {kind} on a {device}: write one")
    return rows[device]


def injection(kind: InjectionKind) -> str:
    lasting = f",for={FAULT_DURATION_S}" if kind in DEFAULT_DURATION_S else ""
    return f"{kind}@round={FAULT_ROUND}{lasting}"


def campaign_config(game: str, device: DeviceMode) -> TableConfig:
    """The fewest decks the game allows; the simulator's firmware image is the approved one."""
    fewest_decks = deck_range(game).fewest
    approved = get_profile(PROFILES[device]).firmware_hash.hex()
    return TableConfig(
        table_id="T1",
        game=GameConfig(name=game, decks=fewest_decks),
        device=DeviceConfig(kind=device, allowed_firmware_hashes=(approved,)),
    )


class StopsWhenHeld:
    """Stops the run once the table holds for a reason no device event will end."""

    def __init__(self, session: TableSession, reason: str) -> None:
        self.session = session
        self.reason = reason

    def notify(self, event: TableEvent) -> None:
        if isinstance(event, HoldStarted) and event.reason == self.reason:
            self.session.stop()


def deal_a_faulted_shoe(
    tmp_path: Path, kind: InjectionKind, device: DeviceMode, game: str, *, over_pty: bool
) -> tuple[Path, TableConfig, ShoeEnded | None]:
    expected = expected_for(kind, device)
    config = campaign_config(game, device)
    path = tmp_path / "journal.sqlite"
    core = simulated_device(config, SEED, (injection(kind),))
    with session_on(config, core, path, over_pty=over_pty) as (session, _):
        session.subscribe(ConfirmsFaceUp(session))
        session.subscribe(RemovesIntruders(session))
        if expected.shoe_end is ShoeEnd.NEVER:
            session.subscribe(StopsWhenHeld(session, expected.holds[-1]))
        # The dealer's button closes bets on a manual shoe; the machine has none.
        betting_time_s = 0 if device is DeviceMode.AUTO else None
        deadline = threading.Timer(DEADLINE_S, session.stop)
        deadline.start()
        try:
            ended = session.run_shoe(
                deck_set=SIM_DECK_SET, rounds=ROUNDS, betting_time_s=betting_time_s
            )
        finally:
            deadline.cancel()
            deadline.join()
    return path, config, ended


@dataclass(frozen=True)
class JournalSummary:
    """What the journal says happened: the fields the fault table speaks about."""

    voids: dict[int, str]
    irregularities: list[tuple[int | None, str, str]]
    alarms: set[str]
    holds_started: list[tuple[int | None, str]]
    holds_ended: list[tuple[int | None, str]]
    results: list[int]
    last_round: list[tuple[int, str]]


def read_summary(path: Path) -> JournalSummary:
    def payloads(kind: str, *fields: str) -> list[tuple]:
        return [
            (record.round_no, *(record.payload[name] for name in fields))
            for record in journaled(path, kind)
        ]

    return JournalSummary(
        voids=dict(payloads("round.void", "reason")),  # type: ignore[arg-type]
        irregularities=payloads("irregularity", "code", "consequence"),
        alarms={record.payload["kind"] for record in procedure_alarms(path)},
        holds_started=payloads("hold.started", "reason"),
        holds_ended=payloads("hold.ended", "reason"),
        results=[round_no for (round_no,) in payloads("round.result")],
        last_round=[
            (record.payload["last_round"], record.payload["cause"])
            for record in journaled(path, "shoe.last_round")
        ],
    )


def summary_expected(expected: Expected) -> JournalSummary:
    """The journal the row describes, in the same form read_summary gives."""
    end = expected.shoe_end
    last = ROUNDS if end is ShoeEnd.HOUSE else FAULT_ROUND
    unsettled = expected.void is not None or end is ShoeEnd.NEVER
    holds = [(FAULT_ROUND, reason) for reason in expected.holds]
    last_round = {ShoeEnd.HOUSE: [(ROUNDS, "house")], ShoeEnd.CUT_CARD: [(FAULT_ROUND, "cut_card")]}
    return JournalSummary(
        voids={} if expected.void is None else {FAULT_ROUND: expected.void},
        irregularities=[(FAULT_ROUND, code, then) for code, then in expected.irregularities],
        alarms=set(expected.alarms),
        holds_started=holds,
        holds_ended=[] if end is ShoeEnd.NEVER else holds,
        results=[n for n in range(1, last + 1) if not (n == FAULT_ROUND and unsettled)],
        last_round=last_round.get(end, []),
    )


def check_cell(
    kind: InjectionKind, device: DeviceMode, path: Path, config: TableConfig, ended: object
) -> None:
    expected = expected_for(kind, device)
    assert read_summary(path) == summary_expected(expected), expected.rule
    assert_every_event_journaled_once(path)
    rounds_as_the_rules_engine_plays_them(path, config)
    shoe_ends = journaled(path, "shoe.ended")
    if expected.shoe_end is ShoeEnd.NEVER:
        assert ended is None and shoe_ends == []
        return
    (shoe_end,) = [record.payload for record in shoe_ends]
    assert ended is not None
    assert shoe_end["reconciled"] is (RECONCILIATION not in expected.alarms)
    assert shoe_end["dealt"] + shoe_end["burned"] == shoe_end["device_cards_dealt"]


def test_the_table_has_a_row_for_every_fault_kind_on_both_devices() -> None:
    missing = [
        f"{kind} on a {device}"
        for kind in DEALING_KINDS
        for device in DeviceMode
        if device not in FAULT_OUTCOMES.get(kind, {})
    ]
    assert missing == []


@pytest.mark.parametrize(("kind", "device", "game"), CELLS)
def test_fault_cell(tmp_path: Path, kind: InjectionKind, device: DeviceMode, game: str) -> None:
    expected = expected_for(kind, device)
    if expected.outcome is Outcome.REJECTED:
        with pytest.raises(SimConfigError, match=f"{kind}.*cannot happen on a") as refused:
            simulated_device(campaign_config(game, device), SEED, (injection(kind),))
        assert "\n" not in str(refused.value)
        return
    path, config, ended = deal_a_faulted_shoe(tmp_path, kind, device, game, over_pty=False)
    check_cell(kind, device, path, config, ended)


@pytest.mark.parametrize(("kind", "device", "game"), PTY_CELLS)
def test_fault_cell_over_a_pty(
    tmp_path: Path, kind: InjectionKind, device: DeviceMode, game: str
) -> None:
    path, config, ended = deal_a_faulted_shoe(tmp_path, kind, device, game, over_pty=True)
    check_cell(kind, device, path, config, ended)
