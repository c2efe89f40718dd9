"""Issue 28: the house ends the automatic machine's shoe (Macau Art. 3.2) by its policy.

The machine's round count and a dealer's relief are procedure inputs, so the procedure
ends the shoe itself, journaled as shoe.last_round with cause "house" and the policy as
its reason; the manual shoe ends at its cut card as before.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

from support.table_inputs import (
    AUTOMATIC,
    MANUAL,
    Table,
    deal_while_due,
    play_round,
    tagged_shoe,
)

from cardshoe.controller.config import TableConfig
from cardshoe.controller.procedure.facts import LastRoundSet, ShoeEnded, ShoeEnding
from cardshoe.controller.procedure.machine import State
from cardshoe.controller.procedure.operator_commands import CloseBets, SignIn


def machine(**policy: object) -> TableConfig:
    return replace(AUTOMATIC, shoe=replace(AUTOMATIC.shoe, **policy))


def test_the_machine_shoe_ends_after_machine_rounds_and_reconciles() -> None:
    table = Table(machine(machine_rounds=3))
    shoe = iter(tagged_shoe(8, seed=28))
    table.open_auto_shoe()
    play_round(table, shoe)
    assert table.events(LastRoundSet) == []
    play_round(table, shoe)
    assert table.model.round_no == 3
    assert table.events(LastRoundSet) == [LastRoundSet(3, "house", ShoeEnding.MACHINE_ROUNDS)]
    table.feed(CloseBets())
    deal_while_due(table, shoe)
    open_shoe = table.model.shoe
    assert table.state == State.RETURNING and open_shoe is not None
    table.feed(table.device.returned(open_shoe.cards_out))
    assert table.state == State.SHOE_ENDED
    out = open_shoe.dealt + open_shoe.burned
    table.count(out, 416)
    (ended,) = table.events(ShoeEnded)
    assert (ended.rounds, ended.returned, ended.reconciled) == (3, out, True)


def test_policy_off_the_machine_deals_on() -> None:
    table = Table(machine(machine_rounds=0))
    shoe = itertools.cycle(tagged_shoe(8, seed=28))  # the machine deals its returned cards again
    table.open_auto_shoe()
    for _ in range(100):
        play_round(table, shoe)
    assert table.events(LastRoundSet) == []
    assert table.model.round_no == 101


def test_a_relief_at_the_machine_makes_the_round_on_the_layout_its_last() -> None:
    table = Table(machine(machine_end_at_relief=True))
    table.feed(SignIn("alice", None))
    shoe = iter(tagged_shoe(8, seed=28))
    table.open_auto_shoe()
    play_round(table, shoe)
    table.feed(SignIn("bob", "alice"))
    assert table.events(LastRoundSet) == [LastRoundSet(2, "house", ShoeEnding.DEALER_RELIEF)]


def test_a_first_sign_in_or_a_manual_shoe_ends_nothing() -> None:
    table = Table(machine(machine_end_at_relief=True))
    table.open_auto_shoe()
    table.feed(SignIn("alice", None))
    assert table.events(LastRoundSet) == []
    manual = Table(MANUAL)
    manual.open_manual_shoe()
    manual.feed(SignIn("bob", "alice"))
    assert manual.events(LastRoundSet) == []
    assert manual.state is not State.SHOE_ENDED
    assert manual.events(ShoeEnded) == []
