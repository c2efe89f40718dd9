"""Settlement of every bet under every commission option, hand-checked in minor units."""

from __future__ import annotations

from fractions import Fraction

import pytest

from cardshoe.controller.rules.errors import RulesError
from cardshoe.controller.rules.games import get_game
from cardshoe.controller.rules.paytables import SEVEN_UP_SUPER_SEVENS_2_5_17_70_700, Bet
from cardshoe.controller.rules.rounds import Outcome
from cardshoe.controller.rules.settlement import BetResult, Rounding

WIN, PUSH, LOSS = BetResult.WIN, BetResult.PUSH, BetResult.LOSS


def outcome(
    player: int, banker: int, *, player_pair: bool = False, banker_pair: bool = False, sevens=0
) -> Outcome:
    return Outcome(
        player_total=player,
        banker_total=banker,
        natural=max(player, banker) >= 8,
        player_pair=player_pair,
        banker_pair=banker_pair,
        sevens=sevens,
    )


# (game, commission, outcome, bet, stake, result, winnings paid on top of the stake)
CASES = [
    # Punto Banco, 5% commission on Banker wins: 0.95 to 1, rounded down.
    ("punto-banco", "5pct", outcome(3, 6), Bet.BANKER, 1000, WIN, 950),
    ("punto-banco", "5pct", outcome(3, 6), Bet.BANKER, 7, WIN, 6),  # 6.65
    ("punto-banco", "5pct", outcome(3, 6), Bet.BANKER, 20, WIN, 19),
    ("punto-banco", "5pct", outcome(3, 6), Bet.PLAYER, 1000, LOSS, 0),
    ("punto-banco", "5pct", outcome(7, 6), Bet.PLAYER, 1000, WIN, 1000),
    ("punto-banco", "5pct", outcome(7, 6), Bet.BANKER, 1000, LOSS, 0),
    ("punto-banco", "5pct", outcome(5, 5), Bet.PLAYER, 1000, PUSH, 0),
    ("punto-banco", "5pct", outcome(5, 5), Bet.BANKER, 1000, PUSH, 0),
    ("punto-banco", "5pct", outcome(5, 5), Bet.TIE, 1000, WIN, 8000),
    ("punto-banco", "5pct", outcome(5, 6), Bet.TIE, 1000, LOSS, 0),
    ("punto-banco", "5pct", outcome(5, 6, player_pair=True), Bet.PLAYER_PAIR, 100, WIN, 1100),
    ("punto-banco", "5pct", outcome(5, 6, player_pair=True), Bet.BANKER_PAIR, 100, LOSS, 0),
    ("punto-banco", "5pct", outcome(5, 6, banker_pair=True), Bet.BANKER_PAIR, 100, WIN, 1100),
    # Punto Banco no-commission: a Banker win with 6 pays 1 to 2; nothing else changes.
    ("punto-banco", "half-on-6", outcome(3, 6), Bet.BANKER, 1000, WIN, 500),
    ("punto-banco", "half-on-6", outcome(3, 6), Bet.BANKER, 5, WIN, 2),  # 2.5
    ("punto-banco", "half-on-6", outcome(3, 7), Bet.BANKER, 1000, WIN, 1000),
    ("punto-banco", "half-on-6", outcome(6, 3), Bet.PLAYER, 1000, WIN, 1000),
    ("punto-banco", "half-on-6", outcome(6, 6), Bet.TIE, 1000, WIN, 8000),
    # 7 Up: Banker with 7 pays 9 to 5, Player with 7 pays 1 to 2, Tie with 7 pays 9 to 1.
    ("seven-up", "none", outcome(3, 7), Bet.BANKER, 1000, WIN, 1800),
    ("seven-up", "none", outcome(3, 7), Bet.BANKER, 3, WIN, 5),  # 5.4
    ("seven-up", "none", outcome(3, 8), Bet.BANKER, 1000, WIN, 1000),
    ("seven-up", "none", outcome(7, 3), Bet.PLAYER, 1000, WIN, 500),
    ("seven-up", "none", outcome(7, 3), Bet.PLAYER, 3, WIN, 1),  # 1.5
    ("seven-up", "none", outcome(9, 3), Bet.PLAYER, 1000, WIN, 1000),
    ("seven-up", "none", outcome(7, 3), Bet.BANKER, 1000, LOSS, 0),
    ("seven-up", "none", outcome(7, 7), Bet.TIE, 1000, WIN, 9000),
    ("seven-up", "none", outcome(7, 7), Bet.PLAYER, 1000, PUSH, 0),
    ("seven-up", "none", outcome(4, 4), Bet.TIE, 1000, WIN, 7000),
    # Super 7's: 2/7/17/77/777 to 1 for 2..6 sevens, the mandatory seven included.
    ("seven-up", "none", outcome(4, 4, sevens=1), Bet.SUPER_SEVENS, 100, LOSS, 0),
    ("seven-up", "none", outcome(4, 4, sevens=2), Bet.SUPER_SEVENS, 100, WIN, 200),
    ("seven-up", "none", outcome(4, 4, sevens=3), Bet.SUPER_SEVENS, 100, WIN, 700),
    ("seven-up", "none", outcome(4, 4, sevens=4), Bet.SUPER_SEVENS, 100, WIN, 1700),
    ("seven-up", "none", outcome(4, 4, sevens=5), Bet.SUPER_SEVENS, 100, WIN, 7700),
    ("seven-up", "none", outcome(4, 4, sevens=6), Bet.SUPER_SEVENS, 100, WIN, 77700),
    # Macau Art. 17.1: 5% of the winnings when either side wins with 7, 8 or 9.
    ("macau-1", "5pct-on-789", outcome(7, 3), Bet.PLAYER, 1000, WIN, 950),
    ("macau-1", "5pct-on-789", outcome(3, 9), Bet.BANKER, 1000, WIN, 950),
    ("macau-1", "5pct-on-789", outcome(8, 3), Bet.PLAYER, 30, WIN, 28),  # 28.5
    ("macau-1", "5pct-on-789", outcome(3, 6), Bet.BANKER, 1000, WIN, 1000),
    ("macau-1", "5pct-on-789", outcome(6, 3), Bet.PLAYER, 1000, WIN, 1000),
    ("macau-1", "5pct-on-789", outcome(7, 7), Bet.PLAYER, 1000, PUSH, 0),
    ("macau-1", "5pct-on-789", outcome(7, 7), Bet.TIE, 1000, WIN, 14000),
    ("macau-1", "5pct-on-789", outcome(2, 7, banker_pair=True), Bet.BANKER_PAIR, 10, WIN, 110),
    ("macau-2", "5pct-on-789", outcome(7, 7), Bet.TIE, 1000, WIN, 9000),
    ("macau-2", "5pct-on-789", outcome(9, 1), Bet.PLAYER, 1000, WIN, 950),
    ("macau-2", "5pct-on-789", outcome(1, 2, player_pair=True), Bet.PLAYER_PAIR, 10, WIN, 110),
    # Macau Art. 17.2: no commission, but a win with 4 pays half.
    ("macau-1", "half-on-4", outcome(4, 3), Bet.PLAYER, 1000, WIN, 500),
    ("macau-1", "half-on-4", outcome(3, 4), Bet.BANKER, 1000, WIN, 500),
    ("macau-2", "half-on-4", outcome(3, 4), Bet.BANKER, 25, WIN, 12),  # 12.5
    ("macau-2", "half-on-4", outcome(3, 7), Bet.BANKER, 1000, WIN, 1000),
    ("macau-2", "half-on-4", outcome(9, 3), Bet.PLAYER, 1000, WIN, 1000),
    ("macau-2", "half-on-4", outcome(4, 4), Bet.TIE, 1000, WIN, 9000),
]


