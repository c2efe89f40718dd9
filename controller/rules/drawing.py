"""Who gets the next card: the initial deal and the third-card rules, as data.

This is the one implementation of the drawing rules. Live play
(RoundInProgress) and the exact odds enumeration both ask
Dealing.next_recipient, so the odds can never drift from the game dealt.
The rules see card point values only: a hand is a sequence of values 0-9.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from cardshoe.controller.rules.cards import Card
from cardshoe.controller.rules.hands import NATURAL_TOTALS, Hand, point_total

ALL_VALUES = frozenset(range(10))


class DrawingRule(Protocol):
    """Decides third cards once both hands hold their first two cards."""

    def third_card(self, player: Sequence[int], banker: Sequence[int]) -> Hand | None:
        """The hand that draws next, or None when the round is complete."""
        ...


@dataclass(frozen=True)
class Tableau:
    """The standard table of play, as 7 Up Baccarat 3.9 words it (also Punto Banco).

    Player draws on player_draws_on and otherwise stands. When Player stands,
    Banker draws on banker_draws_when_player_stands. When Player has drawn,
    Banker with total t draws when Player's third card value is in
    banker_draws_on_player_third[t], and stands at all other times.
    """

    player_draws_on: frozenset[int] = frozenset(range(0, 6))
    banker_draws_when_player_stands: frozenset[int] = frozenset(range(0, 6))
    banker_draws_on_player_third: Mapping[int, frozenset[int]] = field(
        hash=False,
        default_factory=lambda: {
            0: ALL_VALUES,
            1: ALL_VALUES,
            2: ALL_VALUES,
            3: ALL_VALUES - {8},
            4: frozenset(range(2, 8)),
            5: frozenset(range(4, 8)),
            6: frozenset({6, 7}),
        },
    )

    def third_card(self, player: Sequence[int], banker: Sequence[int]) -> Hand | None:
        player_first_two = point_total(player[:2])
        banker_first_two = point_total(banker[:2])
        if player_first_two in NATURAL_TOTALS or banker_first_two in NATURAL_TOTALS:
            return None
        if len(banker) > 2:
            return None
        if len(player) == 2:
            if player_first_two in self.player_draws_on:
                return Hand.PLAYER
            if banker_first_two in self.banker_draws_when_player_stands:
                return Hand.BANKER
            return None
        drawing_values = self.banker_draws_on_player_third.get(banker_first_two, frozenset())
        return Hand.BANKER if player[2] in drawing_values else None


@dataclass(frozen=True)
class LowerHandDrawsFirst:
    """Macau 2007 Art. 9, methods 1 and 2.

    A natural on either side decides. Equal totals 0-7: both draw, Player
    first. Unequal totals 0-7: the lower hand draws first; if it is still
    lower the other hand stands and wins; if it is now higher the other
    hand draws. The methods differ only when the drawer is now equal: under
    method 1 the other hand draws, under method 2 it stands and the round
    is a tie.
    """

    other_draws_when_equal: bool

    def third_card(self, player: Sequence[int], banker: Sequence[int]) -> Hand | None:
        player_first_two = point_total(player[:2])
        banker_first_two = point_total(banker[:2])
        if player_first_two in NATURAL_TOTALS or banker_first_two in NATURAL_TOTALS:
            return None
        player_drew = len(player) > 2
        banker_drew = len(banker) > 2
        if player_drew and banker_drew:
            return None
        if not (player_drew or banker_drew):
            return Hand.PLAYER if player_first_two <= banker_first_two else Hand.BANKER
        if player_first_two == banker_first_two:
            return Hand.BANKER
        drawer_total, other_total, other = (
            (point_total(player), banker_first_two, Hand.BANKER)
            if player_drew
            else (point_total(banker), player_first_two, Hand.PLAYER)
        )
        if drawer_total < other_total:
            return None
        if drawer_total == other_total and not self.other_draws_when_equal:
            return None
        return other


@dataclass(frozen=True)
class Dealing:
    """How a round is dealt: cards placed before the shoe, the initial order, the drawing rule.

    player_starts_with holds cards the dealer places that never leave the
    shoe (the 7 Up mandatory seven). initial_order names the recipient of
    each shoe card of the initial deal; after it, the drawing rule decides.
    """

    player_starts_with: tuple[Card, ...]
    initial_order: tuple[Hand, ...]
    drawing: DrawingRule

    def __post_init__(self) -> None:
        player_initial = len(self.player_starts_with) + self.initial_order.count(Hand.PLAYER)
        banker_initial = self.initial_order.count(Hand.BANKER)
        if (player_initial, banker_initial) != (2, 2):
            raise ValueError(
                f"an initial deal gives each hand two cards, not {player_initial} "
                f"to Player and {banker_initial} to Banker"
            )

    @property
    def max_shoe_cards(self) -> int:
        """The most shoe cards a round can take: the initial deal and two third cards."""
        return len(self.initial_order) + 2

    def next_recipient(self, player: Sequence[int], banker: Sequence[int]) -> Hand | None:
        """The hand that gets the next shoe card, or None when the round is complete.

        player includes the values of player_starts_with.
        """
        shoe_cards = len(player) + len(banker) - len(self.player_starts_with)
        if shoe_cards < len(self.initial_order):
            return self.initial_order[shoe_cards]
        return self.drawing.third_card(player, banker)
