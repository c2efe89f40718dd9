"""The pricing tables that ship as package data are exactly what the rules build today.

A change to a drawing rule, an initial order or the table's shape that is not
written again (python -m cardshoe.controller.rules.shipped_tables) fails here,
so a shipped table can never price by rules the code no longer has.
"""

from __future__ import annotations

import pytest

from cardshoe.controller.rules.drawing import Dealing, Tableau
from cardshoe.controller.rules.games import GAME_NAMES, get_game
from cardshoe.controller.rules.hands import Hand
from cardshoe.controller.rules.odds import (
    PricingTable,
    build_composition_table,
    composition_table,
)
from cardshoe.controller.rules.shipped_tables import read_table


@pytest.mark.parametrize("game", GAME_NAMES)
def test_the_shipped_table_is_the_one_the_rules_build(game: str) -> None:
    dealing = get_game(game).dealing
    shipped = read_table(dealing)
    assert shipped is not None, f"no table ships for {game}"
    assert PricingTable(*shipped) == build_composition_table(dealing)


def test_a_dealing_of_no_game_has_its_table_built() -> None:
    """Only the games' own dealings ship; any other is enumerated, as before."""
    banker_first = (Hand.BANKER, Hand.PLAYER, Hand.BANKER, Hand.PLAYER)
    dealing = Dealing((), banker_first, Tableau())
    assert read_table(dealing) is None
    assert composition_table(dealing) == build_composition_table(dealing)
