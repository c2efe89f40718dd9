"""Who gets each card, checked against tables written out by hand from the rule texts."""

from __future__ import annotations

import pytest

from cardshoe.controller.rules.cards import MANDATORY_SEVEN, parse_cards
from cardshoe.controller.rules.games import get_game
from cardshoe.controller.rules.hands import Hand, Winner
from cardshoe.controller.rules.rounds import RoundInProgress

P, B = Hand.PLAYER, Hand.BANKER


def card_text(value: int, suit: str = "S") -> str:
    """A card of this point value: K for 0, otherwise the rank of that number."""
    return ("K" if value == 0 else "A23456789"[value - 1]) + suit


def deal_all(current: RoundInProgress, shoe: str) -> RoundInProgress:
    for card in parse_cards(shoe):
        current.deal(card)
    return current


def play(game_name: str, shoe: str) -> RoundInProgress:
    """Deal the shoe order into one round; the order must not outlast the round."""
    return deal_all(get_game(game_name).new_round(), shoe)


def hand_total(cards: tuple) -> int:
    return sum(card.value for card in cards) % 10


# After the initial deal, by Player's two-card total (rows) and Banker's (columns):
# P = Player draws, B = Player stands and Banker draws, - = nobody draws (7 Up 3.9.1-3.9.3).
AFTER_INITIAL_DEAL = {
    #    Banker: 0123456789
    0: "PPPPPPPP--",
    1: "PPPPPPPP--",
    2: "PPPPPPPP--",
    3: "PPPPPPPP--",
    4: "PPPPPPPP--",
    5: "PPPPPPPP--",
    6: "BBBBBB----",
    7: "BBBBBB----",
    8: "----------",
    9: "----------",
}

# When Player has drawn, by Banker's two-card total (rows) and Player's third card value
# (columns): D = Banker draws, S = Banker stands (7 Up 3.9.4).
BANKER_AFTER_PLAYER_THIRD = {
    #    Player third card: 0123456789
    0: "DDDDDDDDDD",
    1: "DDDDDDDDDD",
    2: "DDDDDDDDDD",
    3: "DDDDDDDDSD",
    4: "SSDDDDDDSS",
    5: "SSSSDDDDSS",
    6: "SSSSSSDDSS",
    7: "SSSSSSSSSS",
}

NEXT_BY_SYMBOL = {"P": Hand.PLAYER, "B": Hand.BANKER, "-": None}
TABLEAU_GAMES = ["punto-banco", "seven-up"]


def initial_shoe(game_name: str, player_total: int, banker_total: int) -> str:
    """Shoe cards giving these two-card totals, in the game's initial dealing order."""
    banker_first, banker_second = card_text(banker_total, "H"), card_text(0, "D")
    if game_name == "seven-up":
        return f"{banker_first} {card_text((player_total - 7) % 10)} {banker_second}"
    return f"{card_text(player_total)} {banker_first} {card_text(0, 'C')} {banker_second}"


@pytest.mark.parametrize("game_name", TABLEAU_GAMES)
@pytest.mark.parametrize("player_total", range(10))
def test_tableau_after_initial_deal(game_name: str, player_total: int) -> None:
    for banker_total, symbol in enumerate(AFTER_INITIAL_DEAL[player_total]):
        current = play(game_name, initial_shoe(game_name, player_total, banker_total))
        assert (hand_total(current.player), hand_total(current.banker)) == (
            player_total,
            banker_total,
        )
        assert current.next_recipient() is NEXT_BY_SYMBOL[symbol], (player_total, banker_total)


@pytest.mark.parametrize("game_name", TABLEAU_GAMES)
@pytest.mark.parametrize("banker_total", range(6))
def test_banker_draws_once_when_player_stands(game_name: str, banker_total: int) -> None:
    for player_total in (6, 7):
        current = play(game_name, initial_shoe(game_name, player_total, banker_total) + " 9S")
        assert current.dealt[-1].to is B
        assert current.is_complete


@pytest.mark.parametrize("game_name", TABLEAU_GAMES)
@pytest.mark.parametrize("banker_total", range(8))
def test_tableau_banker_after_player_third_card(game_name: str, banker_total: int) -> None:
    for third, symbol in enumerate(BANKER_AFTER_PLAYER_THIRD[banker_total]):
        for player_total in range(6):
            shoe = initial_shoe(game_name, player_total, banker_total) + " " + card_text(third)
            current = play(game_name, shoe)
            assert current.dealt[-1].to is P
            expected = B if symbol == "D" else None
            assert current.next_recipient() is expected, (banker_total, third, player_total)
            if expected is B:
                current.deal(parse_cards("5C")[0])
                assert current.is_complete


def test_punto_banco_initial_order_is_player_banker_player_banker() -> None:
    current = play("punto-banco", "2S 3H 4D 5C")
    assert [dealt.to for dealt in current.dealt] == [P, B, P, B]
    assert [str(card) for card in current.player] == ["2S", "4D"]
    assert [str(card) for card in current.banker] == ["3H", "5C"]


def test_seven_up_mandatory_seven_then_banker_player_banker() -> None:
    current = get_game("seven-up").new_round()
    assert current.player == (MANDATORY_SEVEN,)
    assert current.banker == ()
    deal_all(current, "2S KH 5D")
    assert [dealt.to for dealt in current.dealt] == [B, P, B]
    assert [str(card) for card in current.player] == ["7*", "KH"]
    assert [str(card) for card in current.banker] == ["2S", "5D"]
    assert [str(dealt.card) for dealt in current.dealt] == ["2S", "KH", "5D"]


