"""The round-in-progress API, get_game, and playing through a shoe order."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cardshoe.controller.rules.cards import MANDATORY_SEVEN, Card, Suit, parse_cards
from cardshoe.controller.rules.errors import RulesError
from cardshoe.controller.rules.games import (
    GAME_NAMES,
    commission_names,
    get_game,
    paytable_named,
    paytable_names,
)
from cardshoe.controller.rules.hands import Hand
from cardshoe.controller.rules.paytables import SEVEN_UP_SUPER_SEVENS_2_5_17_70_700
from cardshoe.controller.rules.rounds import Outcome, RoundStateError, VoidReason
from cardshoe.controller.rules.settlement import net_return
from cardshoe.controller.rules.shoe_order import play_shoe_order

shoe_cards = st.builds(Card, st.integers(1, 13), st.sampled_from(Suit))
SHOE_CARDS_PER_ROUND = {
    "punto-banco": range(4, 7),
    "macau-1": range(4, 7),
    "macau-2": range(4, 7),
    "seven-up": range(3, 6),
}


def test_game_names() -> None:
    assert GAME_NAMES == ("punto-banco", "seven-up", "macau-1", "macau-2")


@pytest.mark.parametrize(
    ("name", "commission", "expected"),
    [
        ("punto-banco", None, "5pct"),
        ("punto-banco", "half-on-6", "half-on-6"),
        ("macau-1", None, "5pct-on-789"),
        ("macau-2", "half-on-4", "half-on-4"),
        ("seven-up", None, "none"),
    ],
)
def test_commission_default_and_choice(name: str, commission: str | None, expected: str) -> None:
    assert get_game(name, commission).commission.name == expected


def test_commission_names_default_first() -> None:
    assert commission_names("punto-banco") == ("5pct", "half-on-6")
    assert commission_names("macau-1") == ("5pct-on-789", "half-on-4")


@pytest.mark.parametrize(
    ("name", "commission", "listed"),
    [
        ("baccarat", None, "punto-banco, seven-up, macau-1, macau-2"),
        ("punto-banco", "5pct-on-789", "5pct, half-on-6"),
        ("macau-2", "5pct", "5pct-on-789, half-on-4"),
        ("seven-up", "5pct", "none"),
    ],
)
def test_bad_game_or_option_is_one_line_listing_choices(
    name: str, commission: str | None, listed: str
) -> None:
    with pytest.raises(RulesError) as caught:
        get_game(name, commission)
    assert listed in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_casino_paytable_replaces_the_default() -> None:
    game = get_game("seven-up", paytable=SEVEN_UP_SUPER_SEVENS_2_5_17_70_700)
    assert game.paytable.super_sevens[5] == 70


def test_one_choice_is_one_game_shared_by_every_table() -> None:
    assert get_game("punto-banco", "half-on-6") is get_game("punto-banco", "half-on-6")
    assert get_game("punto-banco", "half-on-6") is not get_game("punto-banco")


@pytest.mark.parametrize("name", GAME_NAMES)
@given(cards=st.lists(shoe_cards, min_size=6, max_size=6))
def test_net_returns_give_every_offered_bet_its_net_return(name: str, cards: list[Card]) -> None:
    game = get_game(name)
    current = game.new_round()
    for card in cards:
        if current.is_complete:
            break
        current.deal(card)
    outcome = current.outcome()
    expected = {bet.value: game.net_return(bet, outcome) for bet in game.bets}
    returns = game.net_returns(outcome)
    assert returns == expected
    returns.clear()
    assert game.net_returns(outcome) == expected


@pytest.mark.parametrize(
    ("name", "commission", "paytable"),
    [
        (name, commission, paytable)
        for name in GAME_NAMES
        for commission in commission_names(name)
        for paytable in paytable_names(name)
    ],
)
def test_net_returns_kept_per_bet_agree_with_net_return_for_every_outcome(
    name: str, commission: str, paytable: str
) -> None:
    """The games keep each bet's return by the part of the outcome it depends on: every
    outcome there is must still get exactly what net_return works out for it."""
    game = get_game(name, commission, paytable_named(name, paytable))
    for player_total, banker_total, sevens in itertools.product(range(10), range(10), range(7)):
        for natural, player_pair, banker_pair in itertools.product((False, True), repeat=3):
            outcome = Outcome(player_total, banker_total, natural, player_pair, banker_pair, sevens)
            expected = {
                bet.value: net_return(game.paytable, game.commission, bet, outcome)
                for bet in game.bets
            }
            assert game.net_returns(outcome) == expected, outcome


def test_dealing_to_a_complete_round_raises() -> None:
    current = get_game("punto-banco").new_round()
    for card in parse_cards("4S 4H 5D 5C"):
        current.deal(card)
    assert current.is_complete
    with pytest.raises(RoundStateError, match="complete"):
        current.deal(parse_cards("2S")[0])
    assert len(current.dealt) == 4


def test_outcome_of_an_incomplete_round_raises() -> None:
    current = get_game("macau-1").new_round()
    current.deal(parse_cards("2S")[0])
    with pytest.raises(RoundStateError, match="not complete"):
        current.outcome()


def test_the_mandatory_seven_cannot_be_dealt_from_the_shoe() -> None:
    with pytest.raises(RoundStateError, match="7\\*"):
        get_game("seven-up").new_round().deal(MANDATORY_SEVEN)


def test_pairs_are_same_rank_not_same_value() -> None:
    game = get_game("macau-2")
    jacks = game.new_round()
    for card in parse_cards("JS QH JD KC 8S 9H"):
        jacks.deal(card)
    outcome = jacks.outcome()
    assert outcome.player_pair is True
    assert outcome.banker_pair is False


@pytest.mark.parametrize("name", GAME_NAMES)
@given(cards=st.lists(shoe_cards, min_size=6, max_size=6))
def test_any_shoe_order_completes_a_round(name: str, cards: list[Card]) -> None:
    current = get_game(name).new_round()
    for card in cards:
        if current.is_complete:
            with pytest.raises(RoundStateError):
                current.deal(card)
            break
        expected = current.next_recipient()
        assert current.deal(card) is expected
    assert current.is_complete
    assert len(current.dealt) in SHOE_CARDS_PER_ROUND[name]
    assert [dealt.card for dealt in current.dealt] == cards[: len(current.dealt)]
    assert 2 <= len(current.player) <= 3
    assert 2 <= len(current.banker) <= 3
    hands = {
        Hand.PLAYER: [dealt.card for dealt in current.dealt if dealt.to is Hand.PLAYER],
        Hand.BANKER: [dealt.card for dealt in current.dealt if dealt.to is Hand.BANKER],
    }
    assert list(current.banker) == hands[Hand.BANKER]
    placed = [MANDATORY_SEVEN] if name == "seven-up" else []
    assert list(current.player) == placed + hands[Hand.PLAYER]
    outcome = current.outcome()
    assert outcome.player_total == sum(card.value for card in current.player) % 10
    assert outcome.banker_total == sum(card.value for card in current.banker) % 10


@pytest.mark.parametrize("name", GAME_NAMES)
@given(cards=st.lists(shoe_cards, max_size=40))
def test_a_shoe_order_plays_to_its_end(name: str, cards: list[Card]) -> None:
    played = list(play_shoe_order(get_game(name), cards))
    assert [entry.number for entry in played] == list(range(1, len(played) + 1))
    assert [dealt.card for entry in played for dealt in entry.round.dealt] == cards
    for entry in played[:-1]:
        assert entry.void is None
        assert entry.round.is_complete
    if played:
        last = played[-1]
        assert (last.void is VoidReason.INSUFFICIENT_CARDS) is not last.round.is_complete


def test_running_out_mid_round_voids_it_and_stops() -> None:
    played = list(play_shoe_order(get_game("punto-banco"), parse_cards("4S 4H 5D 5C 2S 3H")))
    assert [entry.void for entry in played] == [None, VoidReason.INSUFFICIENT_CARDS]
    assert [str(dealt.card) for dealt in played[1].round.dealt] == ["2S", "3H"]


def test_running_out_at_a_round_boundary_just_stops() -> None:
    played = list(play_shoe_order(get_game("punto-banco"), parse_cards("4S 4H 5D 5C")))
    assert [entry.void for entry in played] == [None]
