"""The dealing procedure, driven by decoded device events: flows, policies, holds, violations."""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction

import pytest
from support.table_inputs import DECK_SET, Table, card_id, deal_while_due, ids, tagged_shoe

from cardshoe.controller.config import (
    BurnPolicy,
    CutCardPolicy,
    DeviceConfig,
    DeviceMode,
    GameConfig,
    ShoeProcedure,
    TableConfig,
)
from cardshoe.controller.procedure.facts import (
    Alarm,
    AlarmKind,
    BetsClosed,
    Burned,
    BurnReason,
    CardAssigned,
    CardsReturned,
    HoldEnded,
    HoldStarted,
    LastRoundSet,
    RefusedCommand,
    RoundOpened,
    RoundResult,
    RoundVoided,
    ShoeEnded,
    ShoeEnding,
    TableIdle,
)
from cardshoe.controller.procedure.holds import HoldReason, fault_hold
from cardshoe.controller.procedure.irregularities import card_of
from cardshoe.controller.procedure.machine import (
    AUTOMATIC,
    AUTOMATIC_FROM,
    TRANSITIONS,
    State,
    Trigger,
    guard_and_action_names,
)
from cardshoe.controller.procedure.operator_commands import (
    AbandonShoe,
    CloseBets,
    ConfirmFaceUp,
    CutDone,
    EndShoe,
    ShoeLoaded,
    StartShoe,
)
from cardshoe.controller.procedure.table import TableModel
from cardshoe.controller.rules.cards import parse_cards
from cardshoe.controller.rules.games import GAME_NAMES
from cardshoe.controller.rules.hands import Hand
from cardshoe.controller.rules.shoe_order import play_shoe_order
from cardshoe.drivers.api.events import FaultKind, Orientation

DECKS_FOR = {"punto-banco": 8, "seven-up": 6, "macau-1": 8, "macau-2": 8}


def manual(game: str = "punto-banco", **options: object) -> TableConfig:
    shoe_options = {key: options.pop(key) for key in list(options) if key in _SHOE_KEYS}
    decks = options.pop("decks", DECKS_FOR[game])
    return TableConfig(
        game=GameConfig(name=game, decks=decks, **options),  # type: ignore[arg-type]
        shoe=ShoeProcedure(**shoe_options),  # type: ignore[arg-type]
    )


def automatic(game: str = "punto-banco", **options: object) -> TableConfig:
    decks = options.pop("decks", DECKS_FOR[game])
    return TableConfig(
        game=GameConfig(name=game, decks=decks, **options),  # type: ignore[arg-type]
        device=DeviceConfig(kind=DeviceMode.AUTO),
    )


_SHOE_KEYS = {"burn", "burn_fixed", "cut_card_depth", "cut_card"}


def alarms(table: Table, kind: AlarmKind) -> list[Alarm]:
    return [alarm for alarm in table.events(Alarm) if alarm.kind is kind]


def test_every_guard_and_action_the_tables_name_is_a_model_method() -> None:
    missing = {
        name for name in guard_and_action_names() if not callable(getattr(TableModel, name, None))
    }
    assert missing == set()


def test_every_state_but_the_initial_one_is_some_transition_s_destination() -> None:
    destinations = {t.dest for t in TRANSITIONS if t.dest is not None}
    assert set(State) - {State.IDLE} <= destinations


@pytest.mark.parametrize("state", list(State))
def test_the_triggers_asked_about_in_each_state_are_those_transitions_finds(state: State) -> None:
    """AUTOMATIC_FROM agrees with the machine's own scan of the triggers leaving each state."""
    scanned = TableModel(manual()).machine.get_triggers(state.value)
    assert AUTOMATIC_FROM[state] == tuple(t for t in AUTOMATIC if t in scanned)


IGNORED_BUTTON = 1
"""A button the procedure takes no trigger from: feeding it only runs the automatic steps."""


