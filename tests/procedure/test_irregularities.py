"""Every irregularity of Macau Art. 4 and 10 and 7 Up section 5, fed as decoded device events."""

from __future__ import annotations

import pytest
from support.table_inputs import AUTOMATIC, DECK_SET, MANUAL, Device, Table, card_id, dealing, ids

from cardshoe.controller.config import (
    BurnPolicy,
    GameConfig,
    ShoeProcedure,
    TableConfig,
)
from cardshoe.controller.procedure.facts import (
    Alarm,
    AlarmKind,
    Burned,
    BurnReason,
    CardAssigned,
    CardSetAside,
    IrregularityFound,
    RefusedCommand,
    RoundResult,
    RoundVoided,
)
from cardshoe.controller.procedure.holds import HoldReason
from cardshoe.controller.procedure.irregularities import (
    IRREGULARITIES,
    Consequence,
    Irregularity,
    inspect_card,
)
from cardshoe.controller.procedure.machine import State
from cardshoe.controller.procedure.operator_commands import ClearHold, CloseBets, ConfirmFaceUp
from cardshoe.controller.rules.cards import parse_cards
from cardshoe.drivers.api.events import (
    DeviceIdentity,
    DeviceKind,
    FaultKind,
    LinkLost,
    LinkRestored,
    Orientation,
    SequenceGap,
)


def codes(table: Table) -> list[tuple[str, str]]:
    return [(found.code, found.consequence) for found in table.events(IrregularityFound)]


def alarm_kinds(table: Table) -> list[AlarmKind]:
    return [alarm.kind for alarm in table.events(Alarm)]


def test_every_reason_code_has_a_rule() -> None:
    assert set(IRREGULARITIES) == set(Irregularity)


def test_a_foreign_card_voids_the_round_and_earlier_results_stand() -> None:
    table = dealing()
    table.draw(ids("2S 7H 3S KH 9D"))
    table.feed(CloseBets())
    table.draw([card_id(parse_cards("AS")[0], deck=1, deck_set=DECK_SET + 1)])
    assert table.events(RoundVoided)[0].reason == Irregularity.FOREIGN_CARD
    assert codes(table) == [("foreign_card", "void_round")]
    assert AlarmKind.FOREIGN_CARD in alarm_kinds(table)
    assert len(table.events(RoundResult)) == 1
    assert table.state == State.BETTING


def test_an_untagged_card_in_a_tagged_shoe_is_foreign() -> None:
    table = dealing()
    table.draw([card_id(parse_cards("AS")[0], deck=0, deck_set=0)])
    assert table.events(RoundVoided)[0].reason == Irregularity.FOREIGN_CARD


def test_the_same_physical_card_twice_voids_the_round_with_a_tamper_alarm() -> None:
    table = dealing()
    table.draw(ids("AS", deck=3) + ids("AS", deck=3))
    assert table.events(RoundVoided)[0].reason == Irregularity.DUPLICATE_CARD
    assert AlarmKind.TAMPER in alarm_kinds(table)


def test_more_copies_than_the_decks_hold_voids_the_round_with_a_tamper_alarm() -> None:
    config = TableConfig(
        game=GameConfig(decks=2), shoe=ShoeProcedure(burn=BurnPolicy.FIXED, burn_fixed=1)
    )
    table = dealing(config)
    untagged = card_id(parse_cards("AS")[0], deck=0, deck_set=0)
    table.model.shoe.deck_set = 0  # type: ignore[union-attr]
    table.draw([untagged, untagged])
    assert not table.events(RoundVoided)
    table.draw([untagged])
    assert table.events(RoundVoided)[0].reason == Irregularity.EXCESS_COPIES
    assert AlarmKind.TAMPER in alarm_kinds(table)


def test_a_double_feed_in_the_initial_deal_voids_the_round_and_counts_every_card() -> None:
    table = dealing()
    table.draw(ids("2S"))
    table.feed(*table.device.double_feed(ids("7H 3S 4D")))
    assert table.state == State.BETTING
    void = table.events(RoundVoided)[0]
    assert void.reason == Irregularity.DOUBLE_FEED
    assert len(void.cards) == 4
    assert len(table.events(CardSetAside)) == 3
    assert codes(table) == [("double_feed", "void_round")]
    assert table.model.shoe.dealt == 4  # type: ignore[union-attr]


