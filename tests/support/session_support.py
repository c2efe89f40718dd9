"""A table session on a simulated device: the real controller, driver and firmware simulator.

The session talks to the simulator through the drivers, over sim:// (in
process, fast) or a real pseudo-terminal. The virtual dealer is the test:
on a manual shoe it presses the dealer button when a round opens and pulls
a card whenever the gate is open; on an automatic machine the session asks
for every card itself.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cardshoe.controller.config import (
    DeviceConfig,
    DeviceMode,
    GameConfig,
    ShoeProcedure,
    TableConfig,
)
from cardshoe.controller.journal.records import Record
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.procedure.facts import (
    WATCHER_ALARMS,
    Alarm,
    HoldStarted,
    RoundOpened,
    TableEvent,
)
from cardshoe.controller.procedure.holds import HoldReason
from cardshoe.controller.procedure.operator_commands import COMMANDS
from cardshoe.controller.rules.cards import Card, parse_card
from cardshoe.controller.rules.shoe_order import play_shoe_order
from cardshoe.controller.service.session import TableSession
from cardshoe.drivers.api.protocols import open_device
from cardshoe.drivers.link import LinkTiming
from cardshoe.firmware_sim.attach_pty import serve_pty
from cardshoe.firmware_sim.core import FirmwareCore
from cardshoe.firmware_sim.devices import create_device
from cardshoe.firmware_sim.faults import parse_injection
from cardshoe.firmware_sim.sim_url import publish, register_sim_url_handler, release

SIM_DECK_SET = 0x00BC614E
FAST_LINK = LinkTiming(backoff_initial_s=0.02, backoff_max_s=0.1)
_names = itertools.count(1)


def table_config(
    game: str = "punto-banco", *, automatic: bool = False, decks: int = 8, **shoe: object
) -> TableConfig:
    game_config = GameConfig(name=game, decks=decks)
    if automatic:
        return TableConfig(
            table_id="T1", game=game_config, device=DeviceConfig(kind=DeviceMode.AUTO)
        )
    return TableConfig(
        table_id="T1",
        game=game_config,
        shoe=ShoeProcedure(**shoe),  # type: ignore[arg-type]
    )


def simulated_device(config: TableConfig, seed: int, inject: tuple[str, ...] = ()) -> FirmwareCore:
    profile = "cs-1" if config.uses_cut_card_and_burn else "cs-auto"
    core = create_device(
        profile,
        seed=seed,
        decks=config.game.decks,
        cut_card_depth=config.shoe.cut_card_depth,
        injections=[parse_injection(text) for text in inject],
    )
    core.dealer.auto = True
    return core


@dataclass
class DealerButton:
    """The dealer at a manual shoe: calls "no more bets" as soon as a round opens."""

    core: FirmwareCore
    seen: list[TableEvent] = field(default_factory=list)

    def notify(self, event: TableEvent) -> None:
        self.seen.append(event)
        if isinstance(event, RoundOpened) and self.core.profile.kind.name == "MANUAL_SHOE":
            self.core.press_button()


class ConfirmsFaceUp:
    """The dealer at an automatic machine: turns a face-down card up when the table holds."""

    def __init__(self, session: TableSession) -> None:
        self.session = session

    def notify(self, event: TableEvent) -> None:
        if isinstance(event, HoldStarted) and event.reason == HoldReason.FACE_DOWN_CARD:
            self.session.operate(COMMANDS["confirm-face-up"])


class RemovesIntruders:
    """The pit at an automatic machine: once the simulated dealer has set an intruder apart
    (it never goes back in), a supervisor confirms it is off the table."""

    def __init__(self, session: TableSession) -> None:
        self.session = session

    def notify(self, event: TableEvent) -> None:
        if isinstance(event, HoldStarted) and event.reason == HoldReason.INTRUDER_ON_TABLE:
            self.session.clear_hold(HoldReason.INTRUDER_ON_TABLE, note="set apart")


@contextmanager
def session_on(
    config: TableConfig,
    core: FirmwareCore,
    journal_path: Path,
    *,
    over_pty: bool = False,
    **session_options: Any,
) -> Iterator[tuple[TableSession, DealerButton]]:
    """A session on the simulated device, over sim:// or a real pty; closed afterwards.

    session_options: TableSession's keywords (its clocks)."""
    dealer = DealerButton(core)
    if over_pty:
        with (
            serve_pty(core) as pty,
            Journal.open(journal_path, table_id=config.table_id, create=True) as journal,
            open_device(str(pty.link), timing=FAST_LINK) as device,
        ):
            yield TableSession.open(config, journal, device, [dealer], **session_options), dealer
        return
    register_sim_url_handler()
    name = f"session-test-{next(_names)}"
    url = publish(core, name)
    try:
        with (
            Journal.open(journal_path, table_id=config.table_id, create=True) as journal,
            open_device(url, timing=FAST_LINK) as device,
        ):
            yield TableSession.open(config, journal, device, [dealer], **session_options), dealer
    finally:
        release(name)


def journaled(path: Path, kind: str) -> list[Record]:
    with Journal.open_readonly(path) as journal:
        return list(journal.records(kinds=[kind]))


def procedure_alarms(path: Path) -> list[Record]:
    """The journal's alarms but game protection's, which surveillance hears from any fair shoe
    (an advantage near the end of a shoe): the ones the procedure itself raised."""
    return [
        record
        for record in journaled(path, Alarm.KIND)
        if record.payload["kind"] not in WATCHER_ALARMS
    ]


def assert_every_event_journaled_once(path: Path) -> None:
    """The chain verifies and the device's event seqs are exactly 1..N, each once."""
    with Journal.open_readonly(path) as journal:
        seqs = [
            record.device_seq for record in journal.records() if record.kind.startswith("device.")
        ]
        assert journal.verify().ok
    assert seqs == list(range(1, len(seqs) + 1))


def rounds_as_the_rules_engine_plays_them(path: Path, config: TableConfig) -> None:
    """Every settled round equals what the rules engine gives for the cards it was dealt.

    The check re-plays each round's assigned cards, in journal order, through a
    fresh round of get_game(...): independent of the procedure that assigned them.
    """
    game = config.game.build_game()
    with Journal.open_readonly(path) as journal:
        records = list(journal.records(kinds=["card.assigned", "round.result", "round.void"]))
    cards: dict[tuple[str | None, int | None], list[Card]] = {}
    results = 0
    for record in records:
        key = (record.shoe_id, record.round_no)
        if record.kind == "card.assigned":
            cards.setdefault(key, []).append(parse_card(record.payload["card"]))
            continue
        if record.kind == "round.void":
            continue
        results += 1
        (played,) = play_shoe_order(game, cards.get(key, []))
        assert played.void is None
        outcome = played.round.outcome()
        assert [str(card) for card in played.round.player] == record.payload["player"]
        assert [str(card) for card in played.round.banker] == record.payload["banker"]
        assert record.payload["winner"] == outcome.winner.value
        assert (record.payload["player_total"], record.payload["banker_total"]) == (
            outcome.player_total,
            outcome.banker_total,
        )
    assert results > 0
