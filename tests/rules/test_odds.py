"""Exact odds: the published figures, and the fast enumeration against brute force."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from itertools import permutations
from math import perm

import pytest

from cardshoe.controller.rules.cards import parse_cards
from cardshoe.controller.rules.games import GAME_NAMES, get_game
from cardshoe.controller.rules.hands import Winner
from cardshoe.controller.rules.odds import OddsReport, compute_odds, outcome_counts
from cardshoe.controller.rules.paytables import Bet
from cardshoe.controller.rules.rounds import Outcome

# Wizard of Odds, 8-deck Punto Banco.
PB8_TOTAL = 4_998_398_275_503_360
PB8_BANKER = 2_292_252_566_437_888
PB8_PLAYER = 2_230_518_282_592_256
PB8_TIE = 475_627_426_473_216


@pytest.fixture(scope="module")
def punto_banco_8() -> OddsReport:
    return compute_odds(get_game("punto-banco"), 8)


def percent(edge: Fraction) -> float:
    return round(float(edge) * 100, 4)


def test_punto_banco_8_deck_counts(punto_banco_8: OddsReport) -> None:
    assert punto_banco_8.total == PB8_TOTAL == perm(416, 6)
    assert punto_banco_8.winners == {
        Winner.BANKER: PB8_BANKER,
        Winner.PLAYER: PB8_PLAYER,
        Winner.TIE: PB8_TIE,
    }


def test_punto_banco_8_deck_house_edges(punto_banco_8: OddsReport) -> None:
    edges = {bet: odds.house_edge for bet, odds in punto_banco_8.bets.items()}
    assert edges[Bet.BANKER] == (PB8_PLAYER - Fraction(19, 20) * PB8_BANKER) / PB8_TOTAL
    assert edges[Bet.PLAYER] == Fraction(PB8_BANKER - PB8_PLAYER, PB8_TOTAL)
    assert edges[Bet.TIE] == 1 - Fraction(9 * PB8_TIE, PB8_TOTAL)
    # A hand's first two cards pair with probability (32 - 1) / (416 - 1) = 31/415.
    assert edges[Bet.PLAYER_PAIR] == edges[Bet.BANKER_PAIR] == 1 - 12 * Fraction(31, 415)
    assert {bet.value: percent(edge) for bet, edge in edges.items()} == {
        "banker": 1.0579,
        "player": 1.2351,
        "tie": 14.3596,
        "player_pair": 10.3614,
        "banker_pair": 10.3614,
    }


def test_seven_up_6_deck_player_bet() -> None:
    report = compute_odds(get_game("seven-up"), 6)
    assert report.total == 2_862_766_146_240 == perm(312, 5)
    assert report.bets[Bet.PLAYER].returns == {
        Fraction(1): 818_970_471_360,
        Fraction(1, 2): 561_338_904_384,
        Fraction(0): 308_245_281_984,
        Fraction(-1): 1_174_211_488_512,
    }
    assert set(report.bets) == {Bet.PLAYER, Bet.BANKER, Bet.TIE, Bet.SUPER_SEVENS}


@pytest.mark.parametrize("name", ["macau-1", "macau-2"])
def test_macau_rules_favour_neither_hand(name: str) -> None:
    """Art. 9 treats the hands alike (Player-first on equal totals changes no probability)."""
    report = compute_odds(get_game(name), 6)
    assert report.winners[Winner.PLAYER] == report.winners[Winner.BANKER]
    assert sum(report.winners.values()) == perm(312, 6)


def test_half_on_6_changes_only_the_banker_bet(punto_banco_8: OddsReport) -> None:
    no_commission = compute_odds(get_game("punto-banco", "half-on-6"), 8)
    assert no_commission.winners == punto_banco_8.winners
    assert no_commission.bets[Bet.PLAYER] == punto_banco_8.bets[Bet.PLAYER]
    assert no_commission.bets[Bet.BANKER].house_edge != punto_banco_8.bets[Bet.BANKER].house_edge


# Two 7s, a same-rank pair of kings counted twice over, a queen (value 0, other rank).
SMALL_SHOE = "7S 7H KD KD QS 3C 5H"


@pytest.mark.parametrize("name", GAME_NAMES)
def test_enumeration_matches_dealing_every_ordered_deal(name: str) -> None:
    game = get_game(name)
    cards = parse_cards(SMALL_SHOE)
    brute_force: Counter[Outcome] = Counter()
    for order in permutations(cards, game.dealing.max_shoe_cards):
        current = game.new_round()
        for card in order:
            if current.is_complete:
                break
            current.deal(card)
        brute_force[current.outcome()] += 1
    assert outcome_counts(game.dealing, Counter(cards)) == brute_force
