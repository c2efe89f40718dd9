"""shoectl demo's wiring: a simulated device, and production code for everything else.

The firmware simulator stands in for the shoe or shuffler-dealer; the rest is
what a table runs: the transport (a real pseudo-terminal by default, or TCP,
pyusb with the simulator's backend, or in-process sim://), the driver, the
journal and the TableSession with its procedure and rules engine. The
virtual dealer does what the person at the table does: pulls a card whenever
the shoe's gate lets one go (the simulator's own virtual dealer), calls "no
more bets" with the dealer button when a round opens, and turns a card the
machine dealt face down face up. A hold no one at a demo table can clear
(a failed self-test, a lost event) ends the shoe as the pit would: abandoned,
unreconciled, on the record.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from cardshoe.controller.cli.demo_readers import (
    DemoProtocol,
    ReaderHand,
    attached_reader,
    check_reader_settings,
    reader_profile,
    simulated_reader,
)
from cardshoe.controller.config import DeviceMode, TableConfig
from cardshoe.controller.errors import UserError
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.procedure.facts import Observer, ShoeEnded
from cardshoe.controller.procedure.holds import HoldReason, fault_hold
from cardshoe.controller.procedure.irregularities import card_of
from cardshoe.controller.procedure.machine import State
from cardshoe.controller.procedure.operator_commands import COMMANDS
from cardshoe.controller.protection.shoe_records import read_shoes
from cardshoe.controller.record_kinds import check_payload
from cardshoe.controller.service.recovery import recover
from cardshoe.controller.service.session import TableSession
from cardshoe.drivers.api.events import FaultKind
from cardshoe.drivers.api.protocols import open_device
from cardshoe.drivers.protocol.cardid import CardId
from cardshoe.drivers.transports.usb_bulk import UsbAddress
from cardshoe.firmware_sim.attach_pty import serve_pty
from cardshoe.firmware_sim.attach_tcp import serve_tcp
from cardshoe.firmware_sim.core import FirmwareCore
from cardshoe.firmware_sim.devices import create_device
from cardshoe.firmware_sim.errors import SimConfigError
from cardshoe.firmware_sim.faults import parse_injection
from cardshoe.firmware_sim.line_reader import LineReader
from cardshoe.firmware_sim.shuffles import parse_shuffle
from cardshoe.firmware_sim.sim_url import publish, register_sim_url_handler, release
from cardshoe.firmware_sim.timing import Timing
from cardshoe.firmware_sim.usb_backend import SimUsbBackend


class DemoTransport(StrEnum):
    """How the controller reaches the simulated device."""

    PTY = "pty"
    """A real pseudo-terminal, opened with pyserial as a serial port is."""
    TCP = "tcp"
    """socket://127.0.0.1:PORT, as a serial-over-LAN adapter is reached."""
    USB = "usb"
    """pyusb's real core over the simulator's backend (usb://VID:PID/SERIAL)."""
    INPROC = "inproc"
    """sim://, the simulator in this process behind pyserial's URL handler."""


