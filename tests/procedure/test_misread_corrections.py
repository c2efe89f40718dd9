"""Art. 10: a misread card due to a hand is corrected by a re-read or a supervisor's entry.

Fed as decoded device events and host commands, the procedure's real inputs.
"""

from __future__ import annotations

from support.table_inputs import AUTOMATIC, DECK_SET, MANUAL, Table, card_id, dealing, ids

from cardshoe.controller.config import (
    BurnPolicy,
    ShoeProcedure,
    TableConfig,
)
from cardshoe.controller.procedure.corrections import VoidReason
from cardshoe.controller.procedure.facts import (
    Alarm,
    AlarmKind,
    CardAssigned,
    CardCorrected,
    CardSetAside,
    CorrectionMethod,
    HoldEnded,
    IrregularityFound,
    RefusedCommand,
    RoundResult,
    RoundVoided,
    ShoeEnded,
)
from cardshoe.controller.procedure.holds import HoldReason
from cardshoe.controller.procedure.irregularities import Irregularity
from cardshoe.controller.procedure.machine import State
from cardshoe.controller.procedure.operator_commands import (
    AbandonShoe,
    ClearHold,
    CloseBets,
    EndShoe,
    EnterCard,
    VoidRound,
)
from cardshoe.controller.procedure.table import TableModel
from cardshoe.controller.rules.cards import parse_card
from cardshoe.controller.rules.hands import Hand
from cardshoe.drivers.api.events import ReadFlag, SequenceGap

SUPERVISOR = {"uid": 0, "user": "root", "role": "supervisor"}
ROUND = "2S 7H 3S KH 9D"
"""Player 2S 3S 9D (4), Banker 7H KH (7): the Player draws, the Banker stands."""


def awaiting(table: Table) -> None:
    assert table.state == State.HELD and table.model.holds == [HoldReason.MISREAD_CARD]
    assert table.model.card_due() is None


def test_a_misread_card_holds_the_table_with_what_to_do_and_keeps_its_place() -> None:
    table = dealing()
    table.draw([None])
    awaiting(table)
    (found,) = table.events(IrregularityFound)
    assert (found.code, found.consequence) == ("misread_card", "hold")
    assert "re-read the card" in found.detail and "enter-card" in found.detail
    assert "void-round" in found.detail
    assert not table.events(Alarm) and not table.events(RoundVoided)
    assert table.model.shoe is not None and table.model.shoe.dealt == 1


def test_the_re_read_card_goes_to_the_hand_it_was_due_and_is_counted_once() -> None:
    table = dealing()
    table.draw([None])
    table.draw(ids("2S"))
    assigned = table.events(CardAssigned)[0]
    assert (assigned.card, assigned.to) == (parse_card("2S"), Hand.PLAYER)
    (corrected,) = table.events(CardCorrected)
    assert corrected.correction is CorrectionMethod.REREAD and corrected.by is None
    assert (corrected.irregularity, corrected.to) == ("misread_card", Hand.PLAYER)
    assert corrected.physical_id == str(ids("2S")[0])
    assert table.events(HoldEnded)[-1].reason == HoldReason.MISREAD_CARD
    assert table.state == State.DEALING
    table.draw(ids("7H 3S KH 9D"))
    (result,) = table.events(RoundResult)
    assert result.player == tuple(parse_card(c) for c in ("2S", "3S", "9D"))
    shoe = table.model.shoe
    assert shoe is not None and shoe.dealt == 5 and shoe.copies[parse_card("2S")] == 1
    table.feed(EndShoe())
    table.count(1 + 5, 416 - 6)
    assert table.events(ShoeEnded)[0].reconciled


def test_a_third_card_misread_is_re_read_into_the_third_card_place() -> None:
    table = dealing()
    table.draw(ids("2S 7H 3S KH"))
    table.draw([None])
    awaiting(table)
    table.draw(ids("9D"))
    (result,) = table.events(RoundResult)
    assert result.player_total == 4 and result.banker_total == 7


def test_a_re_read_that_is_unreadable_again_keeps_the_table_holding() -> None:
    table = dealing()
    table.draw([None, None])
    awaiting(table)
    assert [f.consequence for f in table.events(IrregularityFound)] == ["hold", "hold"]
    assert table.model.shoe is not None and table.model.shoe.dealt == 1
    table.draw(ids(ROUND))
    assert table.events(RoundResult)


def test_a_re_read_card_that_is_foreign_voids_the_round_and_counts_one_intruder() -> None:
    table = dealing()
    table.draw([None])
    table.draw([card_id(parse_card("AS"), deck=1, deck_set=DECK_SET + 1)])
    (voided,) = table.events(RoundVoided)
    assert voided.reason == Irregularity.FOREIGN_CARD and voided.cards == (parse_card("AS"),)
    assert AlarmKind.FOREIGN_CARD in [alarm.kind for alarm in table.events(Alarm)]
    shoe = table.model.shoe
    assert shoe is not None and (shoe.dealt, shoe.intruders) == (1, 1)
    assert table.state == State.BETTING and not table.model.holds


def test_a_re_read_card_already_drawn_is_a_duplicate_and_voids_the_round() -> None:
    table = dealing()
    table.draw(ids("2S 7H"))
    table.draw([None])
    table.draw(ids("2S"))
    assert table.events(RoundVoided)[0].reason == Irregularity.DUPLICATE_CARD
    assert table.state == State.BETTING


