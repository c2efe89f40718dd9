"""The live stacked-shoe alarm: never on fair shoes, always on a carried-over slug it sees."""

from __future__ import annotations

import random
from itertools import pairwise

import pytest
from support.shuffled_shoes import UNREAD, seen_card, shuffled_shoes

from cardshoe.controller.protection.shoe_records import JournaledShoe, SeenCard
from cardshoe.controller.protection.stacked_shoe import (
    FALSE_ALARM,
    RunKind,
    StackedRun,
    StackedShoeDetector,
    alarm_length,
    run_chance,
)
from cardshoe.controller.rules.cards import parse_card
from cardshoe.firmware_sim.shoe import DEFAULT_DECK_SET, build_decks


def alarms(previous: JournaledShoe, shoe: JournaledShoe) -> list[StackedRun]:
    detector = StackedShoeDetector(shoe.decks, [seen.tagged_id or "" for seen in previous.cards])
    return [run for seen in shoe.cards for run in detector.take(seen)]


def test_alarm_lengths_of_an_eight_deck_shoe() -> None:
    assert {kind: alarm_length(kind, 8, 402) for kind in RunKind} == {
        RunKind.ORDER: 5,
        RunKind.RANK: 9,
        RunKind.SUIT: 15,
    }
    assert run_chance(RunKind.ORDER, 5, 8, 402) < FALSE_ALARM
    assert run_chance(RunKind.ORDER, 4, 8, 402) >= FALSE_ALARM


def test_two_hundred_fair_shoes_never_raise_it() -> None:
    shoes = shuffled_shoes("fair", 201, seed=7)
    assert [run for first, second in pairwise(shoes) for run in alarms(first, second)] == []


@pytest.mark.parametrize("kind", [RunKind.ORDER, RunKind.RANK])
def test_the_bound_holds_on_fair_one_deck_shoes(kind: RunKind) -> None:
    """Where runs are common enough to count (3 in a row, one deck), fair shoes show them no
    more often than the bound says: the bound is what sets the alarm lengths."""
    shoes = shuffled_shoes("fair", 3001, seed=3, decks=1, unread=0)
    longest = []
    for first, second in pairwise(shoes):
        detector = StackedShoeDetector(1, [seen.tagged_id or "" for seen in first.cards])
        runs = []
        for seen in second.cards:
            detector.take(seen)
            runs.append(detector.runs[kind])
        longest.append(max(runs))
    bound = float(run_chance(kind, 3, 1, 52))
    share = sum(length >= 3 for length in longest) / len(longest)
    assert 0.5 * bound < share <= bound + 3 * (bound / len(longest)) ** 0.5


@pytest.mark.parametrize("length", [10, 12])
def test_a_carried_over_slug_raises_it_whenever_enough_of_it_is_dealt(length: int) -> None:
    """Every slug with at least the alarm length dealt is caught. The others sat behind the cut
    card, never dealt: about 2% of slugs placed anywhere (docs/game-protection.md)."""
    shoes = shuffled_shoes(f"carry:{length}", 101, seed=length, unread=0)
    caught = missed_unseen = 0
    for first, second in pairwise(shoes):
        # What a cut card leaves in the shoe is never dealt and cannot be seen.
        dealt = JournaledShoe(second.shoe_id, "punto-banco", 8, second.cards[:-UNREAD])
        if alarms(first, dealt):
            caught += 1
        else:
            slug_start = _slug_start(first, second, length)
            missed_unseen += slug_start + alarm_length(RunKind.ORDER, 8, 416) > len(dealt.cards)
    assert caught + missed_unseen == 100
    assert caught >= 90


def _slug_start(first: JournaledShoe, second: JournaledShoe, length: int) -> int:
    successor = dict(pairwise(seen.tagged_id for seen in first.cards))
    ids = [seen.tagged_id for seen in second.cards]
    for start in range(len(ids) - length + 1):
        if all(successor.get(ids[i]) == ids[i + 1] for i in range(start, start + length - 1)):
            return start
    raise AssertionError("no slug in a carry-over shoe")


def test_a_run_of_one_rank_and_of_one_suit() -> None:
    rng = random.Random(5)
    cards = build_decks(8, DEFAULT_DECK_SET, tagged=True)
    rng.shuffle(cards)
    kings = [card for card in cards if card.rank == 13][:9]
    spades = [card for card in cards if card.suit == 0 and card.rank != 13][:15]
    rest = [card for card in cards if card not in kings and card not in spades]
    order = rest[:100] + kings + rest[100:200] + spades + rest[200:]
    detector = StackedShoeDetector(8, [])
    found = [run for card in order for run in detector.take(seen_card(card))]
    assert [(run.kind, run.length, run.started_at) for run in found] == [
        (RunKind.RANK, 9, 100),
        (RunKind.SUIT, 15, 209),
    ]
    assert "9 cards in a row of one rank from card 101" in found[0].detail


def test_an_unreadable_card_breaks_a_run() -> None:
    detector = StackedShoeDetector(1, [])
    kings = [SeenCard(parse_card(f"K{suit}"), None) for suit in "SHDC"]
    for seen in [*kings[:2], SeenCard(None, None), *kings[2:]]:
        detector.take(seen)
    assert detector.runs[RunKind.RANK] == 2