SIMULATED_PROFILES = {DeviceMode.SHOE: "cs-1", DeviceMode.AUTO: "cs-auto"}
"""The simulator's profile for each kind of device a table may have."""
AUTO_ROUNDS_PER_DECK = 10
"""An automatic machine takes every round's cards back (Art. 7.2), so its shoe never runs
out; the house changes it when it chooses (Art. 3.2). Unless told, the demo changes it after
about as many rounds as the same decks give from a manual shoe (52 cards, about 5 a round), or
at the configured shoe.machine_rounds if that comes first."""
BETTING_PAUSE_CARDS = 3
"""On a paced demo, bets stay open this many card intervals before the dealer closes them."""
HOLDS_THAT_END = frozenset(
    {
        HoldReason.LINK_LOST,
        HoldReason.FACE_DOWN_CARD,
        HoldReason.MISREAD_CARD,
        HoldReason.INTRUDER_ON_TABLE,
        HoldReason.DEVICE_CANNOT_REPLAY,
        fault_hold(FaultKind.JAM),
        fault_hold(FaultKind.DOOR_OPEN),
        fault_hold(FaultKind.EVENT_BACKLOG),
        fault_hold(FaultKind.DEVICE_SPECIFIC),
    }
)
"""Holds that end at a demo table: the device recovers by itself, or the dealer corrects it
(the face-down card, a misread card re-read), or the demo's supervisor does (a card the reader
cannot read, entered; an intruder the simulated dealer set apart, its removal confirmed; the
card a card reader lost while unplugged, entered). Any other hold needs a technician: the demo
ends the shoe."""
DEMO_SUPERVISOR = {"uid": os.getuid(), "user": "demo-supervisor", "role": "supervisor"}
"""Who enters a card at a demo table, as the journal names an operator."""
SUPERVISOR_AFTER_S = 2.0
"""A misread card still unread this long after its hold began is entered by the demo's
supervisor, who reads it by eye (an unreadable-card fault is never re-read)."""


@dataclass(frozen=True)
class DemoSettings:
    config: TableConfig
    seed: int | None = None
    """Seeds the simulator's shuffle, so a run can be repeated card for card."""
    rounds: int | None = None
    """The house ends the shoe after this many rounds; None: the cut card decides (manual
    shoe) or AUTO_ROUNDS_PER_DECK does (automatic machine)."""
    transport: DemoTransport = DemoTransport.PTY
    inject: tuple[str, ...] = ()
    """Simulator faults, written KIND@round=N or KIND@card=N (docs/simulator.md)."""
    journal_path: Path | None = None
    """Keep the journal here (a rerun resumes its open shoe); None: a temporary journal."""
    card_interval_s: float = 0.0
    """The least time between two cards, so a person can follow the table; 0: no pause."""
    shuffle: str = "fair"
    """How the simulator shuffles from the journal's last shoe: fair, riffle:N or carry:LEN."""
    protocol: DemoProtocol = DemoProtocol.CARDSHOE
    """A cardshoe device, or a card reader without a gate (demo_readers.py)."""

    @property
    def automatic(self) -> bool:
        return self.config.device.kind is DeviceMode.AUTO

    @property
    def house_rounds(self) -> int | None:
        if self.rounds is not None or not self.automatic:
            return self.rounds
        return AUTO_ROUNDS_PER_DECK * self.config.game.decks


@dataclass(frozen=True)
class DemoResult:
    ended: ShoeEnded | None
    """The shoe's reconciliation; None when no shoe ended (the reader went away first)."""
    held_for: str | None
    """The hold that stopped the shoe, when one no one at the table could clear did."""
    link_counters: dict[str, int]
    """The driver's frame and event counters at the end (bad frames dropped, resends...)."""


def simulated_device(
    settings: DemoSettings, previous_order: list[CardId] | None = None
) -> FirmwareCore:
    """The simulated shoe or machine the table's configuration calls for, faults included.

    previous_order is the last shoe's order as the journal saw it, which a riffle or
    carry-over shuffle starts from.
    """
    pace = settings.card_interval_s
    try:
        shuffle = parse_shuffle(settings.shuffle)
    except SimConfigError as exc:
        raise UserError(f"--shuffle: {exc}") from None
    try:
        core = create_device(
            SIMULATED_PROFILES[settings.config.device.kind],
            seed=settings.seed,
            decks=settings.config.game.decks,
            cut_card_depth=settings.config.shoe.cut_card_depth,
            injections=[parse_injection(text) for text in settings.inject],
            timing=Timing(pull_interval_s=pace, deal_s=pace),
            shuffle=shuffle,
            previous_order=previous_order,
        )
    except SimConfigError as exc:
        raise UserError(f"--inject: {exc}") from None
    core.dealer.auto = True
    return core


