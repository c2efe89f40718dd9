"""Recovery: replaying a real journal file rebuilds exactly the state the table was in."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.table_inputs import DECK_SET, Device, tagged_shoe

from cardshoe.controller.config import (
    BurnPolicy,
    ConfigError,
    DeviceConfig,
    DeviceMode,
    GameConfig,
    ShoeProcedure,
    TableConfig,
)
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.procedure.facts import Alarm, AlarmKind, TableIdle
from cardshoe.controller.procedure.inputs import DeviceCount
from cardshoe.controller.procedure.operator_commands import (
    CloseBets,
    ConfirmFaceUp,
    EndShoe,
    StartShoe,
)
from cardshoe.controller.procedure.table import TableModel
from cardshoe.controller.service.recovery import journaled_apply, recover, replay_start
from cardshoe.drivers.api.events import FaultKind, Orientation

SERIAL = "SN0001"
MANUAL = TableConfig(
    table_id="T1", game=GameConfig(demo_rounds=1), shoe=ShoeProcedure(burn=BurnPolicy.FIRST_CARD)
)
AUTOMATIC = TableConfig(table_id="T1", device=DeviceConfig(kind=DeviceMode.AUTO))


def manual_inputs() -> list[object]:
    """A manual shoe with a fault, a double feed, a reversed card and a late card in it."""
    device = Device()
    shoe = iter(tagged_shoe(8, seed=21))
    items: list[object] = [StartShoe("S1", DECK_SET), device.button(), device.button()]
    items += [device.card(next(shoe)) for _ in range(11)]
    for round_no in range(6):
        items.append(device.button())
        if round_no == 1:
            items += device.double_feed([next(shoe), next(shoe)])
            continue
        if round_no == 2:
            items.append(device.fault(FaultKind.DOOR_OPEN))
            items.append(device.card(next(shoe), orientation=Orientation.FACE_UP))
            items.append(device.fault_cleared(FaultKind.DOOR_OPEN))
        items += [device.card(next(shoe)) for _ in range(6)]
    items.append(device.cut_card())
    items += [device.card(next(shoe)) for _ in range(6)]
    return items


def auto_inputs() -> list[object]:
    device = Device(automatic=True)
    shoe = iter(tagged_shoe(8, seed=22))
    items: list[object] = [StartShoe("A1", DECK_SET), device.shuffled(416), CloseBets()]
    items += [device.card(next(shoe)) for _ in range(3)]
    items.append(device.card(next(shoe), orientation=Orientation.FACE_DOWN))
    items += [ConfirmFaceUp(), device.card(next(shoe)), device.card(next(shoe))]
    items += [device.returned(6), EndShoe(), DeviceCount(6, 416)]
    return items


def journal_inputs(path: Path, config: TableConfig, items: list[object]) -> TableModel:
    """Journal and apply inputs as the session does: one transaction per input."""
    model = TableModel(config)
    with Journal.open(path, table_id=config.table_id, create=True) as journal:
        for item in items:
            with journal.transaction() as transaction:
                journaled_apply(model, item, transaction, SERIAL)
    return model


def state_of(model: TableModel) -> tuple[object, ...]:
    current = model.round
    round_state = None
    if current is not None:
        round_state = (current.number, current.demo, current.void_reason, current.cards)
        round_state += (current.deal.dealt,)
    return (model.state, model.held_state, model.holds, model.shoe, round_state)


@pytest.mark.parametrize(
    ("config", "make_inputs"), [(MANUAL, manual_inputs), (AUTOMATIC, auto_inputs)]
)
def test_recovery_after_any_input_continues_exactly_as_if_nothing_happened(
    tmp_path: Path, config: TableConfig, make_inputs: object
) -> None:
    items = make_inputs()  # type: ignore[operator]
    reference = TableModel(config)
    reference_facts = [reference.apply(item) for item in items]
    for stop in range(len(items) + 1):
        path = tmp_path / f"journal-{stop}.sqlite"
        interrupted = journal_inputs(path, config, items[:stop])
        with Journal.open(path, table_id=config.table_id, create=True) as journal:
            recovered = recover(config, journal)
        assert recovered.mismatches == ()
        assert state_of(recovered.model) == state_of(interrupted)
        later = [recovered.model.apply(item) for item in items[stop:]]
        assert later == reference_facts[stop:]
        assert state_of(recovered.model) == state_of(reference)


def test_replay_starts_after_the_latest_idle_table(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    items = auto_inputs()
    journal_inputs(path, AUTOMATIC, [*items, StartShoe("A2", DECK_SET)])
    with Journal.open(path, table_id="T1", create=True) as journal:
        idle = [record.id for record in journal.records(kinds=[TableIdle.KIND])]
        assert replay_start(journal) == idle[-1]
        recovered = recover(AUTOMATIC, journal)
    assert recovered.inputs_replayed == 1
    assert recovered.model.shoe_id == "A2"


def test_a_fact_the_inputs_do_not_cause_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    journal_inputs(path, MANUAL, manual_inputs()[:5])
    with Journal.open(path, table_id="T1", create=True) as journal:
        with journal.transaction() as transaction:
            alarm = Alarm(AlarmKind.TAMPER, "written by hand")
            transaction.append(
                alarm.KIND, alarm.payload(), shoe_id="S1", round_no=None, device_serial=SERIAL
            )
        recovered = recover(MANUAL, journal)
    assert len(recovered.mismatches) == 1
    assert "written by hand" in recovered.mismatches[0]


def test_an_open_shoe_refuses_other_game_options(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    journal_inputs(path, MANUAL, manual_inputs()[:5])
    changed = TableConfig(table_id="T1", shoe=ShoeProcedure(burn=BurnPolicy.FIRST_CARD))
    with (
        Journal.open(path, table_id="T1", create=True) as journal,
        pytest.raises(ConfigError, match="S1"),
    ):
        recover(changed, journal)


def test_every_record_carries_table_shoe_round_and_device(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    journal_inputs(path, MANUAL, manual_inputs())
    with Journal.open(path, table_id="T1", create=True) as journal:
        records = list(journal.records())
    assert {record.table_id for record in records} == {"T1"}
    assert {record.device_serial for record in records} == {SERIAL}
    assert all(record.shoe_id == "S1" for record in records[1:])
    cards = [record for record in records if record.kind == "card.assigned"]
    assert cards and all(record.round_no == record.payload["round_no"] for record in cards)
    device_events = [record for record in records if record.kind.startswith("device.")]
    assert [record.device_seq for record in device_events] == list(range(1, len(device_events) + 1))