def test_a_double_feed_during_the_burn_burns_every_card_of_the_group() -> None:
    table = Table(TableConfig(shoe=ShoeProcedure(burn=BurnPolicy.FIXED, burn_fixed=3)))
    table.open_manual_shoe()
    table.feed(*table.device.double_feed(ids("2S 3S")))
    assert table.state == State.BURNING
    table.draw(ids("4S"))
    assert [burn.burn_remaining for burn in table.events(Burned)] == [2, 1, 0]
    assert table.state == State.BETTING
    assert codes(table) == [("double_feed", "burn")]


def test_a_card_after_the_round_is_complete_is_burned_and_the_round_stands() -> None:
    table = dealing()
    table.draw(ids("2S 7H 3S KH 9D"))
    assert table.state == State.BETTING
    table.draw(ids("QS"))
    assert len(table.events(RoundResult)) == 1 and not table.events(RoundVoided)
    assert table.events(Burned)[-1].reason is BurnReason.IRREGULAR
    assert codes(table) == [("card_after_round", "burn")]


def test_a_face_down_card_from_the_automatic_machine_holds_until_confirmed() -> None:
    table = dealing(AUTOMATIC)
    table.draw(ids("2S 7H 3S"))
    table.feed(table.device.card(ids("KH")[0], orientation=Orientation.FACE_DOWN))
    assert table.state == State.HELD
    assert table.model.holds == [HoldReason.FACE_DOWN_CARD]
    assert table.model.card_due() is None
    assert codes(table) == [("face_down_card", "hold")]
    table.feed(ConfirmFaceUp())
    assert table.state == State.DEALING
    table.draw(ids("9D"))
    assert table.state == State.RETURNING
    assert table.events(RoundResult)[0].banker_total == 7


def test_a_face_down_card_that_completes_the_round_waits_for_the_confirmation() -> None:
    table = dealing(AUTOMATIC)
    table.draw(ids("2S 7H 3S KH"))
    table.feed(table.device.card(ids("9D")[0], orientation=Orientation.FACE_DOWN))
    assert table.state == State.HELD and not table.events(RoundResult)
    table.feed(ConfirmFaceUp())
    assert table.events(RoundResult) and table.state == State.RETURNING


def test_a_face_up_card_in_a_manual_shoe_is_valid_and_recorded() -> None:
    table = dealing()
    table.feed(table.device.card(ids("2S")[0], orientation=Orientation.FACE_UP))
    table.draw(ids("7H 3S KH 9D"))
    assert codes(table) == [("face_up_card", "record")]
    assert not table.events(RoundVoided) and table.events(RoundResult)


def test_too_few_cards_to_finish_a_round_voids_it() -> None:
    table = dealing()
    table.draw(ids("2S 7H 3S"))
    table.feed(table.device.shoe_empty(5))
    assert table.events(RoundVoided)[0].reason == Irregularity.INSUFFICIENT_CARDS
    assert table.state == State.SHOE_ENDED


def test_a_card_outside_any_round_is_burned_and_recorded() -> None:
    table = Table(MANUAL)
    table.draw(ids("2S"))
    assert codes(table) == [("card_outside_round", "burn")]
    table.open_manual_shoe()
    table.feed(Device().card(ids("3S")[0]))
    assert table.state == State.BETTING


def test_a_card_during_a_hold_is_placed_in_its_order_and_recorded() -> None:
    table = dealing()
    table.feed(table.device.fault(FaultKind.DOOR_OPEN))
    table.draw(ids("2S"))
    assert table.events(CardAssigned)[0].to.value == "player"
    assert ("card_during_hold", "record") in codes(table)
    table.feed(table.device.fault_cleared(FaultKind.DOOR_OPEN))
    table.draw(ids("7H 3S KH 9D"))
    assert table.events(RoundResult) and not table.events(RoundVoided)


def test_a_misread_card_during_a_hold_keeps_its_place_until_it_is_re_read() -> None:
    table = dealing()
    table.feed(table.device.fault(FaultKind.JAM))
    table.draw([None])
    assert table.state == State.HELD
    table.feed(table.device.fault_cleared(FaultKind.JAM))
    assert table.state == State.HELD and table.model.holds == [HoldReason.MISREAD_CARD]
    table.draw(ids("2S"))
    assert table.state == State.DEALING and not table.events(RoundVoided)
    assert table.events(CardAssigned)[0].to.value == "player"


