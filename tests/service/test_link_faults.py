"""Issue 11, the link's half: each fault reproduced through real parts and the fixed behaviour.

A real pseudo-terminal carries the simulator's bytes to the real driver, the
session journals into a real SQLite file; each test is named after its case.
"""

from __future__ import annotations

from pathlib import Path

from support.session_support import (
    SIM_DECK_SET,
    journaled,
    session_on,
    simulated_device,
    table_config,
)

from cardshoe.controller.procedure.facts import CardAssigned, TableEvent
from cardshoe.controller.procedure.machine import State
from cardshoe.controller.procedure.table import HoldReason
from cardshoe.controller.service.session import DEVICE_RESYNC, TableSession

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