@pytest.mark.parametrize(
    ("game_name", "commission", "result_of_round", "bet", "stake", "result", "winnings"), CASES
)
def test_settlement(
    game_name: str,
    commission: str,
    result_of_round: Outcome,
    bet: Bet,
    stake: int,
    result: BetResult,
    winnings: int,
) -> None:
    settlement = get_game(game_name, commission).settle(result_of_round, bet, stake)
    assert (settlement.result, settlement.winnings) == (result, winnings)
    expected_returned = {WIN: stake + winnings, PUSH: stake, LOSS: 0}[result]
    assert settlement.returned == expected_returned
    assert settlement.net == expected_returned - stake


def test_commission_and_rounding_are_exact() -> None:
    settlement = get_game("punto-banco").settle(outcome(3, 6), Bet.BANKER, 7)
    assert settlement.commission == Fraction(7, 20)
    assert settlement.exact_winnings == Fraction(133, 20)
    assert settlement.winnings == 6


def test_a_casino_super_sevens_table() -> None:
    game = get_game("seven-up", paytable=SEVEN_UP_SUPER_SEVENS_2_5_17_70_700)
    paid = [
        game.settle(outcome(4, 4, sevens=sevens), Bet.SUPER_SEVENS, 1).winnings
        for sevens in range(2, 7)
    ]
    assert paid == [2, 5, 17, 70, 700]


