"""Exact odds and house edge of every bet, by full enumeration (no sampling).

A casino submits these figures when it asks the regulator to approve its
options (Macau Art. 18), so they are exact integers and Fractions.

Counts are of ordered deals of the first max_shoe_cards cards of a shuffled
shoe (6 cards, 5 in 7 Up), even when a round uses fewer: the published
figures count that way. Enumerating card by card would take ~15 s for eight
decks, so the enumeration works on compositions with integer weights:

- The initial deal is enumerated as the multiset of ranks each hand gets.
  The number of ordered deals behind a multiset is its arrangements times
  the falling product of each rank's count. Ranks are needed there only for
  the pair bets; what follows depends on card values alone.
- From each initial deal, third cards are enumerated by value (10 values
  with counts), asking Dealing.next_recipient at every step: the same code
  that deals live rounds, so the Macau lower-hand-first order is followed.
- Initial deals with the same values share that enumeration, and a round
  that ends after k cards stands for (size-k)(size-k-1)... orderings of the
  unused positions.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations_with_replacement
from math import factorial, perm, prod

from cardshoe.controller.rules.cards import Card, ShoeComposition
from cardshoe.controller.rules.drawing import Dealing
from cardshoe.controller.rules.games import Game
from cardshoe.controller.rules.hands import Hand, Winner, is_natural, point_total
from cardshoe.controller.rules.paytables import Bet
from cardshoe.controller.rules.rounds import SEVEN, Outcome

HandValues = tuple[int, ...]
LeafKey = tuple[int, int, int]
"""(player total, banker total, sevens) at the end of a round."""
OutcomeFields = tuple[int, int, bool, bool, bool, int]
"""Outcome's fields, in their order."""


@dataclass(frozen=True)
class BetOdds:
    """How often a bet returns what, over every ordered deal."""

    bet: Bet
    returns: Mapping[Fraction, int]
    """Exact gain per unit staked (-1 loss, 0 push, odds after commission) -> ordered deals."""
    total: int

    @property
    def house_edge(self) -> Fraction:
        """The house's expected gain as a fraction of the stake (positive favours the house)."""
        expected = sum((gain * deals for gain, deals in self.returns.items()), Fraction(0))
        return -expected / self.total


@dataclass(frozen=True)
class OddsReport:
    """Exact outcome counts and every bet's return distribution for one game and shoe."""

    game: Game
    decks: int
    total: int
    """Ordered deals of the first game.dealing.max_shoe_cards cards of the shoe."""
    winners: Mapping[Winner, int]
    bets: Mapping[Bet, BetOdds]

    def probability(self, winner: Winner) -> Fraction:
        return Fraction(self.winners[winner], self.total)


def compute_odds(game: Game, decks: int) -> OddsReport:
    """Enumerate every round of `game` from a fresh shoe of `decks` decks."""
    copies = ShoeComposition(decks).copies_per_card
    outcomes = outcome_counts(game.dealing, {card: copies for card in ShoeComposition(1).cards()})
    total = sum(outcomes.values())
    winners = {winner: 0 for winner in Winner}
    for outcome, deals in outcomes.items():
        winners[outcome.winner] += deals
    bets = {}
    for bet in game.bets:
        returns: Counter[Fraction] = Counter()
        for outcome, deals in outcomes.items():
            returns[game.net_return(bet, outcome)] += deals
        bets[bet] = BetOdds(bet, dict(returns), total)
    return OddsReport(game, decks, total, winners, bets)


