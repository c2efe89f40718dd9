"""The session against the simulator (sim://, in process): irregularities injected by the
simulator, holds, restarts, and refused commands."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.session_support import (
    FAST_LINK,
    SIM_DECK_SET,
    ConfirmsFaceUp,
    DealerButton,
    journaled,
    rounds_as_the_rules_engine_plays_them,
    session_on,
    simulated_device,
    table_config,
)

from cardshoe.controller.config import DeviceConfig, GameConfig, TableConfig
from cardshoe.controller.errors import UserError
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.procedure.facts import (
    Alarm,
    CardAssigned,
    HoldEnded,
    HoldStarted,
    TableEvent,
)
from cardshoe.controller.procedure.holds import HoldReason
from cardshoe.controller.procedure.machine import State
from cardshoe.controller.procedure.operator_commands import COMMANDS
from cardshoe.controller.service.session import ProcedureRefused, TableSession
from cardshoe.drivers.api.protocols import open_device
from cardshoe.firmware_sim.core import FirmwareCore
from cardshoe.firmware_sim.devices import create_device
from cardshoe.firmware_sim.faults import parse_injection
from cardshoe.firmware_sim.profiles import get_profile
from cardshoe.firmware_sim.sim_url import publish, release

MANUAL = table_config(decks=1)
AUTOMATIC = table_config(decks=1, automatic=True)


def run(tmp_path: Path, config: TableConfig, inject: str, **run_options: object) -> Path:
    """Run a whole shoe with one injected fault; the journal's path."""
    path = tmp_path / "journal.sqlite"
    core = simulated_device(config, seed=5, inject=(inject,))
    with session_on(config, core, path) as (session, _):
        session.subscribe(ConfirmsFaceUp(session))
        options = {"rounds": 6, "betting_time_s": 0} if not config.uses_cut_card_and_burn else {}
        ended = session.run_shoe(deck_set=SIM_DECK_SET, **(options | run_options))  # type: ignore[arg-type]
    assert ended is not None
    return path


def voids(path: Path) -> dict[int, str]:
    return {record.round_no: record.payload["reason"] for record in journaled(path, "round.void")}  # type: ignore[misc]


def irregularities(path: Path) -> list[tuple[int | None, str, str]]:
    return [
        (record.round_no, record.payload["code"], record.payload["consequence"])
        for record in journaled(path, "irregularity")
    ]


def alarm_kinds(path: Path) -> set[str]:
    return {record.payload["kind"] for record in journaled(path, "alarm")}


def results(path: Path) -> list[int]:
    return [record.round_no for record in journaled(path, "round.result")]  # type: ignore[misc]


def test_a_foreign_card_from_the_simulator_voids_its_round_only(tmp_path: Path) -> None:
    path = run(tmp_path, MANUAL, "foreign-card@round=2")
    assert voids(path) == {2: "foreign_card"}
    assert (2, "foreign_card", "void_round") in irregularities(path)
    assert "foreign_card" in alarm_kinds(path)
    assert 1 in results(path) and 3 in results(path)
    assert journaled(path, "shoe.ended")[0].payload["reconciled"]
    rounds_as_the_rules_engine_plays_them(path, MANUAL)


def test_a_duplicate_physical_card_voids_its_round_with_a_tamper_alarm(tmp_path: Path) -> None:
    path = run(tmp_path, MANUAL, "duplicate-card@round=3")
    assert voids(path) == {3: "duplicate_card"}
    assert "tamper" in alarm_kinds(path)


def test_a_double_feed_in_the_initial_deal_voids_the_round(tmp_path: Path) -> None:
    path = run(tmp_path, MANUAL, "double-feed@round=2")
    assert voids(path) == {2: "double_feed"}
    set_aside = journaled(path, "card.set_aside")
    assert [record.round_no for record in set_aside] == [2, 2]
    assert journaled(path, "shoe.ended")[0].payload["reconciled"]


