"""Exact odds and house edge of every bet, for a full shoe or whatever is left of one.

A casino submits these figures when it asks the regulator to approve its
options (Macau Art. 18), and surveillance watches them move as a shoe is
dealt, so they are exact integers and Fractions, never sampled.

Counts are of ordered deals of the first max_shoe_cards cards of the
(remaining) shoe (6 cards, 5 in 7 Up), even when a round uses fewer: the
published figures count that way. Enumerating card by card would take ~15 s
for eight decks; the enumeration works on value compositions instead:

- What a round decides for the Player, Banker, Tie and Super 7's bets
  depends on the card values alone (0-9). For each multiset of values a
  round can use, a shoe-independent table holds how many value sequences
  with that multiset end in each (player total, banker total, sevens). It is
  built once per Dealing by asking Dealing.next_recipient at every step (the
  same code that deals live rounds, so the Macau lower-hand-first order is
  followed); each game's ships built (shipped_tables.py), and each is cached.
- Pricing a shoe is then one pass over that table: a multiset's weight is
  the falling product of the shoe's count of each value it takes, times the
  orderings of the unused positions. About 7,000 multisets: a few
  milliseconds, so the table can price its remaining shoe after every round.
- The pair bets depend on the ranks of each hand's first two cards only, so
  they have a closed form: the ways to take two cards of one rank.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from itertools import combinations_with_replacement
from math import factorial, perm, prod
from operator import mul

from cardshoe.controller.rules.cards import Card, ShoeComposition
from cardshoe.controller.rules.drawing import Dealing
from cardshoe.controller.rules.errors import RulesError
from cardshoe.controller.rules.games import Game
from cardshoe.controller.rules.hands import Hand, Winner, point_total, winner_of
from cardshoe.controller.rules.paytables import Bet
from cardshoe.controller.rules.rounds import SEVEN, Outcome
from cardshoe.controller.rules.shipped_tables import read_table

HandValues = tuple[int, ...]
LeafKey = tuple[int, int, int]
"""(player total, banker total, sevens) at the end of a round."""
PAIR_BETS = {Bet.PLAYER_PAIR: Hand.PLAYER, Bet.BANKER_PAIR: Hand.BANKER}


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
    cards_left: int
    """Cards in the shoe priced: 52 x decks for a full shoe, fewer once cards are seen."""
    total: int
    """Ordered deals of the first game.dealing.max_shoe_cards cards of the shoe."""
    winners: Mapping[Winner, int]
    bets: Mapping[Bet, BetOdds]

    def probability(self, winner: Winner) -> Fraction:
        return Fraction(self.winners[winner], self.total)


@dataclass(frozen=True)
class PricingTable:
    """What every multiset of card values a round can use decides, in the shape pricing reads.

    A multiset's weight for a shoe is a product of entries of one flat list: the falling
    product (count of value v, n) at v * (most + 1) + n, then the orderings of the unused
    positions after a round of k cards at 10 * (most + 1) + k. Both loops of a pricing then
    run inside math.prod and sum, not in Python bytecode.
    """

    most: int
    """dealing.max_shoe_cards."""
    factors: tuple[tuple[int, ...], ...]
    """For each multiset, the indices of its weight's factors in the flat list."""
    leaves: tuple[tuple[LeafKey, tuple[int, ...], tuple[int, ...]], ...]
    """(totals and sevens, the multisets that can end there, value sequences of each that do)."""


def compute_odds(game: Game, decks: int) -> OddsReport:
    """Every bet of `game` priced for a fresh shoe of `decks` decks."""
    return price_shoe(game, decks, ShoeComposition(decks).remaining(()))


def price_shoe(game: Game, decks: int, shoe: Mapping[Card, int]) -> OddsReport:
    """Every bet of `game` priced for the shoe `shoe` (distinct card -> copies left in it).

    Raises RulesError when the shoe holds fewer cards than one round may need.
    """
    dealing = game.dealing
    most = dealing.max_shoe_cards
    size = sum(shoe.values())
    if size < most:
        raise RulesError(
            f"{size} cards left: a round of {game.name} may need {most}, so there is nothing "
            "to price; see fewer cards or a shoe of more decks"
        )
    value_counts = [0] * 10
    rank_counts: Counter[int] = Counter()
    for card, copies in shoe.items():
        value_counts[card.value] += copies
        rank_counts[card.rank] += copies
    leaves = _leaf_counts(dealing, value_counts, size)
    total = perm(size, most)
    winners = {winner: 0 for winner in Winner}
    for (player_total, banker_total, _), deals in leaves.items():
        winners[winner_of(player_total, banker_total)] += deals
    by_leaf = _leaf_returns(game, leaves)
    bets = {
        bet: BetOdds(
            bet,
            _pair_returns(game, bet, rank_counts, size) if bet in PAIR_BETS else by_leaf[bet],
            total,
        )
        for bet in game.bets
    }
    return OddsReport(game, decks, size, total, winners, bets)


