"""Whole shoes through the readers a casino can buy: a line reader on a real pty with the
profile of docs/examples/line-shoe.toml, and a HID keyboard reader on pyusb's real core.

Neither reader has a gate, so the test is the dealer: it presses the button when a round
opens and draws a card whenever the table shows one is due and has taken the last one.
Every round must equal the rules engine's, every line must be journaled once, and the shoe
must reconcile. A card line when no card is due must be judged as a manual shoe's card is.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from support.driver_testing import EXAMPLE_PROFILE, KEYBOARD_KEYS, example_line_table
from support.session_support import (
    assert_every_event_journaled_once,
    journaled,
    rounds_as_the_rules_engine_plays_them,
    table_config,
)

from cardshoe.controller.config import TableConfig
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.procedure.facts import (
    HoldStarted,
    IrregularityFound,
    RoundOpened,
    RoundResult,
    RoundVoided,
    TableEvent,
)
from cardshoe.controller.procedure.holds import HoldReason, fault_hold
from cardshoe.controller.procedure.machine import State
from cardshoe.controller.procedure.operator_commands import COMMANDS
from cardshoe.controller.service.session import TableSession
from cardshoe.drivers.api.device_link import DeviceLink
from cardshoe.drivers.api.events import CardId, FaultKind
from cardshoe.drivers.api.protocols import find_family, open_device
from cardshoe.drivers.line.checksum import Checksum
from cardshoe.firmware_sim.attach_pty import serve_pty
from cardshoe.firmware_sim.devices import create_device
from cardshoe.firmware_sim.faults import parse_injection
from cardshoe.firmware_sim.hid_reader import HID_READER_PID, HidReader
from cardshoe.firmware_sim.line_reader import LineReader, format_for
from cardshoe.firmware_sim.usb_backend import SimUsbBackend

SHOES = [("punto-banco", 8), ("seven-up", 6)]


@dataclass
class ReaderDealer:
    """The dealer at a gateless shoe, watching the table's display."""

    reader: LineReader
    link: DeviceLink | None = None
    session: TableSession | None = None
    seen: list[TableEvent] = field(default_factory=list)

    def notify(self, event: TableEvent) -> None:
        self.seen.append(event)
        if isinstance(event, RoundOpened):
            self.reader.press_button()

    def __post_init__(self) -> None:
        self.lines_before = self.reader.counts.lines
        """What the reader wrote before this link was open: never this link's to read."""

    def step(self) -> None:
        """Draw the next card once the table wants one and has every line so far."""
        assert self.link is not None and self.session is not None
        counters = self.link.counters()
        if counters["lines"] < self.reader.counts.lines - self.lines_before:
            return
        if counters["acked_seq"] < counters["delivered_seq"]:
            return
        if self.session.model.card_due() is not None:
            self.reader.pull_card()


@contextmanager
def line_reader_link(reader: LineReader) -> Iterator[DeviceLink]:
    options = find_family("line").parse_options(example_line_table(), EXAMPLE_PROFILE.parent)
    assert options.checksum is Checksum.NMEA
    with (
        serve_pty(reader) as pty,
        open_device(str(pty.link), protocol="line", options=options) as link,
    ):
        yield link


@contextmanager
def hid_reader_link(reader: HidReader) -> Iterator[DeviceLink]:
    table = {k: v for k, v in example_line_table().items() if k not in KEYBOARD_KEYS}
    options = find_family("hid").parse_options(table, EXAMPLE_PROFILE.parent)
    url = f"usb://1209:{HID_READER_PID:04x}/{reader.serial_number}"
    with (
        SimUsbBackend(reader) as backend,
        open_device(url, protocol="hid", options=options, usb_backend=backend) as link,
    ):
        yield link


def deal_a_shoe(
    config: TableConfig, reader: LineReader, link: DeviceLink, journal_path: Path
) -> None:
    dealer = ReaderDealer(reader, link)
    with Journal.open(journal_path, table_id=config.table_id, create=True) as journal:
        session = TableSession.open(config, journal, link, [dealer])
        dealer.session = session
        ended = session.run_shoe(on_step=dealer.step, poll_s=0.01)
    assert ended is not None and ended.reconciled
    results = [event for event in dealer.seen if isinstance(event, RoundResult)]
    assert len(results) == ended.rounds > 20
    assert not [event for event in dealer.seen if isinstance(event, RoundVoided)]
    cards_left = len(reader.shoe.cards)
    assert ended.dealt + ended.burned == reader.counts.cards == len(reader.shoe.dealt)
    assert cards_left <= config.shoe.cut_card_depth
    rounds_as_the_rules_engine_plays_them(journal_path, config)
    assert_every_event_journaled_once(journal_path)
    assert len(journaled(journal_path, "shoe.last_round")) == 1