def _before_automatic_steps(table: Table, rounds: int) -> Iterator[None]:
    """Open a shoe and deal `rounds` rounds, holding the table between the first two and
    voiding the second with a foreign card; pause after each input's own trigger has fired
    and before the procedure's automatic steps."""
    model, device = table.model, table.device
    shoe = iter(tagged_shoe(table.config.game.decks, seed=21))
    foreign = tagged_shoe(1, seed=22, deck_set=DECK_SET + 1)[0]

    def fire(trigger: Trigger, **data: object) -> Iterator[None]:
        model.trigger(trigger, **data)
        yield
        table.feed(device.button(IGNORED_BUTTON))

    if model.automatic:
        table.open_auto_shoe()
    else:
        table.open_manual_shoe()
    for number in range(rounds + 1):
        if number:
            table.feed(CloseBets())
        while model.card_due() is not None:
            card = foreign if number == 2 and model.round_no == 2 else next(shoe)
            yield from fire(Trigger.CARD, event=device.card(card))
        if HoldReason.INTRUDER_ON_TABLE in model.holds:
            yield from fire(Trigger.CLEAR_HOLD, reason=HoldReason.INTRUDER_ON_TABLE)
        if model.state == State.RETURNING:
            yield from fire(Trigger.RETURNED, done=device.returned(model.cards_to_return or 0))
        if number == 1:
            table.feed(device.fault(FaultKind.DOOR_OPEN))
            yield from fire(Trigger.RELEASE, reason=fault_hold(FaultKind.DOOR_OPEN))


@pytest.mark.parametrize("config", [manual(), automatic()], ids=["manual", "automatic"])
def test_the_automatic_step_is_the_one_may_trigger_names(config: TableConfig) -> None:
    """first_step answers as transitions' may_<trigger>() would, whatever the table holds:
    every state is tried against the shoe, round and holds of each moment of play."""
    table = Table(config)
    model, answers = table.model, set()
    for _ in _before_automatic_steps(table, rounds=3):
        now = model.state
        for state in State:
            model.machine.set_state(state.value, model)
            triggers = AUTOMATIC_FROM[state]
            allowed = next((t for t in triggers if getattr(model, f"may_{t}")()), None)
            step = model.machine.first_step(model, triggers)
            assert (None if step is None else step.trigger) == allowed
            answers.add(allowed)
        model.machine.set_state(now, model)
    assert {
        Trigger.ROUND_VOID,
        Trigger.ROUND_COMPLETE,
        Trigger.NEXT_ROUND,
        Trigger.RESUME,
    } <= answers
    assert len(table.events(RoundResult)) == 2
    assert len(table.events(RoundVoided)) == 1


def test_a_manual_shoe_opens_burns_by_decks_and_opens_round_one() -> None:
    table = Table(manual(decks=6))
    table.feed(StartShoe("S1", DECK_SET))
    assert table.state == State.LOADING
    table.feed(ShoeLoaded())
    assert table.state == State.CUT
    table.feed(CutDone())
    assert table.state == State.BURNING
    assert table.model.card_due() is BurnReason.START_OF_SHOE
    shoe = iter(tagged_shoe(6, seed=1))
    deal_while_due(table, shoe)
    burns = table.events(Burned)
    assert [burn.burn_remaining for burn in burns] == [5, 4, 3, 2, 1, 0]
    assert table.state == State.BETTING
    assert table.events(RoundOpened) == [RoundOpened(1, demo=False)]
    assert table.model.card_due() is None


def test_the_dealer_button_stands_for_loaded_cut_and_no_more_bets() -> None:
    table = Table(manual())
    table.feed(StartShoe("S1", DECK_SET), table.device.button(), table.device.button())
    assert table.state == State.BURNING
    deal_while_due(table, iter(tagged_shoe(8, seed=2)))
    table.feed(table.device.button())
    assert table.state == State.DEALING
    assert table.events(BetsClosed) == [BetsClosed(1, "dealer_button")]
    assert table.model.card_due() is Hand.PLAYER