def test_a_double_feed_on_the_automatic_machine_voids_the_round_and_returns_it(
    tmp_path: Path,
) -> None:
    path = run(tmp_path, AUTOMATIC, "double-feed@round=2")
    assert voids(path) == {2: "double_feed"}
    ended = journaled(path, "shoe.ended")[0].payload
    assert ended["reconciled"] and ended["returned"] == ended["dealt"]


def test_a_reversed_card_in_the_manual_shoe_is_recorded_and_play_goes_on(tmp_path: Path) -> None:
    path = run(tmp_path, MANUAL, "reversed-card@round=2")
    assert voids(path) == {}
    assert (2, "face_up_card", "record") in irregularities(path)
    assert 2 in results(path)


def test_a_face_down_card_from_the_machine_holds_until_the_dealer_turns_it(
    tmp_path: Path,
) -> None:
    path = run(tmp_path, AUTOMATIC, "face-down@round=2")
    assert voids(path) == {}
    assert (2, "face_down_card", "hold") in irregularities(path)
    holds = [(r.kind, r.payload["reason"]) for r in journaled(path, "hold.started")]
    assert holds == [("hold.started", "face_down_card")]
    assert [r.payload["reason"] for r in journaled(path, "hold.ended")] == ["face_down_card"]
    assert results(path) == [1, 2, 3, 4, 5, 6]
    rounds_as_the_rules_engine_plays_them(path, AUTOMATIC)


def test_too_few_cards_to_finish_a_round_voids_it_and_ends_the_shoe(tmp_path: Path) -> None:
    path = run(tmp_path, MANUAL, "out-of-cards@round=2")
    assert voids(path) == {2: "insufficient_cards"}
    assert results(path) == [1]
    assert not journaled(path, "shoe.ended")[0].payload["reconciled"]
    assert "reconciliation" in alarm_kinds(path)


@pytest.mark.parametrize("fault", ["jam", "door-open"])
def test_a_device_fault_holds_the_round_and_it_resumes_where_it_was(
    tmp_path: Path, fault: str
) -> None:
    path = run(tmp_path, MANUAL, f"{fault}@round=2,for=0.05")
    reason = "fault." + fault.replace("-", "_")
    started = journaled(path, "hold.started")
    assert [(r.round_no, r.payload["reason"], r.payload["held_state"]) for r in started] == [
        (2, reason, "dealing")
    ]
    assert [r.payload["reason"] for r in journaled(path, "hold.ended")] == [reason]
    assert voids(path) == {}
    rounds_as_the_rules_engine_plays_them(path, MANUAL)


def test_an_unplug_mid_round_loses_and_repeats_no_card(tmp_path: Path) -> None:
    path = run(tmp_path, MANUAL, "unplug@round=2,for=0.1")
    assert [r.payload["reason"] for r in journaled(path, "hold.started")] == ["link_lost"]
    assert voids(path) == {}
    with Journal.open_readonly(path) as journal:
        seqs = [r.device_seq for r in journal.records() if r.kind.startswith("device.")]
    assert seqs == list(range(1, len(seqs) + 1))
    ended = journaled(path, "shoe.ended")[0].payload
    assert ended["reconciled"] and ended["dealt"] + ended["burned"] == ended["device_cards_dealt"]
    rounds_as_the_rules_engine_plays_them(path, MANUAL)


def drive_gateless_shoe(session: TableSession, core: object, *, extra_after_round: int) -> None:
    """A shoe without gate or button: the dealer pulls when a card is due, closes bets by
    command, and once pulls a card too many after a round is complete."""
    pulled_extra = False
    while session.state is not State.IDLE:
        session.step(0.01)
        snapshot = session.snapshot()
        taken = snapshot.dealt + snapshot.burned
        if core.status().cards_dealt != taken:  # type: ignore[attr-defined]
            continue
        if snapshot.state is State.BETTING:
            if snapshot.rounds_finished == extra_after_round and not pulled_extra:
                pulled_extra = core.pull_card()  # type: ignore[attr-defined]
            elif snapshot.rounds_finished >= 3:
                session.operate(COMMANDS["end-shoe"])
            else:
                session.operate(COMMANDS["no-more-bets"])
        elif snapshot.card_due is not None:
            core.pull_card()  # type: ignore[attr-defined]


