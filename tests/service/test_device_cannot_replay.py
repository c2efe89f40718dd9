"""A device without acknowledged delivery, restarted in the middle of a shoe (issue #19,
item 6): the table holds device_cannot_replay until a supervisor confirms the layout, by
entering the card the reader's lost line named, voiding the round, or clearing the hold."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.session_support import journaled, rounds_as_the_rules_engine_plays_them
from support.tiny_dealer import CONFIG, PtyDealer
from support.tiny_protocol import install_tiny_family

from cardshoe.controller.journal.store import Journal
from cardshoe.controller.procedure.holds import HoldReason
from cardshoe.controller.procedure.machine import State
from cardshoe.controller.procedure.operator_commands import COMMANDS
from cardshoe.controller.service.session import TableSession

SUPERVISOR = {"uid": 1000, "user": "sup", "role": "supervisor"}


@pytest.fixture(autouse=True)
def tiny_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    site.mkdir()
    install_tiny_family(site)
    monkeypatch.syspath_prepend(str(site))


def deal_into_round_two(journal_path: Path, dealer: PtyDealer) -> None:
    """The first life of the controller: it stops with round 2's third card due."""
    with (
        Journal.open(journal_path, table_id="T1", create=True) as journal,
        dealer.open_reader() as device,
    ):
        session = TableSession.open(CONFIG, journal, device)

        def step() -> None:
            current = session.model.round
            if session.model.round_no == 2 and current is not None and len(current.cards) == 2:
                session.stop()
            else:
                dealer.deal(session)

        assert session.run_shoe(betting_time_s=0, on_step=step) is None


@pytest.mark.parametrize("confirmation", ["enter-card", "void-round", "clear-hold"])
def test_a_restart_mid_shoe_holds_until_a_supervisor_confirms_the_layout(
    tmp_path: Path, confirmation: str
) -> None:
    journal_path, dealer = tmp_path / "journal.sqlite", PtyDealer(seed=5)
    deal_into_round_two(journal_path, dealer)
    lost = None if confirmation == "clear-hold" else dealer.deal_unseen()
    with Journal.open(journal_path, table_id="T1") as journal, dealer.open_reader() as device:
        session = TableSession.open(CONFIG, journal, device)
        assert session.model.holds == [HoldReason.DEVICE_CANNOT_REPLAY]
        assert session.state is State.HELD and session.model.card_due() is None
        assert {"enter-card", "void-round", "clear-hold"} <= set(session.model.possible_commands())
        with session.acting_as(SUPERVISOR):
            if confirmation == "enter-card":
                assert lost is not None
                session.enter_card(lost)
                dealer.unrecorded -= 1  # the table holds that card now
            elif confirmation == "void-round":
                session.operate(COMMANDS["void-round"], reason="misdeal")
            else:
                session.clear_hold(HoldReason.DEVICE_CANNOT_REPLAY, "nothing was dealt meanwhile")
        assert session.model.holds == []
        ended = session.run_shoe(betting_time_s=0, on_step=lambda: dealer.deal(session))
    assert ended is not None and ended.reconciled
    rounds_as_the_rules_engine_plays_them(journal_path, CONFIG)
    corrected = journaled(journal_path, "card.corrected")
    voided = [record.round_no for record in journaled(journal_path, "round.void")]
    if confirmation == "enter-card":
        (entered,) = corrected
        assert entered.round_no == 2 and entered.payload["card"] == lost
        assert entered.payload["irregularity"] == HoldReason.DEVICE_CANNOT_REPLAY
        assert entered.payload["by"]["user"] == "sup"
        assert voided == []
    else:
        assert corrected == []
        assert voided == ([2] if confirmation == "void-round" else [])


def test_a_burn_card_that_left_unheard_is_entered_into_its_burn(tmp_path: Path) -> None:
    """The controller was down as the start-of-shoe burn's card left: the supervisor enters
    it, it counts in the burn (card.burned, physical id entered), and the shoe deals on."""
    journal_path, dealer = tmp_path / "journal.sqlite", PtyDealer(seed=8)
    with (
        Journal.open(journal_path, table_id="T1", create=True) as journal,
        dealer.open_reader() as device,
    ):
        session = TableSession.open(CONFIG, journal, device)

        def step() -> None:
            if session.state is State.BURNING:
                session.stop()
            else:
                dealer.deal(session)

        assert session.run_shoe(betting_time_s=0, on_step=step) is None
    lost = dealer.deal_unseen()
    with Journal.open(journal_path, table_id="T1") as journal, dealer.open_reader() as device:
        session = TableSession.open(CONFIG, journal, device)
        assert session.model.holds == [HoldReason.DEVICE_CANNOT_REPLAY]
        assert "enter-card" in session.model.possible_commands()
        with session.acting_as(SUPERVISOR):
            session.enter_card(lost)
        dealer.unrecorded -= 1
        assert session.model.holds == [] and session.state is State.BETTING
        ended = session.run_shoe(betting_time_s=0, on_step=lambda: dealer.deal(session))
    assert ended is not None and ended.reconciled and ended.burned == 1
    rounds_as_the_rules_engine_plays_them(journal_path, CONFIG)
    (burned,) = journaled(journal_path, "card.burned")
    assert burned.payload["card"] == lost and burned.payload["physical_id"] == "entered"
    assert burned.payload["burn_remaining"] == 0
    (command,) = journaled(journal_path, "command.enter_card")
    assert command.payload["operator"]["user"] == "sup"