@pytest.mark.parametrize(
    ("first", "burned"),
    [("AS", 2), ("5H", 6), ("9C", 10), ("TD", 11), ("KS", 11)],
)
def test_first_card_burn_counts_the_exposed_card_then_its_value(first: str, burned: int) -> None:
    table = Table(manual(burn=BurnPolicy.FIRST_CARD))
    table.open_manual_shoe()
    rest = [card for card in tagged_shoe(8, seed=3) if str(card)[:2] != first]
    deal_while_due(table, iter([*ids(first), *rest]))
    assert len(table.events(Burned)) == burned
    assert table.state == State.BETTING


def test_fixed_burn_burns_the_house_number() -> None:
    table = Table(manual(burn=BurnPolicy.FIXED, burn_fixed=3))
    table.open_manual_shoe()
    deal_while_due(table, iter(tagged_shoe(8, seed=4)))
    assert len(table.events(Burned)) == 3


def test_a_round_deals_in_the_order_the_rules_engine_names() -> None:
    table = Table(manual(burn=BurnPolicy.FIXED, burn_fixed=1))
    table.open_manual_shoe()
    table.draw(ids("2C"))
    table.feed(CloseBets())
    assigned = table.draw(ids("2S 7H 3S KH 9D"))
    hands = [fact.event.to for fact in assigned if isinstance(fact.event, CardAssigned)]
    assert hands == [Hand.PLAYER, Hand.BANKER, Hand.PLAYER, Hand.BANKER, Hand.PLAYER]
    result = table.events(RoundResult)[0]
    assert (result.player_total, result.banker_total, result.winner) == (4, 7, "banker")
    assert result.settlement == {
        "player": -1,
        "banker": Fraction(19, 20),
        "tie": -1,
        "player_pair": -1,
        "banker_pair": -1,
    }
    assert table.state == State.BETTING
    assert table.events(RoundOpened)[-1].round_no == 2


def test_seven_up_deals_banker_player_banker_after_the_mandatory_seven() -> None:
    table = Table(manual("seven-up", burn=BurnPolicy.FIXED, burn_fixed=1))
    table.open_manual_shoe()
    table.draw(ids("2C"))
    table.feed(CloseBets())
    table.draw(ids("9S 2H KD"))
    result = table.events(RoundResult)[0]
    assert [str(card) for card in result.player] == ["7*", "2H"]
    assert [str(card) for card in result.banker] == ["9S", "KD"]
    assert (result.player_total, result.banker_total, result.winner) == (9, 9, "tie")


def test_demonstration_rounds_are_flagged_and_never_settled() -> None:
    table = Table(manual(demo_rounds=2, burn=BurnPolicy.FIXED, burn_fixed=1))
    table.open_manual_shoe()
    shoe = iter(tagged_shoe(8, seed=5))
    deal_while_due(table, shoe)
    for _ in range(3):
        table.feed(CloseBets())
        deal_while_due(table, shoe)
    results = table.events(RoundResult)
    assert [(r.demo, r.settlement is None) for r in results] == [
        (True, True),
        (True, True),
        (False, False),
    ]


def test_a_round_burn_comes_after_no_more_bets_and_before_the_deal() -> None:
    table = Table(manual(round_burn=2, burn=BurnPolicy.FIXED, burn_fixed=1))
    table.open_manual_shoe()
    shoe = iter(tagged_shoe(8, seed=6))
    deal_while_due(table, shoe)
    table.feed(CloseBets())
    assert table.state == State.ROUND_BURN
    assert table.model.card_due() is BurnReason.START_OF_ROUND
    deal_while_due(table, shoe)
    reasons = [burn.reason for burn in table.events(Burned)]
    assert reasons == [
        BurnReason.START_OF_SHOE,
        BurnReason.START_OF_ROUND,
        BurnReason.START_OF_ROUND,
    ]
    assert len(table.events(RoundResult)) == 1