@contextmanager
def attached(core: FirmwareCore, transport: DemoTransport) -> Iterator[tuple[str, Any]]:
    """Serve the device over the transport; the URL to open and the pyusb backend, if any."""
    if transport is DemoTransport.PTY:
        with serve_pty(core) as pty:
            yield str(pty.link), None
    elif transport is DemoTransport.TCP:
        with serve_tcp(core) as tcp:
            yield tcp.url, None
    elif transport is DemoTransport.USB:
        with SimUsbBackend(core) as backend:
            profile = core.profile
            yield UsbAddress(profile.usb_vid, profile.usb_pid, core.serial_number).url, backend
    else:
        register_sim_url_handler()
        name = f"shoectl-demo-{core.serial_number}-{id(core):x}"
        url = publish(core, name)
        try:
            yield url, None
        finally:
            release(name)


def continue_from_journal(core: FirmwareCore, journal: Journal, config: TableConfig) -> bool:
    """Make a fresh simulated device the one whose events the journal already holds.

    A real device keeps its cards and its event counter while the controller
    restarts. The demo's device lived in the previous demo process, so its
    state is rebuilt from the journal: its event counter goes on after the
    last event journaled and, for a manual shoe left open, the cards the shoe
    has taken leave its stock (a cut card it has passed is not reported
    again). Cards never journaled stay in: as far as the table knows, they
    never left. An automatic machine's count of cards out since its shuffle
    cannot be rebuilt, so it cannot take over an open shoe.

    True when no shoe is open or the device now holds the open shoe's cards.
    """
    last_seq = journal.last_device_seq(core.serial_number)
    if last_seq is None:
        return True
    core.link.next_seq, core.link.last_acked_seq = last_seq + 1, last_seq
    shoe = recover(config, journal).model.shoe
    if shoe is None:
        return True
    if config.device.kind is DeviceMode.AUTO:
        return False
    stock = core.shoe
    stock.dealt.extend(card for card in stock.cards if card in shoe.seen)
    stock.cards = [card for card in stock.cards if card not in shoe.seen]
    depth = stock.cut_card_depth
    stock.cut_card_seen = depth is not None and stock.remaining <= depth
    return True


def previous_shoe_order(journal: Journal) -> list[CardId] | None:
    """The physical cards of the journal's last finished shoe, in the order they left.

    A shoe left open is the one this run resumes, so the shoe before it counts.
    """
    shoes = read_shoes(journal, last=2)
    if shoes and not shoes[-1].ended:
        shoes.pop()
    if not shoes:
        return None
    return [CardId.parse(seen.tagged_id) for seen in shoes[-1].cards if seen.tagged_id]


@contextmanager
def demo_journal(settings: DemoSettings) -> Iterator[Journal]:
    """The journal at --journal (kept, so a rerun resumes its shoe), or a temporary one."""
    table_id = settings.config.table_id
    if settings.journal_path is not None:
        with Journal.open(
            settings.journal_path, table_id=table_id, create=True, check_record=check_payload
        ) as journal:
            yield journal
        return
    with (
        tempfile.TemporaryDirectory(prefix="shoectl-demo-") as folder,
        Journal.open(
            Path(folder) / "journal.sqlite",
            table_id=table_id,
            create=True,
            check_record=check_payload,
        ) as journal,
    ):
        yield journal