def test_a_misread_card_in_a_round_holds_it_and_during_the_burn_is_simply_burned() -> None:
    table = Table(MANUAL)
    table.open_manual_shoe()
    table.draw([None])
    assert table.state == State.BETTING and codes(table) == [("misread_card", "burn")]
    table.feed(CloseBets())
    table.draw([None])
    assert table.state == State.HELD and codes(table)[-1] == ("misread_card", "hold")
    assert not table.events(RoundVoided)


def test_a_sequence_gap_voids_the_round_under_way_and_holds_until_cleared() -> None:
    table = dealing()
    table.draw(ids("2S 7H"))
    table.feed(SequenceGap(expected=5, got=7))
    assert table.state == State.HELD
    assert AlarmKind.SEQUENCE_GAP in alarm_kinds(table)
    table.feed(table.device.fault(FaultKind.JAM), table.device.fault_cleared(FaultKind.JAM))
    assert table.state == State.HELD
    table.feed(ClearHold(HoldReason.SEQUENCE_GAP, accepted_seq=6))
    assert table.events(RoundVoided)[0].reason == Irregularity.SEQUENCE_GAP
    assert table.state == State.BETTING


def test_a_lost_link_holds_and_its_restoration_resumes() -> None:
    table = dealing()
    table.feed(LinkLost("unplugged"))
    assert table.state == State.HELD and table.model.card_due() is None
    identity = DeviceIdentity(DeviceKind.SHOE, "", "", "", bytes(32), "cardshoe", "1.3", None, 4, 3)
    table.feed(LinkRestored(identity))
    assert table.state == State.DEALING


@pytest.mark.parametrize(
    ("orientation", "automatic", "expected"),
    [
        (Orientation.FACE_DOWN, False, ()),
        (Orientation.FACE_UP, False, (Irregularity.FACE_UP_CARD,)),
        (Orientation.FACE_UP, True, ()),
        (Orientation.FACE_DOWN, True, (Irregularity.FACE_DOWN_CARD,)),
        (Orientation.UNKNOWN, True, ()),
        (Orientation.UNKNOWN, False, ()),
    ],
)
def test_orientation_is_checked_against_the_device_kind(
    orientation: Orientation, automatic: bool, expected: tuple[Irregularity, ...]
) -> None:
    event = Device().card(ids("AS")[0], orientation=orientation)
    inspection = inspect_card(
        event,
        automatic=automatic,
        deck_set=DECK_SET,
        decks=8,
        seen=set(),
        copies={},
        starts_feed_group=False,
    )
    assert inspection.findings == expected
    assert all(IRREGULARITIES[code].consequence is not Consequence.VOID_ROUND for code in expected)


def test_clearing_a_hold_that_is_not_operator_cleared_is_a_violation() -> None:
    table = dealing()
    table.feed(table.device.fault(FaultKind.DOOR_OPEN))
    (fact,) = table.feed(ClearHold("fault.door_open"))
    assert fact.event == RefusedCommand(
        "clear-hold",
        "clear-hold 'fault.door_open' is not possible now: no hold a person clears is active",
    )
    assert table.state == State.HELD


def test_a_fault_whose_end_the_device_never_reports_is_cleared_by_a_person() -> None:
    """A line reader's fault line: no FaultCleared will come, so the hold is a supervisor's
    to clear; a door the device reports closing stays the device's to end."""
    table = dealing()
    table.feed(table.device.fault(FaultKind.DOOR_OPEN))
    table.feed(table.device.fault(FaultKind.DEVICE_SPECIFIC, reports_end=False))
    assert table.model.clearable_holds() == ["fault.device_specific"]
    assert "clear-hold" in table.model.possible_commands()
    table.feed(ClearHold("fault.device_specific"))
    assert table.model.holds == ["fault.door_open"] and table.state == State.HELD
    assert table.model.clearable_holds() == []
    (refused,) = table.feed(ClearHold("fault.door_open"))
    assert isinstance(refused.event, RefusedCommand)
    table.feed(table.device.fault_cleared(FaultKind.DOOR_OPEN))
    assert table.model.holds == [] and table.state == State.DEALING
