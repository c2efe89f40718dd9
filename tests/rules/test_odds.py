"""Exact odds: the published figures, and the pricing of any shoe against brute force."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from itertools import permutations
from math import perm

import pytest

from cardshoe.controller.rules.cards import Card, ShoeComposition, parse_cards
from cardshoe.controller.rules.errors import RulesError
from cardshoe.controller.rules.games import GAME_NAMES, Game, get_game
from cardshoe.controller.rules.hands import Winner
from cardshoe.controller.rules.odds import OddsReport, compute_odds, price_shoe
from cardshoe.controller.rules.paytables import Bet
from cardshoe.controller.rules.rounds import SEVEN

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
# What is left of one deck once these 44 cards are seen: 7C 7D KS KH 2S 9D 8H 4C.
LEFT_OF_ONE_DECK = {"7C", "7D", "KS", "KH", "2S", "9D", "8H", "4C"}


def card_by_card(game: Game, cards: list[Card]) -> dict[Bet, Counter[Fraction]]:
    """Every bet's gains over every ordered deal of the shoe's first cards, one by one."""
    returns: dict[Bet, Counter[Fraction]] = {bet: Counter() for bet in game.bets}
    for order in permutations(cards, game.dealing.max_shoe_cards):
        current = game.new_round()
        for card in order:
            if current.is_complete:
                break
            current.deal(card)
        for bet in game.bets:
            returns[bet][game.net_return(bet, current.outcome())] += 1
    return returns


@pytest.mark.parametrize("name", GAME_NAMES)
def test_pricing_matches_dealing_every_ordered_deal(name: str) -> None:
    game = get_game(name)
    cards = parse_cards(SMALL_SHOE)
    report = price_shoe(game, 1, Counter(cards))
    assert {bet: odds.returns for bet, odds in report.bets.items()} == card_by_card(game, cards)
    assert report.total == perm(len(cards), game.dealing.max_shoe_cards)


@pytest.mark.parametrize("name", GAME_NAMES)
def test_remaining_shoe_matches_dealing_every_ordered_deal(name: str) -> None:
    """The remaining-shoe path: a deck with 44 cards seen, priced against the 8 left."""
    game = get_game(name)
    deck = list(ShoeComposition(1).cards())
    seen = [card for card in deck if str(card) not in LEFT_OF_ONE_DECK]
    left = [card for card in deck if str(card) in LEFT_OF_ONE_DECK]
    report = price_shoe(game, 1, ShoeComposition(1).remaining(seen))
    assert report.cards_left == 8
    assert {bet: odds.returns for bet, odds in report.bets.items()} == card_by_card(game, left)


def test_a_card_the_shoe_cannot_hold_is_bad_input() -> None:
    with pytest.raises(RulesError, match=r"AS seen 2 times, but 1 deck\(s\) hold 1"):
        ShoeComposition(1).remaining(parse_cards("AS KD AS"))


def test_too_few_cards_to_price_a_round_is_bad_input() -> None:
    with pytest.raises(RulesError, match="5 cards left"):
        price_shoe(get_game("punto-banco"), 1, Counter(parse_cards("AS KD 2C 3H 4S")))


def test_seen_cards_move_the_super_sevens_edge() -> None:
    """Sevens left in the shoe are what a Super 7's counter waits for."""
    game = get_game("seven-up")
    full = price_shoe(game, 6, ShoeComposition(6).remaining(()))
    no_sevens_seen = [card for card in ShoeComposition(6).cards() if card.rank != SEVEN][:150]
    rich = price_shoe(game, 6, ShoeComposition(6).remaining(no_sevens_seen))
    assert rich.bets[Bet.SUPER_SEVENS].house_edge < 0 < full.bets[Bet.SUPER_SEVENS].house_edge