class DemoDealer:
    """The person at the demo table, acting between the session's steps (run_shoe's on_step).

    At a manual shoe: presses the dealer button once per round, after the
    betting pause. At an automatic machine: closes bets by command (the
    session's betting_time_s) and turns a face-down card face up. Either
    way: stops the session when a hold that needs a technician comes.
    """

    def __init__(
        self,
        core: FirmwareCore | LineReader,
        session: TableSession,
        pause_s: float,
        stop_requested: Callable[[], bool] = lambda: False,
        clock: Callable[[], float] = time.monotonic,
        hand: ReaderHand | None = None,
    ) -> None:
        self.core = core
        self.hand = hand
        self.session = session
        self.stop_requested = stop_requested
        self.presses_button = session.config.device.kind is DeviceMode.SHOE
        self.pause_s = pause_s
        self.clock = clock
        self.held_for: str | None = None
        self._round_seen: tuple[int | None, float] | None = None
        self._button_for: int | None = None
        self._face_down_since: float | None = None
        self._misread_since: float | None = None

    def on_step(self) -> None:
        if self.stop_requested():
            self.session.stop()
            return
        snapshot = self.session.snapshot()
        stuck = [hold for hold in snapshot.holds if hold not in HOLDS_THAT_END]
        if stuck or snapshot.state is State.FAULT:
            self.held_for = stuck[0] if stuck else str(State.FAULT)
            self.session.stop()
            return
        now = self.clock()
        if HoldReason.FACE_DOWN_CARD in snapshot.holds:
            if self._face_down_since is None:
                self._face_down_since = now
            if now - self._face_down_since >= self.pause_s:
                self.session.operate(COMMANDS["confirm-face-up"])
                self._face_down_since = None
        if isinstance(self.core, FirmwareCore):
            self._enter_unreadable_card(HoldReason.MISREAD_CARD in snapshot.holds, now)
        if HoldReason.INTRUDER_ON_TABLE in snapshot.holds:
            # The simulated dealer sets the intruder apart at once; the supervisor says so.
            with self.session.acting_as(DEMO_SUPERVISOR):
                self.session.clear_hold(HoldReason.INTRUDER_ON_TABLE, note="set apart")
        self._clear_reader_fault(fault_hold(FaultKind.DEVICE_SPECIFIC) in snapshot.clearable_holds)
        if HoldReason.DEVICE_CANNOT_REPLAY in snapshot.holds and self.hand is not None:
            # The card that left as the reader was unplugged: its line was lost with the cable,
            # and the supervisor reads it on the layout.
            with self.session.acting_as(DEMO_SUPERVISOR):
                self.session.enter_card(str(card_of(self.hand.reader.shoe.dealt[-1])))
        if snapshot.state is State.BETTING and self.presses_button:
            self._press_button_after_pause(snapshot.round_no, now)
        if self.hand is not None:
            self.hand.draw_if_due()

    def _clear_reader_fault(self, held: bool) -> None:
        """A reader's fault line has no end line: the supervisor sees it reads again."""
        if held:
            with self.session.acting_as(DEMO_SUPERVISOR):
                self.session.clear_hold(
                    fault_hold(FaultKind.DEVICE_SPECIFIC), note="the reader reads again"
                )

    def _enter_unreadable_card(self, awaiting: bool, now: float) -> None:
        """The pit's supervisor enters a card whose re-read does not come (Art. 10)."""
        if not awaiting:
            self._misread_since = None
            return
        if self._misread_since is None:
            self._misread_since = now
        assert isinstance(self.core, FirmwareCore)
        unread = self.core.unread_card
        if unread is not None and now - self._misread_since >= SUPERVISOR_AFTER_S:
            self._misread_since = None
            with self.session.acting_as(DEMO_SUPERVISOR):
                self.session.enter_card(str(card_of(unread)))

    def _press_button_after_pause(self, round_no: int | None, now: float) -> None:
        if self._round_seen is None or self._round_seen[0] != round_no:
            self._round_seen = (round_no, now)
        waited = now - self._round_seen[1] >= self.pause_s * BETTING_PAUSE_CARDS
        if waited and self._button_for != round_no and self.core.press_button():
            self._button_for = round_no


