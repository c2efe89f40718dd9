"""A round in progress, card by card, and its outcome.

The procedure machine asks next_recipient() before each card leaves the
shoe (to unlock the gate or command the next deal), then deal()s the card
it read. The round knows nothing of devices or bets.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from functools import cache

from cardshoe.controller.rules.cards import Card
from cardshoe.controller.rules.drawing import Dealing
from cardshoe.controller.rules.hands import Hand, Winner, is_natural, point_total, winner_of

SEVEN = 7


class RoundStateError(RuntimeError):
    """A card dealt to a complete round, or an outcome asked of an incomplete one."""


class VoidReason(Enum):
    """Why a round was declared void instead of settled."""

    INSUFFICIENT_CARDS = "insufficient_cards"
    """Too few cards in the shoe to complete the round (7 Up 5.5)."""


@dataclass(frozen=True)
class DealtCard:
    """A shoe card and the hand it went to."""

    card: Card
    to: Hand


@dataclass(frozen=True)
class Outcome:
    """What a complete round decided; everything a bet is settled on."""

    player_total: int
    banker_total: int
    natural: bool
    player_pair: bool
    banker_pair: bool
    sevens: int
    """7s among all cards of the round, the 7 Up mandatory seven included."""

    winner: Winner = field(init=False, repr=False, compare=False)
    """Worked out from the totals once, when built: settling a round asks for it once per
    bet and for the result (a cached_property's lock cost more than the work)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "winner", winner_of(self.player_total, self.banker_total))

    @property
    def winning_total(self) -> int:
        """The winner's total; on a tie, the total both hands share."""
        return self.banker_total if self.winner is Winner.BANKER else self.player_total

    @classmethod
    def of_hands(cls, player: Sequence[Card], banker: Sequence[Card]) -> Outcome:
        return _outcome_of(
            [card.value for card in player],
            [card.value for card in banker],
            _is_pair(player),
            _is_pair(banker),
        )


def _outcome_of(
    player_values: Sequence[int], banker_values: Sequence[int], player_pair: bool, banker_pair: bool
) -> Outcome:
    """The outcome of two complete hands, by their point values and whether each is a pair."""
    return _outcome(
        point_total(player_values),
        point_total(banker_values),
        is_natural(player_values) or is_natural(banker_values),
        player_pair,
        banker_pair,
        player_values.count(SEVEN) + banker_values.count(SEVEN),
    )


@cache
def _outcome(
    player_total: int,
    banker_total: int,
    natural: bool,
    player_pair: bool,
    banker_pair: bool,
    sevens: int,
) -> Outcome:
    """One Outcome object per distinct outcome (a few thousand at most: totals 0-9, three
    flags, up to six sevens).

    The games keep each outcome's net returns and marks (games.py): the same
    object again is found there without comparing its fields, and its winner
    is worked out once. Building and comparing a new one for every round was
    half the time of settling it.
    """
    return Outcome(player_total, banker_total, natural, player_pair, banker_pair, sevens)


def _is_pair(hand: Sequence[Card]) -> bool:
    """Same rank regardless of suit: two jacks are a pair, a jack and a queen are not."""
    return hand[0].rank == hand[1].rank


class RoundInProgress:
    """One round being dealt, answering who gets the next card until it is complete."""

    def __init__(self, dealing: Dealing) -> None:
        self._dealing = dealing
        self._player: list[Card] = list(dealing.player_starts_with)
        self._banker: list[Card] = []
        self._shoe_order: list[tuple[Card, Hand]] = []
        # The point values beside the cards, and the recipient worked out once per card:
        # the procedure asks next_recipient() before every card, and recounting both
        # hands on each question halved the rounds per second. DealtCard records are
        # built only when asked for, as building one per card cost a third of a round.
        self._player_values: list[int] = [card.value for card in self._player]
        self._banker_values: list[int] = []
        self._next = dealing.next_recipient(self._player_values, self._banker_values)

    @property
    def player(self) -> tuple[Card, ...]:
        """Player's cards, the 7 Up mandatory seven first."""
        return tuple(self._player)

    @property
    def banker(self) -> tuple[Card, ...]:
        return tuple(self._banker)

    @property
    def dealt(self) -> tuple[DealtCard, ...]:
        """The shoe cards taken so far, in shoe order, with their recipients."""
        return tuple(DealtCard(card, to) for card, to in self._shoe_order)

    def __eq__(self, other: object) -> bool:
        """Two rounds are the same round when dealt by the same rules with the same cards in
        the same order: a round rebuilt from the journal after a restart equals the round
        that was never interrupted, as every other part of the table's state does."""
        if not isinstance(other, RoundInProgress):
            return NotImplemented
        return self._dealing == other._dealing and self._shoe_order == other._shoe_order

    __hash__ = None  # type: ignore[assignment]  # it changes as cards are dealt

    def next_recipient(self) -> Hand | None:
        """The hand the next shoe card belongs to, or None when the round is complete."""
        return self._next

    @property
    def is_complete(self) -> bool:
        return self._next is None

    def deal(self, card: Card) -> Hand:
        """Give the next shoe card to the hand whose turn it is, and say which hand that was."""
        if card.is_mandatory_seven:
            raise RoundStateError("7* is placed by the dealer; deal only cards from the shoe")
        recipient = self._next
        if recipient is None:
            raise RoundStateError(f"the round is complete; {card} belongs to no hand")
        if recipient is Hand.PLAYER:
            self._player.append(card)
            self._player_values.append(card.value)
        else:
            self._banker.append(card)
            self._banker_values.append(card.value)
        self._shoe_order.append((card, recipient))
        self._next = self._dealing.next_recipient(self._player_values, self._banker_values)
        return recipient

    def outcome(self) -> Outcome:
        if self._next is not None:
            raise RoundStateError("the round is not complete; it has no outcome yet")
        return _outcome_of(
            self._player_values,
            self._banker_values,
            _is_pair(self._player),
            _is_pair(self._banker),
        )