def outcome_counts(dealing: Dealing, shoe: Mapping[Card, int]) -> Counter[Outcome]:
    """How many ordered deals of dealing.max_shoe_cards shoe cards end in each outcome.

    shoe maps each distinct card to the number of copies in the shoe.
    """
    rank_counts: Counter[int] = Counter()
    for card, copies in shoe.items():
        rank_counts[card.rank] += copies
    value_of_rank = {card.rank: card.value for card in (*dealing.player_starts_with, *shoe)}
    value_counts = [0] * 10
    for rank, count in rank_counts.items():
        value_counts[value_of_rank[rank]] += count
    size = sum(rank_counts.values())
    most = dealing.max_shoe_cards
    tails = [perm(size - used, most - used) for used in range(min(size, most) + 1)]
    placed = len(dealing.player_starts_with)

    tally: defaultdict[OutcomeFields, int] = defaultdict(int)
    third_cards: dict[tuple[HandValues, HandValues], dict[LeafKey, int]] = {}
    for initial, deals in _initial_deals(dealing, rank_counts, value_of_rank).items():
        player, banker, player_pair, banker_pair = initial
        leaves = third_cards.get((player, banker))
        if leaves is None:
            remaining = list(value_counts)
            for value in player[placed:] + banker:
                remaining[value] -= 1
            used = len(player) - placed + len(banker)
            found: defaultdict[LeafKey, int] = defaultdict(int)
            _deal_third_cards(dealing, player, banker, remaining, 1, used, tails, found)
            leaves = third_cards[(player, banker)] = dict(found)
        natural = is_natural(player) or is_natural(banker)
        for (player_total, banker_total, sevens), weight in leaves.items():
            fields = (player_total, banker_total, natural, player_pair, banker_pair, sevens)
            tally[fields] += deals * weight
    return Counter({Outcome(*fields): deals for fields, deals in tally.items()})


def _initial_deals(
    dealing: Dealing, rank_counts: Mapping[int, int], value_of_rank: Mapping[int, int]
) -> dict[tuple[HandValues, HandValues, bool, bool], int]:
    """Ordered deals behind each initial deal, keyed by hand values and pair flags.

    Within a hand the values come in rank order, not deal order: no drawing
    rule looks at the order of a hand's first two cards.
    """
    placed_ranks = tuple(card.rank for card in dealing.player_starts_with)
    ranks = sorted(rank_counts)
    player_cards = dealing.initial_order.count(Hand.PLAYER)
    banker_cards = dealing.initial_order.count(Hand.BANKER)
    initial_deals: defaultdict[tuple[HandValues, HandValues, bool, bool], int] = defaultdict(int)
    for player_ranks in combinations_with_replacement(ranks, player_cards):
        for banker_ranks in combinations_with_replacement(ranks, banker_cards):
            deals = (
                _arrangements(player_ranks)
                * _arrangements(banker_ranks)
                * _falling_product(rank_counts, player_ranks + banker_ranks)
            )
            if deals == 0:
                continue
            player_hand = placed_ranks + player_ranks
            key = (
                tuple(value_of_rank[rank] for rank in player_hand),
                tuple(value_of_rank[rank] for rank in banker_ranks),
                player_hand[0] == player_hand[1],
                banker_ranks[0] == banker_ranks[1],
            )
            initial_deals[key] += deals
    return dict(initial_deals)


def _deal_third_cards(
    dealing: Dealing,
    player: HandValues,
    banker: HandValues,
    remaining: list[int],
    weight: int,
    used: int,
    tails: list[int],
    leaves: defaultdict[LeafKey, int],
) -> None:
    """Follow next_recipient from these hands over every value the shoe can still give."""
    recipient = dealing.next_recipient(player, banker)
    if recipient is None:
        sevens = player.count(SEVEN) + banker.count(SEVEN)
        leaves[(point_total(player), point_total(banker), sevens)] += weight * tails[used]
        return
    for value, count in enumerate(remaining):
        if count == 0:
            continue
        remaining[value] = count - 1
        if recipient is Hand.PLAYER:
            _deal_third_cards(
                dealing,
                (*player, value),
                banker,
                remaining,
                weight * count,
                used + 1,
                tails,
                leaves,
            )
        else:
            _deal_third_cards(
                dealing,
                player,
                (*banker, value),
                remaining,
                weight * count,
                used + 1,
                tails,
                leaves,
            )
        remaining[value] = count


def _arrangements(ranks: tuple[int, ...]) -> int:
    """Distinct orders of a multiset of ranks."""
    return factorial(len(ranks)) // prod(factorial(n) for n in Counter(ranks).values())


def _falling_product(rank_counts: Mapping[int, int], taken: tuple[int, ...]) -> int:
    """Ways to take these ranks, as distinct physical cards, from the shoe."""
    return prod(perm(rank_counts[rank], n) for rank, n in Counter(taken).items())