def run_manual_shoe(table: Table, cards: list, cut_depth: int) -> list:
    """Deal rounds until the shoe ends, the cut card showing as a device would show it."""
    shoe = iter(cards)
    remaining = len(cards)
    drawn = []
    while table.state not in (State.SHOE_ENDED, State.IDLE):
        if table.state == State.BETTING:
            table.feed(table.device.button())
            continue
        assert table.model.card_due() is not None, table.state
        card = next(shoe)
        drawn.append(card)
        table.draw([card])
        remaining -= 1
        if remaining == cut_depth:
            table.feed(table.device.cut_card())
    return drawn


@pytest.mark.parametrize("game", GAME_NAMES)
def test_a_whole_manual_shoe_gives_every_round_the_rules_engine_gives(game: str) -> None:
    config = manual(game)
    table = Table(config)
    table.open_manual_shoe()
    cards = tagged_shoe(config.game.decks, seed=hash(game) % 1000)
    drawn = run_manual_shoe(table, cards, cut_depth=config.shoe.cut_card_depth)
    burned = len(table.events(Burned))
    expected = list(play_shoe_order(config.game.build_game(), [card_of(c) for c in drawn[burned:]]))
    results = table.events(RoundResult)
    assert len(results) == len(expected)
    for result, played in zip(results, expected, strict=True):
        assert played.void is None
        assert (result.player, result.banker) == (played.round.player, played.round.banker)
        assert result.winner == played.round.outcome().winner.value
    table.count(len(drawn), None)
    ended = table.events(ShoeEnded)[0]
    assert ended.reconciled and ended.dealt + ended.burned == len(drawn)
    assert table.state == State.IDLE
    assert table.events(TableIdle)


@pytest.mark.parametrize(
    ("policy", "rounds_after"), [(CutCardPolicy.LAST_ROUND, 0), (CutCardPolicy.ONE_MORE_ROUND, 1)]
)
def test_the_cut_card_policy_decides_how_many_rounds_follow(
    policy: CutCardPolicy, rounds_after: int
) -> None:
    table = Table(manual(burn=BurnPolicy.FIXED, burn_fixed=1, cut_card=policy, cut_card_depth=24))
    table.open_manual_shoe()
    shoe = iter(tagged_shoe(8, seed=7))
    deal_while_due(table, shoe)
    table.feed(CloseBets())
    table.draw([next(shoe)])
    table.feed(table.device.cut_card())
    assert table.events(LastRoundSet) == [LastRoundSet(1 + rounds_after, "cut_card")]
    deal_while_due(table, shoe)
    for _ in range(rounds_after):
        table.feed(CloseBets())
        deal_while_due(table, shoe)
    assert table.state == State.SHOE_ENDED
    assert len(table.events(RoundResult)) == 1 + rounds_after


def test_a_cut_card_between_rounds_makes_the_next_round_the_last() -> None:
    table = Table(manual(burn=BurnPolicy.FIXED, burn_fixed=1))
    table.open_manual_shoe()
    shoe = iter(tagged_shoe(8, seed=8))
    deal_while_due(table, shoe)
    table.feed(table.device.cut_card())
    assert table.state == State.BETTING
    table.feed(CloseBets())
    deal_while_due(table, shoe)
    assert table.state == State.SHOE_ENDED


def test_an_automatic_machine_shuffles_deals_and_takes_every_round_back() -> None:
    table = Table(automatic())
    table.feed(StartShoe("S1", DECK_SET))
    assert table.state == State.SHUFFLING and table.model.shuffle_wanted
    table.feed(table.device.shuffled(416))
    assert table.state == State.BETTING
    assert not table.events(Burned)
    table.feed(CloseBets())
    deal_while_due(table, iter(tagged_shoe(8, seed=9)))
    assert table.state == State.RETURNING
    out = table.model.cards_to_return
    assert out == len(table.events(CardAssigned))
    table.feed(table.device.returned(out))
    assert table.events(CardsReturned) == [CardsReturned(out, out)]
    assert table.state == State.BETTING
    table.feed(EndShoe())
    assert table.state == State.SHOE_ENDED
    table.count(out, 416)
    ended = table.events(ShoeEnded)[0]
    assert (ended.loaded, ended.returned, ended.remaining, ended.reconciled) == (
        416,
        out,
        416,
        True,
    )