@pytest.mark.parametrize(("game", "decks"), SHOES)
def test_a_whole_shoe_through_a_line_reader_on_a_pty(tmp_path: Path, game: str, decks: int) -> None:
    config = table_config(game, decks=decks)
    options = find_family("line").parse_options(example_line_table(), EXAMPLE_PROFILE.parent)
    reader = LineReader(
        format=format_for(options),
        seed=decks,
        decks=decks,
        cut_card_depth=config.shoe.cut_card_depth,
    )
    with line_reader_link(reader) as link:
        deal_a_shoe(config, reader, link, tmp_path / "journal.sqlite")


@pytest.mark.parametrize(("game", "decks"), SHOES)
def test_a_whole_shoe_through_a_hid_reader_on_pyusb(tmp_path: Path, game: str, decks: int) -> None:
    config = table_config(game, decks=decks)
    options = find_family("line").parse_options(example_line_table(), EXAMPLE_PROFILE.parent)
    reader = HidReader(
        format=format_for(options),
        seed=decks + 1,
        decks=decks,
        cut_card_depth=config.shoe.cut_card_depth,
    )
    with hid_reader_link(reader) as link:
        deal_a_shoe(config, reader, link, tmp_path / "journal.sqlite")


@dataclass
class ExtraCard:
    """Deals round 1 (bets closed by command), then draws one card more than it asked for."""

    pull: Callable[[], bool]
    session: TableSession | None = None
    seen: list[TableEvent] = field(default_factory=list)
    pulled: int = 0

    def notify(self, event: TableEvent) -> None:
        self.seen.append(event)

    def on_step(self) -> None:
        assert self.session is not None
        if any(isinstance(event, IrregularityFound) for event in self.seen):
            self.session.stop()
            return
        snapshot = self.session.snapshot()
        shoe = self.session.model.shoe
        if shoe is None or sum(shoe.copies.values()) < self.pulled:
            return  # the last card is not on the table yet
        if snapshot.state is State.BETTING and snapshot.round_no == 1:
            self.session.operate(COMMANDS["no-more-bets"])
        elif self.session.model.card_due() is not None or any(
            isinstance(event, RoundResult) for event in self.seen
        ):
            self.pulled += self.pull()


def extra_card_irregularity(
    config: TableConfig, link: DeviceLink, pull: Callable[[], bool], path: Path
) -> IrregularityFound:
    with Journal.open(path, table_id=config.table_id, create=True) as journal:
        dealer = ExtraCard(pull)
        session = dealer.session = TableSession.open(config, journal, link, [dealer])
        session.run_shoe(on_step=dealer.on_step, poll_s=0.01)
    (found,) = [event for event in dealer.seen if isinstance(event, IrregularityFound)]
    return found


def test_a_card_when_none_is_due_is_the_irregularity_a_manual_shoe_gets(tmp_path: Path) -> None:
    config = table_config("punto-banco", decks=1)
    options = find_family("line").parse_options(example_line_table(), EXAMPLE_PROFILE.parent)
    reader = LineReader(format=format_for(options), seed=2, decks=1)
    with line_reader_link(reader) as link:
        from_reader = extra_card_irregularity(
            config, link, reader.pull_card, tmp_path / "line.sqlite"
        )
    shoe = create_device("cs-1-basic", seed=2, decks=1)
    with serve_pty(shoe) as pty, open_device(str(pty.link)) as link:
        from_shoe = extra_card_irregularity(config, link, shoe.pull_card, tmp_path / "shoe.sqlite")
    judged = (from_reader.code, from_reader.consequence, from_reader.round_no)
    assert judged == (from_shoe.code, from_shoe.consequence, from_shoe.round_no)
    assert judged == ("card_after_round", "burn", 2)  # round 2 was open, its bets not closed