def run_demo(
    settings: DemoSettings,
    observers: Iterable[Observer],
    on_session: Callable[[TableSession], None] | None = None,
    stop_requested: Callable[[], bool] = lambda: False,
) -> DemoResult:
    """Deal one shoe on a simulated device through the table's production code.

    With a journal that holds an open shoe, that shoe goes on where it stopped.
    on_session sees the session before it deals (its device, its recovered
    shoe); stop_requested, asked between steps, ends the run early (the reader
    went away), leaving the shoe open in the journal. Raises UserError for
    settings the simulator refuses, and the drivers' DriverError when the
    device cannot be opened.
    """
    if settings.protocol is not DemoProtocol.CARDSHOE:
        return _run_reader_demo(settings, observers, on_session, stop_requested)
    end = _ShoeEnd()
    with ExitStack() as stack:
        journal = stack.enter_context(demo_journal(settings))
        core = simulated_device(settings, previous_shoe_order(journal))
        took_over = continue_from_journal(core, journal, settings.config)
        url, usb_backend = stack.enter_context(attached(core, settings.transport))
        device = open_device(url, usb_backend=usb_backend)
        stack.enter_context(device)
        session = TableSession.open(settings.config, journal, device, [*observers, end])
        if on_session is not None:
            on_session(session)
        if not took_over:
            session.operate(
                COMMANDS["abandon-shoe"],
                reason="demo: the simulated machine that shuffled this shoe is gone",
            )
        dealer = DemoDealer(core, session, settings.card_interval_s, stop_requested)
        return _deal(settings, session, dealer, end, core.deck_set)


def _run_reader_demo(
    settings: DemoSettings,
    observers: Iterable[Observer],
    on_session: Callable[[TableSession], None] | None,
    stop_requested: Callable[[], bool],
) -> DemoResult:
    """run_demo with a card reader: it cannot take over an open shoe, which keeps no count
    and whose unread cards no reader remembers, so such a shoe is abandoned on the record."""
    config, protocol = settings.config, settings.protocol
    check_reader_settings(config, protocol, str(settings.transport), settings.shuffle)
    profile = reader_profile(config, protocol)
    end = _ShoeEnd()
    with ExitStack() as stack:
        journal = stack.enter_context(demo_journal(settings))
        reader = simulated_reader(protocol, profile, config, settings.seed, settings.inject)
        url, usb_backend = stack.enter_context(attached_reader(reader, str(settings.transport)))
        device = open_device(url, protocol=protocol.value, options=profile, usb_backend=usb_backend)
        stack.enter_context(device)
        session = TableSession.open(config, journal, device, [*observers, end])
        if on_session is not None:
            on_session(session)
        if recover(config, journal).model.shoe is not None:
            session.operate(
                COMMANDS["abandon-shoe"],
                reason="demo: a card reader keeps no count to take an open shoe over",
            )
        hand = ReaderHand(reader, device, session, settings.card_interval_s)
        dealer = DemoDealer(reader, session, settings.card_interval_s, stop_requested, hand=hand)
        return _deal(settings, session, dealer, end, None)


def _deal(
    settings: DemoSettings,
    session: TableSession,
    dealer: DemoDealer,
    end: _ShoeEnd,
    deck_set: int | None,
) -> DemoResult:
    pause = settings.card_interval_s * BETTING_PAUSE_CARDS
    session.run_shoe(
        deck_set=deck_set,
        rounds=settings.house_rounds,
        betting_time_s=pause if settings.automatic else None,
        on_step=dealer.on_step,
    )
    if dealer.held_for is not None and session.snapshot().shoe_id is not None:
        session.operate(
            COMMANDS["abandon-shoe"],
            reason=f"demo: the table is held ({dealer.held_for}); only a technician can clear it",
        )
    return DemoResult(end.event, dealer.held_for, session.device.counters())


class _ShoeEnd:
    """Hears how the shoe ended: reconciled at the end of run_shoe, or abandoned after it."""

    event: ShoeEnded | None = None

    def notify(self, event: object) -> None:
        if isinstance(event, ShoeEnded):
            self.event = event