def test_a_return_that_counts_other_cards_is_an_alarm_and_fails_reconciliation() -> None:
    table = Table(automatic())
    table.open_auto_shoe()
    table.feed(CloseBets())
    deal_while_due(table, iter(tagged_shoe(8, seed=10)))
    out = table.model.cards_to_return
    table.feed(table.device.returned(out - 1))
    assert alarms(table, AlarmKind.CARD_COUNT)
    table.feed(EndShoe())
    table.count(out, 415)
    assert not table.events(ShoeEnded)[0].reconciled


def test_reconciliation_mismatch_raises_an_alarm() -> None:
    table = Table(automatic())
    table.open_auto_shoe()
    table.feed(EndShoe())
    table.count(0, 415)
    assert not table.events(ShoeEnded)[0].reconciled
    assert alarms(table, AlarmKind.RECONCILIATION)


def test_end_shoe_during_a_round_ends_it_after_that_round() -> None:
    table = Table(manual(burn=BurnPolicy.FIXED, burn_fixed=1))
    table.open_manual_shoe()
    shoe = iter(tagged_shoe(8, seed=11))
    deal_while_due(table, shoe)
    table.feed(CloseBets())
    table.draw([next(shoe)])
    table.feed(EndShoe())
    assert table.state == State.DEALING
    deal_while_due(table, shoe)
    assert table.state == State.SHOE_ENDED
    assert table.events(LastRoundSet) == [LastRoundSet(1, "house", ShoeEnding.COMMAND)]


def test_end_shoe_while_betting_withdraws_the_open_round() -> None:
    table = Table(manual(burn=BurnPolicy.FIXED, burn_fixed=1))
    table.open_manual_shoe()
    deal_while_due(table, iter(tagged_shoe(8, seed=12)))
    table.feed(EndShoe())
    assert table.state == State.SHOE_ENDED
    assert table.events(RoundVoided) == [RoundVoided(1, "shoe_closed", ())]


@pytest.mark.parametrize(
    ("fault", "clear"),
    [
        (FaultKind.DOOR_OPEN, FaultKind.DOOR_OPEN),
        (FaultKind.JAM, FaultKind.JAM),
    ],
)
def test_a_device_fault_holds_and_resumes_exactly_where_it_was(
    fault: FaultKind, clear: FaultKind
) -> None:
    table = Table(manual(burn=BurnPolicy.FIXED, burn_fixed=1))
    table.open_manual_shoe()
    shoe = iter(tagged_shoe(8, seed=13))
    deal_while_due(table, shoe)
    table.feed(CloseBets())
    table.draw([next(shoe), next(shoe)])
    due = table.model.card_due()
    table.feed(table.device.fault(fault))
    assert table.state == State.HELD
    assert table.model.card_due() is None
    assert table.events(HoldStarted)[-1].held_state == State.DEALING
    table.feed(table.device.fault_cleared(clear))
    assert table.state == State.DEALING
    assert table.model.card_due() is due
    assert table.events(HoldEnded)[-1].holds_left == ()


def test_two_holds_resume_only_when_both_have_ended() -> None:
    table = Table(manual())
    table.open_manual_shoe()
    table.feed(table.device.fault(FaultKind.DOOR_OPEN), table.device.fault(FaultKind.JAM))
    table.feed(table.device.fault_cleared(FaultKind.DOOR_OPEN))
    assert table.state == State.HELD
    table.feed(table.device.fault_cleared(FaultKind.JAM))
    assert table.state == State.BURNING


