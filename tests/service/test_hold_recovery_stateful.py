"""Issue 11 case 17: every hold has a way out.

Hypothesis drives a real table session, on a real journal file, against the
simulated shoe (sim://, the real driver and link), through whatever device
states the simulator can produce: a door opened, a jam, a pulled cable, a
wiped memory, a double feed the reader over-counts, foreign and duplicate
cards, and dealing in between. After any such history, the operator's
procedure below (close the door, free the jam, plug the cable back, clear the
holds only a person may clear) must bring the table back to dealing or idle
with no hold left, and the journal must verify. A hold with no way out, or a
table that waits silently, fails the property.
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule
from support.session_support import (
    FAST_LINK,
    SIM_DECK_SET,
    DealerButton,
    simulated_device,
    table_config,
)

from cardshoe.controller.journal.store import Journal
from cardshoe.controller.procedure.holds import OPERATOR_CLEARED_HOLDS, HoldReason, fault_hold
from cardshoe.controller.procedure.machine import State
from cardshoe.controller.procedure.operator_commands import COMMANDS
from cardshoe.controller.service.session import TableSession
from cardshoe.drivers.api.events import FaultKind
from cardshoe.drivers.api.protocols import open_device
from cardshoe.firmware_sim.faults import parse_injection
from cardshoe.firmware_sim.sim_url import publish, register_sim_url_handler, release

CONFIG = table_config(decks=1)
RECOVERY_STEPS = 600
CALM_STEPS = 50
"""Settled means no hold and a dealing state for this many steps (1 s): long enough for
every event the device still holds, and for the feed watch, to have spoken."""
SETTLED = {State.IDLE, State.BETTING, State.DEALING, State.BURNING, State.ROUND_BURN}
_names = itertools.count(1)


class HoldRecovery(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        register_sim_url_handler()
        self.folder = Path(tempfile.mkdtemp(prefix="cardshoe-holds-"))
        self.core = simulated_device(CONFIG, seed=next(_names))
        self.core.dealer.reload_after_s = None
        self.name = f"hold-recovery-{next(_names)}"
        url = publish(self.core, self.name)
        self.journal = Journal.open(
            self.folder / "journal.sqlite", table_id=CONFIG.table_id, create=True
        )
        self.device = open_device(url, timing=FAST_LINK)
        self.session = TableSession.open(
            CONFIG, self.journal, self.device, [DealerButton(self.core)]
        )
        self.session.start_shoe(deck_set=SIM_DECK_SET)
        self.session.operate(COMMANDS["shoe-loaded"])
        self.session.operate(COMMANDS["cut-done"])

    def _inject(self, text: str) -> None:
        """An injection at the next card to leave the shoe."""
        card = len(self.core.shoe.dealt) + 1
        self.core.plan.injections.append(parse_injection(text.format(card=card)))

    @rule(steps=st.integers(1, 40))
    def deal(self, steps: int) -> None:
        for _ in range(steps):
            self.session.step(0.01)

    @rule()
    def open_the_door(self) -> None:
        self.core.open_door()

    @rule()
    def a_jam(self) -> None:
        self._inject("jam@card={card},for=30")

    @rule()
    def pull_the_cable(self) -> None:
        self.core.unplug()

    @rule()
    def wipe_the_memory(self) -> None:
        self.core.wipe_memory()

    @rule(overcount=st.sampled_from([0, 1, 200]))
    def a_double_feed(self, overcount: int) -> None:
        self.core.feed_overcount = overcount
        self._inject("double-feed@card={card}")

    @rule(kind=st.sampled_from(["foreign-card", "duplicate-card"]))
    def an_irregular_card(self, kind: str) -> None:
        self._inject(kind + "@card={card}")

    def _operator(self, hold: str) -> None:
        """What the person at the table does about one hold."""
        if hold == HoldReason.LINK_LOST:
            self.core.replug()
        elif hold == fault_hold(FaultKind.DOOR_OPEN):
            self.core.close_door()
        elif hold == fault_hold(FaultKind.JAM):
            self.core.clear_jam()
        elif hold in OPERATOR_CLEARED_HOLDS:
            self.session.clear_hold(hold)

    def teardown(self) -> None:
        try:
            calm = 0
            for _ in range(RECOVERY_STEPS):
                snapshot = self.session.snapshot()
                calm = calm + 1 if not snapshot.holds and snapshot.state in SETTLED else 0
                if calm >= CALM_STEPS:
                    break
                for hold in snapshot.holds:
                    self._operator(hold)
                self.session.step(0.02)
            snapshot = self.session.snapshot()
            assert snapshot.holds == (), f"no way out of {snapshot.holds}"
            assert snapshot.state in SETTLED, snapshot.state
            assert self.journal.verify().ok
        finally:
            self.device.close()
            self.journal.close()
            release(self.name)
            shutil.rmtree(self.folder, ignore_errors=True)


HoldRecovery.TestCase.settings = settings(
    max_examples=12,
    stateful_step_count=8,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_case_17_every_hold_has_an_operator_way_out = HoldRecovery.TestCase