def test_a_burst_of_bad_lines_holds_the_table_and_is_journaled_once(tmp_path: Path) -> None:
    config = table_config("punto-banco", decks=1)
    options = find_family("line").parse_options(example_line_table(), EXAMPLE_PROFILE.parent)
    burst = options.bad_lines.burst_lines
    garbled = [parse_injection(f"garbled-line@card={card}") for card in range(4, 4 + burst)]
    reader = LineReader(format=format_for(options), seed=5, decks=1, injections=garbled)
    path = tmp_path / "journal.sqlite"
    with line_reader_link(reader) as link:
        dealer = ReaderDealer(reader, link)

        def deal_until_held() -> None:
            if any(isinstance(event, HoldStarted) for event in dealer.seen):
                session.stop()
            else:
                dealer.step()

        with Journal.open(path, table_id=config.table_id, create=True) as journal:
            session = dealer.session = TableSession.open(config, journal, link, [dealer])
            session.run_shoe(on_step=deal_until_held, poll_s=0.01)
            assert session.snapshot().holds == (fault_hold(FaultKind.MISREAD),)
        assert link.counters()["bad_bad_checksum"] == burst
    (violation,) = [
        record for record in journaled(path, "alarm") if record.payload["kind"] == "device_fault"
    ]
    assert "1 bad line (bad checksum)" in violation.payload["detail"]


def test_a_line_reader_restarted_mid_shoe_holds_until_the_lost_card_is_entered(
    tmp_path: Path,
) -> None:
    """The reader wrote a card while the controller was down: nobody read the line."""
    config = table_config("punto-banco", decks=1)
    options = find_family("line").parse_options(example_line_table(), EXAMPLE_PROFILE.parent)
    reader = LineReader(format=format_for(options), seed=6, decks=1)
    path = tmp_path / "journal.sqlite"
    with serve_pty(reader) as pty:
        with (
            Journal.open(path, table_id=config.table_id, create=True) as journal,
            open_device(str(pty.link), protocol="line", options=options) as link,
        ):
            dealer = ReaderDealer(reader, link)
            session = dealer.session = TableSession.open(config, journal, link, [dealer])

            def deal_into_round_two() -> None:
                current = session.model.round
                if session.model.round_no == 2 and current is not None and len(current.cards) == 2:
                    session.stop()
                else:
                    dealer.step()

            assert session.run_shoe(on_step=deal_into_round_two, poll_s=0.01) is None
        assert reader.pull_card()  # round 2's third card, drawn while no controller listens
        lost = str(CardId(reader.shoe.dealt[-1].rank, int(reader.shoe.dealt[-1].suit)))
        with (
            Journal.open(path, table_id=config.table_id) as journal,
            open_device(str(pty.link), protocol="line", options=options) as link,
        ):
            dealer = ReaderDealer(reader, link)
            session = dealer.session = TableSession.open(config, journal, link, [dealer])
            assert session.model.holds == [HoldReason.DEVICE_CANNOT_REPLAY]
            with session.acting_as({"uid": 1000, "user": "sup", "role": "supervisor"}):
                session.enter_card(lost)
            assert session.model.holds == []
            ended = session.run_shoe(on_step=dealer.step, poll_s=0.01)
    assert ended is not None and ended.reconciled
    assert ended.dealt + ended.burned == len(reader.shoe.dealt)
    rounds_as_the_rules_engine_plays_them(path, config)
    (entered,) = journaled(path, "card.corrected")
    assert (entered.round_no, entered.payload["card"]) == (2, lost)


def test_a_fault_line_holds_until_a_supervisor_clears_it_and_the_shoe_deals_on(
    tmp_path: Path,
) -> None:
    """The reader prints a fault line in round 2 and nothing when the fault passes: the
    table holds, and a supervisor, not the reader, ends the hold."""
    config = table_config("punto-banco", decks=1)
    options = find_family("line").parse_options(example_line_table(), EXAMPLE_PROFILE.parent)
    reader = LineReader(format=format_for(options), seed=4, decks=1)
    path = tmp_path / "journal.sqlite"
    held = fault_hold(FaultKind.DEVICE_SPECIFIC)
    with line_reader_link(reader) as link:
        dealer = ReaderDealer(reader, link)
        faulted = cleared = False
        with Journal.open(path, table_id=config.table_id, create=True) as journal:
            session = dealer.session = TableSession.open(config, journal, link, [dealer])

            def deal_through_a_fault() -> None:
                nonlocal faulted, cleared
                current = session.model.round
                if held in session.model.holds:
                    snapshot = session.snapshot()
                    assert snapshot.clearable_holds == (held,)
                    assert "clear-hold" in snapshot.possible
                    with session.acting_as({"uid": 1000, "user": "sup", "role": "supervisor"}):
                        session.clear_hold(held, "the reader reads again")
                    cleared = True
                elif not faulted and current is not None and current.number == 2:
                    if len(current.cards) == 2:
                        reader.report_fault(17)
                        faulted = True
                    else:
                        dealer.step()
                else:
                    dealer.step()

            ended = session.run_shoe(on_step=deal_through_a_fault, poll_s=0.01)
    assert faulted and cleared
    assert ended is not None and ended.reconciled
    rounds_as_the_rules_engine_plays_them(path, config)
    (raised,) = journaled(path, "device.fault_raised")
    assert raised.payload["detail"] == 17 and raised.payload["reports_end"] is False
    (clear,) = journaled(path, "command.clear_hold")
    assert clear.payload["reason"] == held
    assert not journaled(path, "round.void")