def test_seven_up_natural_from_the_mandatory_seven_takes_three_shoe_cards() -> None:
    current = play("seven-up", "3S 2H 4D")
    assert current.is_complete
    outcome = current.outcome()
    assert (outcome.player_total, outcome.banker_total, outcome.natural) == (9, 7, True)
    assert outcome.winner is Winner.PLAYER


def test_seven_up_sevens_count_includes_the_mandatory_seven() -> None:
    # Player 7*+7 = 4 draws a 7 (1); Banker 7+7 = 4 draws on a Player 7: 7 (1). Tie.
    current = play("seven-up", "7S 7H 7D 7C 7S")
    assert [dealt.to for dealt in current.dealt] == [B, P, B, P, B]
    outcome = current.outcome()
    assert (outcome.sevens, outcome.winner, outcome.player_total) == (6, Winner.TIE, 1)


MACAU_GAMES = ["macau-1", "macau-2"]

# Art. 9, cases where methods 1 and 2 agree: (shoe, the hands that drew third cards in
# order, Player total, Banker total, winner). The initial deal is always P B P B.
MACAU_BOTH_METHODS = [
    # (1) A natural on either side decides at once; the higher total wins.
    ("3S 4H 5D KC", "", 8, 4, Winner.PLAYER),
    ("KS 4H 2D 5C", "", 2, 9, Winner.BANKER),
    ("4S 4H 5D 5C", "", 9, 9, Winner.TIE),
    ("4S 4H 4D 5C", "", 8, 9, Winner.BANKER),
    # (2) Equal totals 0-7: both draw, Player first; higher wins, equal ties.
    ("AS 3H 2D KC 5S 4H", "PB", 8, 7, Winner.PLAYER),
    ("3S 4H 4D 3C KS KH", "PB", 7, 7, Winner.TIE),
    ("KS QH JD TC 2S 9H", "PB", 2, 9, Winner.BANKER),
    # (3)(1) The lower hand draws first and is still lower: the other stands and wins.
    ("AS 2H AD 3C AH", "P", 3, 5, Winner.BANKER),
    ("2S 3H 2D 3C 9H", "P", 3, 6, Winner.BANKER),
    ("5S AH 2D AC 3H", "B", 7, 5, Winner.PLAYER),
    # (3) The lower hand draws first and is now higher: the other must draw.
    ("AS 2H AD 3C 6H 4S", "PB", 8, 9, Winner.BANKER),
    ("AS 2H AD 3C 6H AS", "PB", 8, 6, Winner.PLAYER),
    ("AS 2H AD 3C 6H 3S", "PB", 8, 8, Winner.TIE),
    ("5S AH 2D AC 6H 3S", "BP", 0, 8, Winner.BANKER),
]

# (3) The lower hand draws first and is now EQUAL: method 1 makes the other hand draw...
MACAU_METHOD_1_EQUAL = [
    ("AS 2H AD 3C 3H 2S", "PB", 5, 7, Winner.BANKER),
    ("6S AH AD AC 5H 3S", "BP", 0, 7, Winner.BANKER),
    ("4S 2H 2D 3C AH 3S", "BP", 9, 6, Winner.PLAYER),
]

# ...method 2 makes it stand, and the round is a tie.
MACAU_METHOD_2_EQUAL = [
    ("AS 2H AD 3C 3H", "P", 5, 5, Winner.TIE),
    ("6S AH AD AC 5H", "B", 7, 7, Winner.TIE),
    ("4S 2H 2D 3C AH", "B", 6, 6, Winner.TIE),
]


def check_macau(game_name: str, shoe: str, thirds: str, player: int, banker: int, winner) -> None:
    current = play(game_name, shoe)
    assert current.is_complete
    assert [dealt.to for dealt in current.dealt] == [P, B, P, B] + [
        NEXT_BY_SYMBOL[symbol] for symbol in thirds
    ]
    outcome = current.outcome()
    assert (outcome.player_total, outcome.banker_total, outcome.winner) == (player, banker, winner)


@pytest.mark.parametrize("game_name", MACAU_GAMES)
@pytest.mark.parametrize(("shoe", "thirds", "player", "banker", "winner"), MACAU_BOTH_METHODS)
def test_macau_both_methods(game_name: str, shoe, thirds, player, banker, winner) -> None:
    check_macau(game_name, shoe, thirds, player, banker, winner)


@pytest.mark.parametrize(("shoe", "thirds", "player", "banker", "winner"), MACAU_METHOD_1_EQUAL)
def test_macau_method_1_other_hand_draws_on_equal(shoe, thirds, player, banker, winner) -> None:
    check_macau("macau-1", shoe, thirds, player, banker, winner)


@pytest.mark.parametrize(("shoe", "thirds", "player", "banker", "winner"), MACAU_METHOD_2_EQUAL)
def test_macau_method_2_equal_is_a_tie(shoe, thirds, player, banker, winner) -> None:
    check_macau("macau-2", shoe, thirds, player, banker, winner)


@pytest.mark.parametrize("game_name", MACAU_GAMES)
def test_macau_lower_hand_first_differs_from_the_tableau(game_name: str) -> None:
    """Player 3 v Banker 2: Macau deals the lower hand (Banker) first, the tableau Player."""
    macau = play(game_name, "AS AH 2D AC 9H")
    tableau = play("punto-banco", "AS AH 2D AC 9H")
    assert macau.dealt[4].to is B
    assert tableau.dealt[4].to is P