def test_a_card_drawn_after_the_round_is_complete_is_burned_and_the_round_stands(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.sqlite"
    core = create_device("cs-1-basic", seed=6, decks=1)
    with session_on(MANUAL, core, path) as (session, _):
        session.start_shoe(deck_set=SIM_DECK_SET)
        session.operate(COMMANDS["shoe-loaded"])
        session.operate(COMMANDS["cut-done"])
        drive_gateless_shoe(session, core, extra_after_round=1)
    assert (2, "card_after_round", "burn") in irregularities(path)
    assert results(path) == [1, 2, 3]
    assert voids(path) == {4: "shoe_closed"}
    burned = [r.payload["reason"] for r in journaled(path, "card.burned")]
    assert burned.count("irregular") == 1
    assert journaled(path, "shoe.ended")[0].payload["reconciled"]


def test_a_card_outside_a_shoe_during_a_hold_is_recorded(tmp_path: Path) -> None:
    approved = get_profile("cs-1-basic").firmware_hash.hex()
    config = TableConfig(
        table_id="T1",
        game=GameConfig(decks=1),
        device=DeviceConfig(allowed_firmware_hashes=(approved,)),
    )
    path = tmp_path / "journal.sqlite"
    altered = parse_injection("bad-firmware-hash@card=1")
    core = create_device("cs-1-basic", seed=7, decks=1, injections=[altered])
    with session_on(config, core, path) as (session, _):
        assert not core.pull_card()  # the image is altered instead, and the self-test reruns
        while HoldReason.FIRMWARE_NOT_APPROVED not in session.snapshot().holds:
            session.step(0.05)
        with pytest.raises(ProcedureRefused, match="new-shoe is not possible now: the table is on"):
            session.start_shoe()
        assert core.pull_card()
        while not journaled(path, "irregularity"):
            session.step(0.05)
    codes = {code for _, code, _ in irregularities(path)}
    assert codes == {"card_outside_round", "card_during_hold"}
    assert "firmware" in alarm_kinds(path)
    assert journaled(path, "command.start_shoe")


class StopsInRound:
    """Stops the session's run when the first card of a given round has gone to a hand."""

    def __init__(self, round_no: int) -> None:
        self.round_no = round_no
        self.session: TableSession | None = None

    def notify(self, event: TableEvent) -> None:
        if isinstance(event, CardAssigned) and event.round_no == self.round_no and self.session:
            self.session.stop()


def run_until(path: Path, url: str, core: FirmwareCore, round_no: int) -> TableSession:
    """Open the journal and the device, run the shoe into the deal of round `round_no`."""
    stopper = StopsInRound(round_no)
    with (
        Journal.open(path, table_id="T1", create=True) as journal,
        open_device(url, timing=FAST_LINK) as device,
    ):
        session = TableSession.open(MANUAL, journal, device, [stopper, DealerButton(core)])
        stopper.session = session
        assert session.run_shoe(deck_set=SIM_DECK_SET) is None
    return session


@pytest.fixture
def published() -> Iterator[tuple[FirmwareCore, str]]:
    core = simulated_device(MANUAL, seed=8)
    url = publish(core, "published-table-device")
    yield core, url
    release("published-table-device")


def test_a_journal_restored_from_an_old_copy_holds_journal_behind_device(
    tmp_path: Path, published: tuple[FirmwareCore, str]
) -> None:
    """The device's acknowledged events are not all in the journal: the round under way is
    void, the table holds with an alarm until a person clears it, then the shoe goes on."""
    core, url = published
    path, copy = tmp_path / "journal.sqlite", tmp_path / "restored.sqlite"
    run_until(path, url, core, round_no=2)
    shutil.copy(path, copy)
    run_until(path, url, core, round_no=3)
    with (
        Journal.open(copy, table_id="T1") as journal,
        open_device(url, timing=FAST_LINK) as device,
    ):
        session = TableSession.open(MANUAL, journal, device, [DealerButton(core)])
        assert HoldReason.JOURNAL_BEHIND_DEVICE in session.snapshot().holds
        assert session.snapshot().held_state is State.DEALING
        session.clear_hold(HoldReason.JOURNAL_BEHIND_DEVICE)
        ended = session.run_shoe()
    assert ended is not None
    assert "sequence_gap" in alarm_kinds(copy)
    assert voids(copy) == {2: "journal_behind_device"}
    (behind,) = journaled(copy, "host.journal_behind_device")
    assert behind.payload["device_acked_seq"] == behind.device_seq > behind.payload["journaled_seq"]
    with Journal.open_readonly(copy) as journal:
        later = [
            r.device_seq
            for r in journal.records(after_id=behind.id)
            if r.kind.startswith("device.")
        ]
    assert later == list(range(behind.device_seq + 1, behind.device_seq + 1 + len(later)))


def test_a_restarted_session_resumes_the_open_shoe_from_the_journal(
    tmp_path: Path, published: tuple[FirmwareCore, str]
) -> None:
    core, url = published
    path = tmp_path / "journal.sqlite"
    first = run_until(path, url, core, round_no=2)
    assert first.state is State.DEALING
    with (
        Journal.open(path, table_id="T1", create=True) as journal,
        open_device(url, timing=FAST_LINK) as device,
    ):
        second = TableSession.open(MANUAL, journal, device, [DealerButton(core)])
        assert second.recovered.inputs_replayed > 10
        assert second.recovered.mismatches == ()
        assert second.state is State.DEALING
        assert second.snapshot().player == first.snapshot().player
        ended = second.run_shoe()
    assert ended is not None and ended.reconciled
    with Journal.open_readonly(path) as journal:
        seqs = [r.device_seq for r in journal.records() if r.kind.startswith("device.")]
    assert seqs == list(range(1, len(seqs) + 1))
    assert len(journaled(path, "session.started")) == 2
    rounds_as_the_rules_engine_plays_them(path, MANUAL)


def test_a_command_the_procedure_refuses_is_journaled_and_raised(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    core = simulated_device(MANUAL, seed=10)
    with session_on(MANUAL, core, path) as (session, dealer):
        refusal = "no-more-bets is not possible now: no shoe is open (possible now: new-shoe"
        with pytest.raises(ProcedureRefused, match=re.escape(refusal)):
            session.operate(COMMANDS["no-more-bets"])
        assert session.state is State.IDLE
    assert journaled(path, "command.close_bets")
    (refused,) = journaled(path, "command.refused")
    assert refused.payload["command"] == "no-more-bets"
    assert not [event for event in dealer.seen if isinstance(event, Alarm)]


def test_a_device_of_the_other_kind_is_refused(tmp_path: Path) -> None:
    core = simulated_device(AUTOMATIC, seed=11)
    with (
        pytest.raises(UserError, match=r"device\.kind is shoe"),
        session_on(MANUAL, core, tmp_path / "journal.sqlite"),
    ):
        pytest.fail("the session must refuse an automatic machine for a manual-shoe table")


def test_observers_hear_holds_after_the_journal_has_them(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    core = simulated_device(MANUAL, seed=12, inject=("jam@round=1,for=0.05",))
    heard: list[tuple[str, int]] = []

    class ChecksJournal:
        def notify(self, event: TableEvent) -> None:
            if isinstance(event, HoldStarted | HoldEnded):
                heard.append((event.KIND, len(journaled(path, event.KIND))))

    with session_on(MANUAL, core, path) as (session, _):
        session.subscribe(ChecksJournal())
        session.run_shoe(deck_set=SIM_DECK_SET)
    assert heard == [("hold.started", 1), ("hold.ended", 1)]