def test_a_supervisor_enters_the_card_and_the_round_settles() -> None:
    table = dealing()
    table.draw([None])
    facts = table.feed(EnterCard("2S", "read it by eye", SUPERVISOR))
    assert not [f for f in facts if isinstance(f.event, RefusedCommand)]
    (corrected,) = table.events(CardCorrected)
    assert corrected.correction is CorrectionMethod.ENTERED and corrected.by == SUPERVISOR
    assert corrected.physical_id == "entered" and corrected.to is Hand.PLAYER
    table.draw(ids("7H 3S KH 9D"))
    assert table.events(RoundResult)[0].player[0] == parse_card("2S")


def test_enter_card_is_refused_in_words_with_no_misread_card_awaiting() -> None:
    table = dealing()
    (fact,) = table.feed(EnterCard("2S", None, SUPERVISOR))
    assert isinstance(fact.event, RefusedCommand) and fact.event.command == "enter-card"
    assert fact.event.reason.startswith("enter-card 2S is not possible now: no misread card")
    assert table.state == State.DEALING


def test_enter_card_refuses_a_card_whose_copies_are_all_out() -> None:
    config = TableConfig(shoe=ShoeProcedure(burn=BurnPolicy.FIXED, burn_fixed=8))
    table = Table(config)
    table.open_manual_shoe()
    table.draw([card_id(parse_card("4D"), deck=deck) for deck in range(1, 9)])
    table.feed(CloseBets())
    table.draw([None])
    (fact,) = table.feed(EnterCard("4D", None, SUPERVISOR))
    assert isinstance(fact.event, RefusedCommand)
    assert "8 copies of 4D are out of this shoe and 8 decks hold 8" in fact.event.reason
    awaiting(table)


def test_void_round_while_awaiting_a_re_read_ends_the_hold_and_the_round() -> None:
    table = dealing()
    table.draw(ids("2S"))
    table.draw([None])
    table.feed(VoidRound(VoidReason.MISDEAL, "card torn"))
    (voided,) = table.events(RoundVoided)
    assert voided.reason == "misdeal" and voided.cards == (parse_card("2S"), None)
    (aside,) = table.events(CardSetAside)
    assert (aside.card, aside.physical_id, aside.reason) == (None, None, "misdeal")
    assert table.state == State.BETTING and not table.model.holds
    assert table.model.shoe is not None and table.model.shoe.dealt == 2


def test_a_re_read_after_lost_events_voided_the_round_is_set_aside_and_counted_once() -> None:
    table = dealing()
    table.draw([None])
    table.feed(SequenceGap(expected=5, got=7))
    assert table.model.holds == [HoldReason.SEQUENCE_GAP]
    table.draw(ids("2S"))
    table.feed(ClearHold(HoldReason.SEQUENCE_GAP, accepted_seq=6))
    (voided,) = table.events(RoundVoided)
    assert voided.reason == HoldReason.SEQUENCE_GAP and voided.cards == (parse_card("2S"),)
    assert [aside.card for aside in table.events(CardSetAside)] == [parse_card("2S")]
    shoe = table.model.shoe
    assert shoe is not None and (shoe.dealt, shoe.burned) == (1, 1)
    assert table.state == State.BETTING


def test_abandoning_the_shoe_while_awaiting_a_re_read_leaves_no_hold_behind() -> None:
    table = dealing()
    table.draw([None])
    table.feed(AbandonShoe("pack damaged"))
    assert table.state == State.IDLE and not table.model.holds


def test_a_misread_card_of_a_double_feed_cannot_wait_and_voids_its_round() -> None:
    table = dealing()
    in_order = ReadFlag.DOUBLE_FEED_SUSPECTED | ReadFlag.FEED_IN_ORDER
    table.feed(table.device.card(None, flags=in_order, feed_group=1, feed_size=2))
    table.feed(table.device.card(ids("7H")[0], flags=in_order, feed_group=1, feed_size=2))
    assert table.events(RoundVoided)[0].reason == Irregularity.MISREAD_CARD
    assert not table.model.holds
    found = [(f.code, f.consequence) for f in table.events(IrregularityFound)]
    assert found[0] == ("misread_card", "void_round")


def test_the_automatic_machine_takes_the_re_read_card_back_once() -> None:
    table = dealing(AUTOMATIC)
    table.draw([None])
    awaiting(table)
    table.draw(ids(ROUND))
    assert table.events(RoundResult) and table.model.cards_to_return == 5


def test_replaying_the_inputs_rebuilds_the_wait_and_the_correction() -> None:
    table = dealing()
    table.draw([None])
    fresh = TableModel(MANUAL)
    for item in table.inputs:
        fresh.apply(item)
    assert fresh.state == State.HELD and fresh.holds == [HoldReason.MISREAD_CARD]
    assert fresh.round is not None and fresh.round.misread is not None
    table.feed(EnterCard("2S", None, SUPERVISOR))
    for item in table.inputs[-1:]:
        fresh.apply(item)
    assert fresh.state == State.DEALING and fresh.round.deal.player == (parse_card("2S"),)


def test_a_re_read_of_another_deck_set_before_any_of_the_declared_one_holds_for_the_pack() -> None:
    """The strict checks apply to the re-read card: with no card of the declared set out yet,
    a card of another set may mean the declaration is wrong, so the table holds for it."""
    table = Table(MANUAL)
    table.open_manual_shoe()
    table.draw([None])
    table.feed(CloseBets())
    table.draw([None])
    table.draw([card_id(parse_card("AS"), deck=1, deck_set=DECK_SET + 1)])
    assert table.model.holds == [HoldReason.DECK_SET_MISMATCH]
    assert AlarmKind.FOREIGN_CARD in [alarm.kind for alarm in table.events(Alarm)]
    table.feed(ClearHold(HoldReason.DECK_SET_MISMATCH, note="a stray card, removed"))
    assert table.events(RoundVoided)[0].reason == Irregularity.FOREIGN_CARD
    assert table.state == State.BETTING