def _leaf_counts(dealing: Dealing, value_counts: list[int], size: int) -> dict[LeafKey, int]:
    """Ordered deals of the first max_shoe_cards cards ending at each leaf, for these counts."""
    table = composition_table(dealing)
    most = table.most
    flat = [perm(count, n) for count in value_counts for n in range(most + 1)]
    flat += [perm(size - used, most - used) for used in range(most + 1)]
    weights = [prod(map(flat.__getitem__, factors)) for factors in table.factors]
    weight_of = weights.__getitem__
    return {
        leaf: deals
        for leaf, members, sequences in table.leaves
        if (deals := sum(map(mul, map(weight_of, members), sequences)))
    }


def _leaf_returns(game: Game, leaves: Mapping[LeafKey, int]) -> dict[Bet, dict[Fraction, int]]:
    """The bets settled on totals and sevens: each one's gain at each leaf, summed.

    Game.net_returns decides every payout, and remembers each outcome's, so a
    table pricing after every round does the Fraction arithmetic only once.
    """
    returns: dict[str, Counter[Fraction]] = {
        bet.value: Counter() for bet in game.bets if bet not in PAIR_BETS
    }
    for (player_total, banker_total, sevens), deals in leaves.items():
        # No such bet looks at naturals or pairs, so the leaf's outcome leaves them out.
        gains = game.net_returns(Outcome(player_total, banker_total, False, False, False, sevens))
        for name, counter in returns.items():
            counter[gains[name]] += deals
    return {Bet(name): dict(counter) for name, counter in returns.items()}


def _pair_returns(
    game: Game, bet: Bet, rank_counts: Mapping[int, int], size: int
) -> dict[Fraction, int]:
    """A pair bet: ordered deals whose hand's first two cards share a rank, in closed form."""
    dealing = game.dealing
    hand = PAIR_BETS[bet]
    placed = [card.rank for card in dealing.player_starts_with] if hand is Hand.PLAYER else []
    from_shoe = 2 - len(placed)
    if from_shoe == 2:
        ways = sum(count * (count - 1) for count in rank_counts.values())
    elif from_shoe == 1:
        ways = rank_counts.get(placed[0], 0)
    else:
        ways = int(placed[0] == placed[1])
    most = dealing.max_shoe_cards
    pairs = ways * perm(size - from_shoe, most - from_shoe)
    won = game.net_return(bet, Outcome(0, 0, False, True, True, 0))
    lost = game.net_return(bet, Outcome(0, 0, False, False, False, 0))
    outcomes = ((won, pairs), (lost, perm(size, most) - pairs))
    return {gain: deals for gain, deals in outcomes if deals}


@cache
def composition_table(dealing: Dealing) -> PricingTable:
    """The shoe-independent table behind every pricing of this dealing, once per process:
    the shipped one of the game's dealing (shipped_tables.py, a few ms), else built.

    composition_table.cache_clear() makes the next pricing read or build it again.
    """
    shipped = read_table(dealing)
    if shipped is not None:
        return PricingTable(*shipped)
    return build_composition_table(dealing)


def build_composition_table(dealing: Dealing) -> PricingTable:
    """The table of `dealing`, enumerated (~0.3 s).

    Within a hand the first cards are enumerated as a multiset with its
    arrangements: no drawing rule looks at the order of a hand's first two cards.
    """
    placed = tuple(card.value for card in dealing.player_starts_with)
    player_cards = dealing.initial_order.count(Hand.PLAYER)
    banker_cards = dealing.initial_order.count(Hand.BANKER)
    table: defaultdict[HandValues, defaultdict[LeafKey, int]] = defaultdict(
        lambda: defaultdict(int)
    )
    for player in combinations_with_replacement(range(10), player_cards):
        for banker in combinations_with_replacement(range(10), banker_cards):
            sequences = _arrangements(player) * _arrangements(banker)
            _deal_third_cards(dealing, placed + player, banker, player + banker, sequences, table)
    most = dealing.max_shoe_cards
    factors = []
    by_leaf: defaultdict[LeafKey, list[tuple[int, int]]] = defaultdict(list)
    for index, (used, leaves) in enumerate(table.items()):
        takes = Counter(used).items()
        factors.append(
            (*(value * (most + 1) + n for value, n in takes), 10 * (most + 1) + len(used))
        )
        for leaf, sequences in leaves.items():
            by_leaf[leaf].append((index, sequences))
    return PricingTable(
        most,
        tuple(factors),
        tuple(
            (leaf, tuple(index for index, _ in found), tuple(count for _, count in found))
            for leaf, found in by_leaf.items()
        ),
    )


def _deal_third_cards(
    dealing: Dealing,
    player: HandValues,
    banker: HandValues,
    used: HandValues,
    sequences: int,
    table: defaultdict[HandValues, defaultdict[LeafKey, int]],
) -> None:
    """Follow next_recipient from these hands over every value a card can have."""
    recipient = dealing.next_recipient(player, banker)
    if recipient is None:
        sevens = player.count(SEVEN) + banker.count(SEVEN)
        leaf = (point_total(player), point_total(banker), sevens)
        table[tuple(sorted(used))][leaf] += sequences
        return
    for value in range(10):
        if recipient is Hand.PLAYER:
            _deal_third_cards(dealing, (*player, value), banker, (*used, value), sequences, table)
        else:
            _deal_third_cards(dealing, player, (*banker, value), (*used, value), sequences, table)


def _arrangements(values: HandValues) -> int:
    """Distinct orders of a multiset of values."""
    return factorial(len(values)) // prod(factorial(n) for n in Counter(values).values())
