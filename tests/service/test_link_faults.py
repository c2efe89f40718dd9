"""Issue 11, the link's half: each fault reproduced through real parts and the fixed behaviour.

A real pseudo-terminal carries the simulator's bytes to the real driver, the
session journals into a real SQLite file; each test is named after its case.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.service_support import Table, running_service, simulated_table, wait_until
from support.session_support import (
    SIM_DECK_SET,
    journaled,
    session_on,
    simulated_device,
    table_config,
)

from cardshoe.controller.journal.store import Journal
from cardshoe.controller.procedure.facts import CardAssigned, TableEvent
from cardshoe.controller.procedure.machine import State
from cardshoe.controller.procedure.operator_commands import COMMANDS
from cardshoe.controller.procedure.table import HoldReason
from cardshoe.controller.service.pairing import KeyStore, staged_key_file
from cardshoe.controller.service.session import TableSession
from cardshoe.controller.service.session_records import DEVICE_REFUSED, DEVICE_RESYNC
from cardshoe.drivers.api.protocols import open_device
from cardshoe.drivers.errors import AuthenticationFailed
from cardshoe.drivers.protocol.auth import LinkKey, new_pairing_key
from cardshoe.drivers.protocol.framing import encode_frame
from cardshoe.drivers.protocol.message_codec import encode_message
from cardshoe.drivers.protocol.messages import Ack, Capability
from cardshoe.firmware_sim.attach_pty import serve_pty
from cardshoe.firmware_sim.devices import create_device

MANUAL = table_config(decks=1)
STEP_LIMIT = 400


class StopsAtRound:
    """Stops the session's run once a card of the given round has gone to a hand."""

    def __init__(self, round_no: int) -> None:
        self.round_no = round_no
        self.session: TableSession | None = None

    def notify(self, event: TableEvent) -> None:
        if isinstance(event, CardAssigned) and event.round_no == self.round_no and self.session:
            self.session.stop()


def step_until_held(session: TableSession, reason: str) -> None:
    for _ in range(STEP_LIMIT):
        if reason in session.snapshot().holds:
            return
        session.step(0.05)
    raise AssertionError(f"no {reason} hold; holds are {session.snapshot().holds}")


def test_case_7_a_wiped_device_is_resynchronised_by_one_journaled_clear(tmp_path: Path) -> None:
    """The device's counter and epoch start afresh under its serial: one regression hold,
    one clear journaled as a re-sync, no gap after it, and a restart deals on."""
    path = tmp_path / "journal.sqlite"
    core = simulated_device(MANUAL, seed=11)
    old_epoch = core.link.epoch
    with session_on(MANUAL, core, path, over_pty=True) as (session, _):
        stopper = StopsAtRound(2)
        stopper.session = session
        session.subscribe(stopper)
        assert session.run_shoe(deck_set=SIM_DECK_SET) is None
        journaled_before = session.journal.last_device_seq(core.serial_number)
        assert journaled_before is not None and journaled_before > 5
        core.wipe_memory()
        step_until_held(session, HoldReason.SEQUENCE_REGRESSION)
        session.clear_hold(HoldReason.SEQUENCE_REGRESSION)
        stopper.round_no = 4
        assert session.run_shoe() is None
        assert session.snapshot().holds == ()
    (resync,) = journaled(path, DEVICE_RESYNC)
    assert resync.payload == {
        "from_epoch": old_epoch,
        "to_epoch": core.link.epoch,
        "host_seq": journaled_before,
        "resumed_after": 0,
    }
    holds = [record.payload["reason"] for record in journaled(path, "hold.started")]
    assert holds.count(HoldReason.SEQUENCE_REGRESSION) == 1
    assert HoldReason.SEQUENCE_GAP not in holds
    with session_on(MANUAL, core, path, over_pty=True) as (session, _):
        for _ in range(20):
            session.step(0.05)
        assert session.snapshot().holds == ()
        assert session.state is not State.IDLE
    restarted = journaled(path, "session.started")[-1]
    assert restarted.payload["device"]["stream_epoch"] == core.link.epoch


def pair_in_process(table: Table) -> bytes:
    """Give the simulated shoe and the table's key folder the same fresh pairing key."""
    key = new_pairing_key()
    table.core.link.pairing_key = key
    path = KeyStore(table.folder / "keys").path_for(table.core.serial_number)
    with staged_key_file(path, LinkKey(key)) as commit:
        commit()
    return key


def test_case_10_one_replayed_auth_response_at_start_up_is_retried(tmp_path: Path) -> None:
    """Issue 11 case 10: one replayed AUTH_RESPONSE at the start-up challenge made
    `shoectl run` exit 3 at once; five in 120 s exhausted systemd's start limit."""
    with simulated_table(tmp_path) as table:
        pair_in_process(table)
        table.core.link.wire_faults.stale_auth_responses = 1
        with running_service(table, "--device-wait", "20") as service:
            service.wait_for_notification("READY=1", timeout=15)
            status = table.status()
            assert status["device"]["authenticated"]
            assert service.stop() == 0
    assert table.core.link.wire_faults.stale_auth_responses == 0
    assert journaled(table.journal_path, DEVICE_REFUSED) == []


def test_case_10_a_start_up_refusal_is_journaled(tmp_path: Path) -> None:
    """A device that never proves the key (here: paired with another one) is refused once
    device_wait is over, with one line, exit 3, and a journaled reason."""
    with simulated_table(tmp_path) as table:
        pair_in_process(table)
        table.core.link.pairing_key = new_pairing_key()
        with running_service(table, "--device-wait", "2") as service:
            code = service.process.wait(30)
            log = service.log_tail()
    assert code == 3, log
    assert "Traceback" not in log
    (refusal,) = journaled(table.journal_path, DEVICE_REFUSED)
    assert refusal.payload["kind"] == "device_fault"
    assert "did not prove it holds" in refusal.payload["detail"]


