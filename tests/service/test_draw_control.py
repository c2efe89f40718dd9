"""Draw control through the real service: the gate of a simulated manual shoe on a pty.

A released card belongs to the round it was released for. When the table stops wanting it
before any dealer drew it, the gate is locked over it and the release taken back, so the
next card due is released again instead of waited for behind the service's own lock.
"""

from __future__ import annotations

from pathlib import Path

from support.service_support import running_service, simulated_table, wait_until
from support.session_support import assert_every_event_journaled_once

from cardshoe.controller.service.control_client import request
from cardshoe.drivers.protocol.messages import GateMode


def test_a_round_voided_with_its_card_released_releases_the_next_rounds_card(
    tmp_path: Path,
) -> None:
    with (
        simulated_table(tmp_path) as table,
        running_service(table, "--betting-time", "600") as service,
    ):
        service.wait_for_notification("READY=1")
        socket = table.socket_path
        request(socket, "new-shoe", shoe_id="V1")
        request(socket, "shoe-loaded")
        request(socket, "cut-done")
        wait_until(lambda: table.status()["state"] == "betting", "round 1 open")
        table.core.dealer.auto = False
        request(socket, "no-more-bets")
        wait_until(lambda: table.core.gate is GateMode.RELEASE_ONE, "round 1's first card released")
        assert table.core.pull_card()
        wait_until(lambda: table.status()["dealt"] == 1, "round 1's first card journaled")
        wait_until(lambda: table.core.gate is GateMode.RELEASE_ONE, "its second card released")
        taken = len(table.core.shoe.dealt)
        request(socket, "void-round", reason="misdeal", note="second card not drawn")
        wait_until(lambda: table.status()["round_no"] == 2, "round 2 open")
        wait_until(lambda: table.core.gate is GateMode.LOCKED, "the gate locked between rounds")
        request(socket, "no-more-bets")
        wait_until(lambda: table.core.gate is GateMode.RELEASE_ONE, "round 2's first card released")
        table.core.dealer.auto = True
        wait_until(lambda: table.status()["round_no"] == 3, "round 2 dealt")
        assert len(table.core.shoe.dealt) > taken
        assert service.stop() == 0, service.log_tail()
    assert_every_event_journaled_once(table.journal_path)
