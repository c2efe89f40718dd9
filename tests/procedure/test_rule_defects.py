"""Issue 12's rule defects, each fed to the procedure as the device events that showed it."""

from __future__ import annotations

import pytest
from support.table_inputs import DECK_SET, Table, card_id, deal_while_due, dealing, ids, tagged_shoe

from cardshoe.controller.config import (
    BurnPolicy,
    ConfigError,
    DeviceConfig,
    DeviceMode,
    GameConfig,
    ShoeProcedure,
    TableConfig,
)
from cardshoe.controller.procedure.facts import (
    Alarm,
    AlarmKind,
    CardAssigned,
    IrregularityFound,
    RoundResult,
    RoundVoided,
)
from cardshoe.controller.procedure.machine import State
from cardshoe.controller.procedure.operator_commands import CloseBets, StartShoe
from cardshoe.controller.rules.cards import parse_cards
from cardshoe.controller.rules.games import OutcomeMarks, get_game

TWO_DECKS = TableConfig(
    game=GameConfig(decks=2), shoe=ShoeProcedure(burn=BurnPolicy.FIXED, burn_fixed=1)
)


def test_case_1_a_duplicate_does_not_count_as_a_copy_of_the_genuine_card() -> None:
    """The duplicate used to be counted, so the genuine second copy was voided as excess."""
    table = dealing(TWO_DECKS)
    ace = parse_cards("AS")[0]
    table.draw([card_id(ace, deck=1), card_id(ace, deck=1)])
    assert [void.reason for void in table.events(RoundVoided)] == ["duplicate_card"]
    table.feed(CloseBets())
    table.draw([card_id(ace, deck=2)])
    assert len(table.events(RoundVoided)) == 1
    assert table.events(CardAssigned)[-1].physical_id == str(card_id(ace, deck=2))
    assert [found.code for found in table.events(IrregularityFound)] == ["duplicate_card"]
    shoe = table.model.shoe
    assert shoe is not None and shoe.intruders == 1


@pytest.mark.parametrize("when", ["betting", "round_burn"])
def test_case_2_a_foreign_card_while_a_round_is_open_voids_it(when: str) -> None:
    """7 Up, round_burn = 1: a foreign card burned after no more bets used to be recorded as
    a burn and the round paid. Found while the round is open, it voids that round."""
    config = TableConfig(game=GameConfig(name="seven-up", decks=8, round_burn=1))
    table = Table(config)
    table.open_manual_shoe()
    shoe = iter(ids("8C 2D 3H 4S 5C 6D 7H 8S 9C", deck=2) + ids("2S 3S 4S 5S 6S 7S", deck=3))
    deal_while_due(table, shoe)
    assert table.state == State.BETTING
    table.feed(CloseBets())
    deal_while_due(table, shoe)
    assert len(table.events(RoundResult)) == 1
    foreign = card_id(parse_cards("AS")[0], deck=1, deck_set=DECK_SET + 1)
    if when == "round_burn":
        table.feed(CloseBets())
        assert table.state == State.ROUND_BURN
    table.draw([foreign])
    voided = table.events(RoundVoided)
    assert [(void.round_no, void.reason) for void in voided] == [(2, "foreign_card")]
    assert len(table.events(RoundResult)) == 1
    found = [(f.code, f.consequence) for f in table.events(IrregularityFound)]
    assert ("foreign_card", "void_round") in found
    assert table.state == State.BETTING and table.model.round_no == 3


def test_case_6_a_seven_up_player_seven_is_no_player_pair() -> None:
    """7 Up's Player hand is the mandatory 7 and a shoe card: a shoe 7 used to be flagged
    a "player pair", but 7 Up has no pair bet. A result shows only what the game has."""
    table = Table(TableConfig(game=GameConfig(name="seven-up", decks=8)))
    table.open_manual_shoe()
    shoe = iter(ids("8C 2D 3H 4S 5C 6D 7H 8S", deck=2) + ids("2S 7C 3S 5D 6H", deck=3))
    deal_while_due(table, shoe)
    table.feed(CloseBets())
    deal_while_due(table, shoe)
    (result,) = table.events(RoundResult)
    assert [str(card) for card in result.player][:2] == ["7*", "7C"]
    assert (result.player_pair, result.banker_pair) == (None, None)
    assert result.sevens is not None and result.sevens >= 2
    punto_banco = get_game("punto-banco")
    played = punto_banco.new_round()
    for card in parse_cards("4S 2H 4D 3C"):
        played.deal(card)
    assert punto_banco.marks(played.outcome()) == OutcomeMarks(True, False, None)


def test_case_4_a_cut_card_far_from_its_depth_alarms_and_the_depth_is_bounded() -> None:
    """An early cut card used to end a shoe with 357 cards left and no alarm."""
    config = TableConfig(shoe=ShoeProcedure(burn=BurnPolicy.FIXED, burn_fixed=1))
    table = Table(config)
    table.open_manual_shoe()
    shoe = iter(tagged_shoe(8, seed=5))
    deal_while_due(table, shoe)
    table.feed(CloseBets())
    table.draw([next(shoe)])
    table.feed(table.device.cut_card())
    (alarm,) = [a for a in table.events(Alarm) if a.kind is AlarmKind.CUT_CARD]
    assert "with 414 cards left" in alarm.detail and "cut_card_depth is 12" in alarm.detail
    with pytest.raises(ConfigError, match=r"shoe.cut_card_depth = 27 is out of range: use 6-26"):
        TableConfig(shoe=ShoeProcedure(cut_card_depth=27))


def test_case_4_a_cut_card_within_the_tolerance_is_no_alarm() -> None:
    config = TableConfig(
        game=GameConfig(decks=1), shoe=ShoeProcedure(burn=BurnPolicy.FIXED, burn_fixed=1)
    )
    table = Table(config)
    table.open_manual_shoe()
    shoe = iter(tagged_shoe(1, seed=5))
    while table.model.shoe is not None and table.model.shoe.dealt + 1 + 12 + 6 < 52:
        if table.state == State.BETTING:
            table.feed(CloseBets())
        deal_while_due(table, shoe)
    table.feed(table.device.cut_card())
    assert not [a for a in table.events(Alarm) if a.kind is AlarmKind.CUT_CARD]


def test_shoe_start_an_automatic_machine_shuffling_another_count_holds() -> None:
    table = Table(TableConfig(device=DeviceConfig(kind=DeviceMode.AUTO)))
    table.feed(StartShoe("S1", DECK_SET), table.device.shuffled(312))
    assert table.model.holds == ["pack_count_mismatch"]
    assert table.state == State.HELD and table.model.card_due() is None