@pytest.mark.parametrize(
    "altered",
    [
        {"next_seq": 0xFFFFFF00},
        {"capabilities": Capability.AUTH_REQUIRED | Capability.DEALER_BUTTON},
        {"model": "CS-9"},
    ],
    ids=["next_seq", "gate-capability-cleared", "model"],
)
def test_case_8_a_hello_altered_on_a_paired_link_is_refused(altered: dict[str, object]) -> None:
    """Issue 11 case 8: only the serial and the firmware hash were bound to the key; a man in
    the middle's next_seq or cleared GATE left a paired table dealing nothing, silently."""
    key = new_pairing_key()
    core = create_device("cs-1", seed=3, pairing_key=key)
    core.link.wire_faults.altered_hello = dict(altered)
    keys = {core.serial_number: LinkKey(key)}.get
    with serve_pty(core) as pty:
        with pytest.raises(AuthenticationFailed, match="vouched for"):
            open_device(str(pty.link), timeout=2, keys=keys)
        core.link.wire_faults.altered_hello.clear()
        with open_device(str(pty.link), timeout=2, keys=keys) as device:
            described = device.describe()
            assert described["authenticated"]
            assert "GATE" in described["device_capabilities"]


@pytest.mark.parametrize("overcount", [1, 253], ids=["over-counted-by-one", "claims-255"])
def test_case_9_a_double_feed_that_cannot_complete_holds_instead_of_waiting(
    tmp_path: Path, overcount: int
) -> None:
    """Issue 11 case 9: a double feed announced as 255 cards, or over-counted by one, waited
    behind a locked gate for cards that could not come: dealing, no hold, no alarm."""
    path = tmp_path / "journal.sqlite"
    core = simulated_device(MANUAL, seed=5, inject=("double-feed@round=2",))
    core.feed_overcount = overcount
    with session_on(MANUAL, core, path, over_pty=True) as (session, _):
        stopper = StopsAtRound(3)
        stopper.session = session
        session.subscribe(stopper)
        for _ in range(STEP_LIMIT):
            if session.snapshot().holds:
                break
            if session.state is State.IDLE:
                session.start_shoe(deck_set=SIM_DECK_SET)
                session.operate(COMMANDS["shoe-loaded"])
                session.operate(COMMANDS["cut-done"])
            session.step(0.05)
        assert session.snapshot().holds == (HoldReason.FEED_INCOMPLETE,)
        session.clear_hold(HoldReason.FEED_INCOMPLETE)
        assert session.run_shoe() is None  # deals on, into round 3
        assert session.snapshot().holds == ()
    (finding,) = journaled(path, "host.finding")
    assert finding.payload["hold"] == HoldReason.FEED_INCOMPLETE
    assert "device_fault" in {record.payload["kind"] for record in journaled(path, "alarm")}


def test_case_16_auto_shoe_waits_for_a_freshly_loaded_pack_shoe_after_shoe(
    tmp_path: Path,
) -> None:
    """Issue 11 case 16: --auto-shoe on a manual shoe opened the next shoe at once on the
    cards left behind the cut card, ended it unreconciled and left a third in burning."""
    with simulated_table(tmp_path, decks=1) as table:
        table.core.dealer.reload_after_s = 0.3
        with running_service(table, "--auto-shoe") as service:
            service.wait_for_notification("READY=1")
            wait_until(
                lambda: len(journaled(table.journal_path, "shoe.ended")) >= 2,
                "two shoes dealt",
                timeout=60,
            )
            assert service.stop() == 0
    ended = [record.payload for record in journaled(table.journal_path, "shoe.ended")]
    assert all(payload["reconciled"] for payload in ended), ended
    started = journaled(table.journal_path, "shoe.started")
    assert len(started) in (len(ended), len(ended) + 1)


def test_case_11_a_card_dropped_by_a_forged_ack_holds_the_table(tmp_path: Path) -> None:
    """Issue 11 case 11: on an unpaired link a dropped CARD and a forged ACK left a dealt card
    unjournaled until the next handshake. The device's count now shows it: a hold."""
    path = tmp_path / "journal.sqlite"
    core = simulated_device(MANUAL, seed=13)
    with session_on(MANUAL, core, path, over_pty=True) as (session, _):
        stopper = StopsAtRound(2)
        stopper.session = session
        session.subscribe(stopper)
        assert session.run_shoe(deck_set=SIM_DECK_SET) is None
        target = core.link.next_seq
        core.link.wire_faults.drop.add(target)  # its first transmission is lost ...
        forged = False
        for _ in range(STEP_LIMIT):
            if HoldReason.CARDS_UNJOURNALED in session.snapshot().holds:
                break
            if not forged and any(event.seq == target for event in core.link.pending):
                core.feed(encode_frame(encode_message(Ack(target))))  # ... and a forger acks it
                forged = True
            session.step(0.02)
        assert forged
        assert HoldReason.CARDS_UNJOURNALED in session.snapshot().holds
        for _ in range(STEP_LIMIT):  # the operator clears what only a person may clear
            snapshot = session.snapshot()
            if snapshot.round_no is not None and snapshot.round_no >= 4 and not snapshot.holds:
                break
            for hold in snapshot.holds:
                session.clear_hold(hold)
            session.step(0.02)
        assert session.snapshot().round_no >= 4 and session.snapshot().holds == ()
    with Journal.open_readonly(path) as journal:
        events = {r.device_seq for r in journal.records() if r.kind.startswith("device.")}
    assert target not in events  # the card is lost; the hold is how the table knows
    (finding,) = journaled(path, "host.finding")
    assert finding.payload["hold"] == HoldReason.CARDS_UNJOURNALED
