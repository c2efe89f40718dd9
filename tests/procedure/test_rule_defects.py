"""Issue 12's rule defects, each fed to the procedure as the device events that showed it."""

from __future__ import annotations

from support.table_inputs import Table, card_id, ids

from cardshoe.controller.config import BurnPolicy, GameConfig, ShoeProcedure, TableConfig
from cardshoe.controller.procedure.facts import CardAssigned, IrregularityFound, RoundVoided
from cardshoe.controller.procedure.inputs import CloseBets
from cardshoe.controller.procedure.machine import State
from cardshoe.controller.rules.cards import parse_cards

TWO_DECKS = TableConfig(
    game=GameConfig(decks=2), shoe=ShoeProcedure(burn=BurnPolicy.FIXED, burn_fixed=1)
)


def dealing(config: TableConfig) -> Table:
    table = Table(config)
    table.open_manual_shoe()
    table.draw(ids("2C", deck=2))
    table.feed(CloseBets())
    assert table.state == State.DEALING
    return table


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
