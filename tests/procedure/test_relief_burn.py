"""The relief burn (game.relief_burn): a dealer relieving another makes the house burn.

The burn comes after the no more bets of the first round not yet closed for
bets, before its deal, by the same burn machinery as Art. 8's round burn; a
restart's replay of the journal finds it due exactly as the table left it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.table_inputs import Table, deal_while_due, play_round, tagged_shoe

from cardshoe.controller.config import (
    BurnPolicy,
    ConfigError,
    DeviceConfig,
    DeviceMode,
    GameConfig,
    ShoeProcedure,
    TableConfig,
)
from cardshoe.controller.display.plain import plain_line
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.procedure.facts import (
    Burned,
    BurnReason,
    CardsReturned,
    HoldStarted,
    ReliefBurnDue,
    RoundResult,
)
from cardshoe.controller.procedure.machine import State
from cardshoe.controller.procedure.operator_commands import (
    CloseBets,
    ShoeLoaded,
    SignIn,
    StartShoe,
)
from cardshoe.controller.procedure.table import TableModel
from cardshoe.controller.service.recovery import journaled_apply, recover
from cardshoe.drivers.api.events import CardId, FaultKind, Orientation


def manual(relief_burn: int = 1, round_burn: int = 0) -> TableConfig:
    return TableConfig(
        game=GameConfig(decks=8, relief_burn=relief_burn, round_burn=round_burn),
        shoe=ShoeProcedure(burn=BurnPolicy.FIXED, burn_fixed=1),
    )


def automatic(relief_burn: int = 1) -> TableConfig:
    return TableConfig(
        game=GameConfig(decks=8, relief_burn=relief_burn),
        device=DeviceConfig(kind=DeviceMode.AUTO),
    )


def burn_reasons(table: Table) -> list[BurnReason]:
    return [burn.reason for burn in table.events(Burned)]


def opened(config: TableConfig) -> tuple[Table, Iterator[CardId]]:
    """Dealer alice signed in, the shoe open and its start done, round 1 open for bets."""
    table = Table(config)
    table.feed(SignIn("alice", None))
    shoe = iter(tagged_shoe(8, seed=12))
    if config.uses_cut_card_and_burn:
        table.open_manual_shoe()
        deal_while_due(table, shoe)
    else:
        table.open_auto_shoe()
    assert table.state == State.BETTING
    return table, shoe


def test_a_relief_while_bets_are_open_burns_after_no_more_bets_before_the_deal() -> None:
    table, shoe = opened(manual())
    facts = table.feed(SignIn("bob", "alice"))
    assert [fact.event for fact in facts] == [ReliefBurnDue("bob", "alice", 1, 1)]
    assert table.model.card_due() is not BurnReason.DEALER_RELIEF  # bets are open: no card
    table.feed(CloseBets())
    assert table.state == State.ROUND_BURN
    assert table.model.card_due() is BurnReason.DEALER_RELIEF
    deal_while_due(table, shoe)
    assert burn_reasons(table) == [BurnReason.START_OF_SHOE, BurnReason.DEALER_RELIEF]
    assert table.events(Burned)[-1].burn_remaining == 0
    assert len(table.events(RoundResult)) == 1
    assert table.model.shoe is not None and not table.model.shoe.relief_burn_due


def test_a_relief_in_the_middle_of_a_round_burns_before_the_next_round_s_deal() -> None:
    table, shoe = opened(manual())
    table.feed(CloseBets())
    table.draw([next(shoe)])
    assert table.state == State.DEALING
    assert [fact.event for fact in table.feed(SignIn("bob", "alice"))] == [
        ReliefBurnDue("bob", "alice", 1, 2)
    ]
    assert table.model.card_due() not in (None, BurnReason.DEALER_RELIEF)
    deal_while_due(table, shoe)
    assert burn_reasons(table) == [BurnReason.START_OF_SHOE]  # round 1 dealt as it began
    assert table.state == State.BETTING and table.model.round_no == 2
    play_round(table, shoe)
    assert burn_reasons(table) == [BurnReason.START_OF_SHOE, BurnReason.DEALER_RELIEF]
    assert [burn.reason for burn in table.events(Burned)].count(BurnReason.DEALER_RELIEF) == 1


def test_the_relief_burn_comes_before_the_round_burn_and_counts_its_own_cards() -> None:
    table, shoe = opened(manual(relief_burn=2, round_burn=1))
    table.feed(SignIn("bob", "alice"))
    play_round(table, shoe)
    burns = table.events(Burned)
    assert [(burn.reason, burn.burn_remaining) for burn in burns] == [
        (BurnReason.START_OF_SHOE, 0),
        (BurnReason.DEALER_RELIEF, 1),
        (BurnReason.DEALER_RELIEF, 0),
        (BurnReason.START_OF_ROUND, 0),
    ]
    play_round(table, shoe)  # no relief since: the round burn alone
    assert burn_reasons(table)[4:] == [BurnReason.START_OF_ROUND]


@pytest.mark.parametrize(
    ("config", "signs_in", "why"),
    [
        (manual(relief_burn=0), SignIn("bob", "alice"), "the policy is off"),
        (manual(), SignIn("alice", "alice"), "the same dealer signing in again"),
        (manual(), SignIn("bob", None), "no dealer was signed in"),
    ],
)
def test_no_relief_burn_without_a_relief_under_the_policy(
    config: TableConfig, signs_in: SignIn, why: str
) -> None:
    table, shoe = opened(config)
    assert table.feed(signs_in) == [], why
    play_round(table, shoe)
    assert burn_reasons(table) == [BurnReason.START_OF_SHOE], why


def test_a_relief_before_the_shoe_deals_its_first_round_burns_nothing_more() -> None:
    """Idle, loading, cut, the start-of-shoe burn: the shoe's own start is the new dealer's."""
    table = Table(manual())
    table.feed(SignIn("alice", None))
    assert table.feed(SignIn("bob", "alice")) == []  # idle
    table.feed(StartShoe("S1"), ShoeLoaded())
    assert table.feed(SignIn("carol", "bob")) == []  # cut
    table.feed(table.device.button())
    assert table.state == State.BURNING
    assert table.feed(SignIn("alice", "carol")) == []
    shoe = iter(tagged_shoe(8, seed=3))
    deal_while_due(table, shoe)
    play_round(table, shoe)
    assert burn_reasons(table) == [BurnReason.START_OF_SHOE]


def test_two_reliefs_before_the_burn_burn_once() -> None:
    table, shoe = opened(manual(relief_burn=2))
    table.feed(SignIn("bob", "alice"))
    assert table.feed(SignIn("carol", "bob")) == []
    play_round(table, shoe)
    assert burn_reasons(table).count(BurnReason.DEALER_RELIEF) == 2
    play_round(table, shoe)
    assert burn_reasons(table).count(BurnReason.DEALER_RELIEF) == 2


def test_a_relief_during_a_hold_counts_where_the_table_was_held() -> None:
    table, shoe = opened(manual())
    table.feed(table.device.fault(FaultKind.DOOR_OPEN))
    assert table.state == State.HELD
    assert table.feed(SignIn("bob", "alice"))[0].event == ReliefBurnDue("bob", "alice", 1, 1)
    table.feed(table.device.fault_cleared(FaultKind.DOOR_OPEN))
    play_round(table, shoe)
    assert burn_reasons(table) == [BurnReason.START_OF_SHOE, BurnReason.DEALER_RELIEF]


def test_on_the_automatic_machine_the_machine_deals_the_relief_burn_and_takes_it_back() -> None:
    """DEAL_NEXT deals the burn card as any card; it goes back in with the round's cards,
    and a face-down burn card holds nothing (no hand is due it)."""
    table, shoe = opened(automatic())
    table.feed(SignIn("bob", "alice"))
    table.feed(CloseBets())
    assert table.state == State.ROUND_BURN
    assert table.model.card_due() is BurnReason.DEALER_RELIEF
    table.feed(table.device.card(next(shoe), orientation=Orientation.FACE_DOWN))
    assert table.state == State.DEALING and not table.events(HoldStarted)
    deal_while_due(table, shoe)
    shoe_state = table.model.shoe
    assert shoe_state is not None and table.state == State.RETURNING
    result = table.events(RoundResult)[0]
    round_cards = len(result.player) + len(result.banker)
    assert shoe_state.cards_out == round_cards + 1
    table.feed(table.device.returned(shoe_state.cards_out))
    assert table.events(CardsReturned)[0].expected == round_cards + 1
    assert burn_reasons(table) == [BurnReason.DEALER_RELIEF]


def test_a_restart_replays_the_relief_and_finds_the_burn_still_due(tmp_path: Path) -> None:
    """The journal holds the sign-in as an input: recovery rebuilds the pending burn, and
    refuses to go on with the open shoe if relief_burn was changed meanwhile."""
    config = manual()
    model, shoe = TableModel(config), iter(tagged_shoe(8, seed=5))
    table = Table(config)
    inputs: list[object] = [SignIn("alice", None), StartShoe("S1"), ShoeLoaded()]
    inputs.append(table.device.button())
    inputs += [table.device.card(next(shoe)), SignIn("bob", "alice")]
    path = tmp_path / "journal.sqlite"
    with Journal.open(path, table_id=config.table_id, create=True) as journal:
        for item in inputs:
            with journal.transaction() as transaction:
                journaled_apply(model, item, transaction, "SIM-1")
        assert model.state == State.BETTING and model.shoe is not None
        assert model.shoe.relief_burn_due
        recovered = recover(config, journal)
        assert recovered.mismatches == ()
        assert recovered.model.shoe is not None and recovered.model.shoe.relief_burn_due
        recovered.model.apply(CloseBets())
        assert recovered.model.card_due() is BurnReason.DEALER_RELIEF
        with pytest.raises(ConfigError, match="the game options changed while shoe S1 is open"):
            recover(manual(relief_burn=2), journal)


def test_the_table_display_tells_the_relief_and_the_burn() -> None:
    table, _ = opened(manual())
    (due,) = [fact.event for fact in table.feed(SignIn("bob", "alice"))]
    assert plain_line(due.KIND, due.payload()) == (
        "bob relieves alice: 1 card(s) burn before round 1 is dealt"
    )