def test_the_ack_reply_follows_each_journaled_line(tmp_path: Path) -> None:
    config = table_config("punto-banco", decks=1)
    table = example_line_table() | {"ack": "OK\r\n"}
    options = find_family("line").parse_options(table, EXAMPLE_PROFILE.parent)
    reader = LineReader(format=format_for(options), seed=3, decks=1, ack=b"OK\r\n")
    path = tmp_path / "journal.sqlite"
    with (
        serve_pty(reader) as pty,
        open_device(str(pty.link), protocol="line", options=options) as link,
    ):
        dealer = ReaderDealer(reader, link)
        with Journal.open(path, table_id=config.table_id, create=True) as journal:
            session = dealer.session = TableSession.open(config, journal, link, [dealer])
            ended = session.run_shoe(on_step=dealer.step, poll_s=0.01)
        assert ended is not None and ended.reconciled
        written = link.counters()["acks_written"]
        wait_until_acks = time.monotonic() + 5
        while reader.counts.acks < written and time.monotonic() < wait_until_acks:
            time.sleep(0.01)
    with Journal.open_readonly(path) as journal:
        journaled_lines = [r for r in journal.records() if r.kind.startswith("device.")]
    assert written == len(journaled_lines) == reader.counts.lines == reader.counts.acks


READER_LINKS = {"line-pty": (LineReader, line_reader_link), "hid-usb": (HidReader, hid_reader_link)}


@pytest.mark.parametrize("family", list(READER_LINKS))
def test_a_reader_unplugged_mid_shoe_holds_when_back_until_the_lost_card_is_entered(
    tmp_path: Path, family: str
) -> None:
    """The cable comes out as card 20 leaves the shoe, so its line is lost; the reader is back
    half a second later. Nothing resends that card: once the link is back, the table holds
    (device_cannot_replay) until the supervisor enters it, and the shoe goes on to reconcile."""
    config = table_config("punto-banco", decks=1)
    options = find_family("line").parse_options(example_line_table(), EXAMPLE_PROFILE.parent)
    make_reader, open_link = READER_LINKS[family]
    unplug = parse_injection("unplug@card=20,for=0.5")
    reader = make_reader(format=format_for(options), seed=7, decks=1, injections=[unplug])
    path = tmp_path / "journal.sqlite"
    entered: list[str] = []
    with open_link(reader) as link:
        dealer = ReaderDealer(reader, link)

        def supervise_then_deal() -> None:
            assert dealer.session is not None
            if HoldReason.DEVICE_CANNOT_REPLAY in dealer.session.model.holds:
                lost = reader.shoe.dealt[-1]
                entered.append(str(CardId(lost.rank, int(lost.suit))))
                with dealer.session.acting_as({"uid": 1000, "user": "sup", "role": "supervisor"}):
                    dealer.session.enter_card(entered[-1])
            dealer.step()

        with Journal.open(path, table_id=config.table_id, create=True) as journal:
            session = dealer.session = TableSession.open(config, journal, link, [dealer])
            ended = session.run_shoe(on_step=supervise_then_deal, poll_s=0.01)
        assert link.counters()["link_losses"] == 1
    assert ended is not None and ended.reconciled
    assert ended.dealt + ended.burned == len(reader.shoe.dealt) == reader.counts.cards
    rounds_as_the_rules_engine_plays_them(path, config)
    assert_every_event_journaled_once(path)
    (finding,) = journaled(path, "host.finding")
    assert finding.payload["hold"] == HoldReason.DEVICE_CANNOT_REPLAY
    assert "does not resend what it sent while its link was down" in finding.payload["detail"]
    (lost, restored) = journaled(path, "link.lost"), journaled(path, "link.restored")
    assert len(lost) == len(restored) == 1 and lost[0].id < restored[0].id < finding.id
    (corrected,) = journaled(path, "card.corrected")
    assert [corrected.payload["card"]] == entered
    assert corrected.payload["irregularity"] == HoldReason.DEVICE_CANNOT_REPLAY