def test_an_input_the_state_does_not_allow_is_a_recorded_violation_that_changes_nothing() -> None:
    table = Table(manual())
    table.open_manual_shoe()
    before = table.state
    facts = table.feed(CloseBets())
    assert table.state == before
    assert [fact.event for fact in facts] == [
        RefusedCommand(
            "no-more-bets",
            "no-more-bets is not possible now: the start-of-shoe burn is under way "
            "(possible now: end-shoe, abandon-shoe)",
        )
    ]


def test_a_failing_guard_is_a_violation_too() -> None:
    table = Table(automatic())
    table.open_auto_shoe()
    facts = table.feed(ConfirmFaceUp())
    assert [type(fact.event) for fact in facts] == [RefusedCommand]
    assert facts[0].event.reason.startswith("confirm-face-up is not possible now: bets are open")


def test_a_cut_card_from_an_automatic_machine_is_a_violation() -> None:
    table = Table(automatic())
    table.open_auto_shoe()
    table.feed(table.device.cut_card())
    assert alarms(table, AlarmKind.PROCEDURE_VIOLATION)
    assert table.state == State.BETTING


def test_abandoning_a_shoe_voids_its_open_round_and_leaves_it_unreconciled() -> None:
    table = Table(manual(burn=BurnPolicy.FIXED, burn_fixed=1))
    table.open_manual_shoe()
    shoe = iter(tagged_shoe(8, seed=14))
    deal_while_due(table, shoe)
    table.feed(CloseBets())
    table.draw([next(shoe)])
    table.feed(AbandonShoe("pit decision"))
    assert table.state == State.IDLE
    assert table.events(RoundVoided)[0].reason == "shoe_abandoned"
    assert not table.events(ShoeEnded)[0].reconciled
    assert alarms(table, AlarmKind.SHOE_ABANDONED)


def test_an_exception_in_an_action_stops_the_table_in_the_fault_state() -> None:
    table = Table(automatic())
    table.feed(StartShoe("S1", DECK_SET))
    table.model.shoe = None
    table.feed(table.device.shuffled(416))
    assert table.state == State.FAULT
    assert alarms(table, AlarmKind.SOFTWARE_FAULT)
    table.feed(AbandonShoe("software fault"))
    assert table.state == State.IDLE


def test_a_guard_that_raises_in_the_automatic_steps_stops_the_table_in_the_fault_state() -> None:
    table = Table(manual())
    table.open_manual_shoe()
    deal_while_due(table, iter(tagged_shoe(8, seed=15)))
    table.feed(CloseBets())
    round_open = table.model.round
    assert round_open is not None
    round_open.deal = None  # type: ignore[assignment]
    table.feed(table.device.button(IGNORED_BUTTON))
    assert table.state == State.FAULT
    assert alarms(table, AlarmKind.SOFTWARE_FAULT)


def test_a_face_up_card_from_the_automatic_machine_is_normal() -> None:
    table = Table(automatic())
    table.open_auto_shoe()
    table.feed(CloseBets())
    table.feed(table.device.card(card_id(parse_cards("AS")[0]), orientation=Orientation.FACE_UP))
    assert table.events(CardAssigned)
    assert table.state == State.DEALING


def test_an_unreadable_first_card_under_the_first_card_policy_holds_until_it_is_known() -> None:
    """Art. 2.1 with Art. 18: the first card's face value, and no other count, fixes the burn."""
    table = Table(manual(burn=BurnPolicy.FIRST_CARD, decks=6))
    table.open_manual_shoe()
    table.draw([None])
    assert table.state == State.HELD and table.model.card_due() is None
    table.draw([None])
    assert table.state == State.HELD and len(table.events(Burned)) == 1
    table.draw([card_id(parse_cards("KS")[0])])
    assert table.state == State.BURNING
    deal_while_due(table, iter(tagged_shoe(6, seed=15)))
    assert len(table.events(Burned)) == 11