@pytest.mark.parametrize(
    ("game_name", "bet"),
    [
        ("seven-up", Bet.PLAYER_PAIR),
        ("seven-up", Bet.BANKER_PAIR),
        ("punto-banco", Bet.SUPER_SEVENS),
        ("macau-1", Bet.SUPER_SEVENS),
    ],
)
def test_a_bet_the_game_does_not_offer(game_name: str, bet: Bet) -> None:
    with pytest.raises(RulesError, match="not offered"):
        get_game(game_name).settle(outcome(4, 4), bet, 100)


@pytest.mark.parametrize("stake", [0, -5, True, 2.5, Fraction(3, 2)])
def test_a_stake_is_a_positive_whole_number_of_minor_units(stake: object) -> None:
    with pytest.raises(RulesError, match="minor units"):
        get_game("punto-banco").settle(outcome(4, 4), Bet.TIE, stake)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("game_name", "bets"),
    [
        ("punto-banco", ["player", "banker", "tie", "player_pair", "banker_pair"]),
        ("seven-up", ["player", "banker", "tie", "super_sevens"]),
        ("macau-1", ["player", "banker", "tie", "player_pair", "banker_pair"]),
    ],
)
def test_bets_offered(game_name: str, bets: list[str]) -> None:
    assert [bet.value for bet in get_game(game_name).bets] == bets


@pytest.mark.parametrize(
    ("game", "commission", "won", "bet", "stake", "floor", "half_up"),
    [
        ("macau-2", "half-on-4", outcome(3, 4), Bet.BANKER, 25, 12, 13),  # 12.5
        ("punto-banco", "5pct", outcome(3, 7), Bet.BANKER, 7, 6, 7),  # 6.65
        ("seven-up", None, outcome(3, 7), Bet.BANKER, 3, 5, 5),  # 5.4 (9:5 with a 7)
    ],
)
def test_winnings_are_rounded_by_the_table_s_approved_option(
    game: str,
    commission: str | None,
    won: Outcome,
    bet: Bet,
    stake: int,
    floor: int,
    half_up: int,
) -> None:
    """Rounding is in neither text, so it is an option (Art. 18): floor by default."""
    assert get_game(game, commission).settle(won, bet, stake).winnings == floor
    rounded = get_game(game, commission, rounding=Rounding.HALF_UP).settle(won, bet, stake)
    assert (rounded.winnings, rounded.exact_winnings) == (
        half_up,
        get_game(game, commission).settle(won, bet, stake).exact_winnings,
    )
