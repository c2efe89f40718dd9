"""The simulator's human-like shuffles: fair, riffle:N and carry:LEN."""

from __future__ import annotations

import random
from collections import Counter
from itertools import pairwise

import pytest

from cardshoe.firmware_sim.devices import configure_device, create_device
from cardshoe.firmware_sim.errors import SimConfigError
from cardshoe.firmware_sim.shoe import DEFAULT_DECK_SET, build_decks
from cardshoe.firmware_sim.shuffles import (
    FAIR,
    ShuffleKind,
    ShuffleMethod,
    parse_shuffle,
    riffle,
)

CARDS = build_decks(8, DEFAULT_DECK_SET, tagged=True)


@pytest.mark.parametrize(
    ("text", "method"),
    [
        ("fair", FAIR),
        ("riffle:3", ShuffleMethod(ShuffleKind.RIFFLE, 3)),
        ("Carry:12", ShuffleMethod(ShuffleKind.CARRY, 12)),
    ],
)
def test_parse(text: str, method: ShuffleMethod) -> None:
    assert parse_shuffle(text) == method
    assert str(method) == text.lower()


@pytest.mark.parametrize("text", ["", "riffle", "riffle:0", "carry:1", "carry:x", "fair:2", "wash"])
def test_bad_shuffles_are_refused(text: str) -> None:
    with pytest.raises(SimConfigError, match=r"use fair, riffle:N"):
        parse_shuffle(text)


@pytest.mark.parametrize("text", ["fair", "riffle:2", "carry:10"])
def test_every_shuffle_keeps_the_cards_and_repeats_with_its_seed(text: str) -> None:
    method = parse_shuffle(text)
    previous = random.Random(1).sample(CARDS, len(CARDS))
    first = method.arrange(CARDS, previous, random.Random(9))
    assert Counter(first) == Counter(CARDS)
    assert method.arrange(CARDS, previous, random.Random(9)) == first
    assert method.arrange(CARDS, previous, random.Random(10)) != first


def test_a_first_shoe_is_fair_whatever_the_method() -> None:
    assert parse_shuffle("riffle:2").arrange(CARDS, None, random.Random(3)) == FAIR.arrange(
        CARDS, None, random.Random(3)
    )


def adjacent_kept(before: list, after: list) -> int:
    follows = dict(pairwise(after))
    return sum(follows.get(card) == successor for card, successor in pairwise(before))


def test_a_riffle_interleaves_two_packets_each_in_its_order() -> None:
    """A GSR riffle of 0..n-1 has at most two rising sequences."""
    order = list(range(416))
    riffled = riffle(order, random.Random(4))  # type: ignore[arg-type]
    assert sorted(riffled) == order
    position = {card: index for index, card in enumerate(riffled)}
    assert 1 + sum(position[card + 1] < position[card] for card in order[:-1]) <= 2


def test_two_riffles_keep_many_neighbours_and_a_carry_keeps_its_slug() -> None:
    previous = random.Random(5).sample(CARDS, len(CARDS))
    two = parse_shuffle("riffle:2").arrange(CARDS, previous, random.Random(6))
    fair = FAIR.arrange(CARDS, previous, random.Random(6))
    assert adjacent_kept(previous, two) > 50 > 10 > adjacent_kept(previous, fair)
    carried = parse_shuffle("carry:12").arrange(CARDS, previous, random.Random(7))
    assert adjacent_kept(previous, carried) >= 11


def test_a_device_shuffles_its_first_shoe_from_the_order_it_is_given() -> None:
    previous = random.Random(8).sample(CARDS, len(CARDS))
    device = create_device(
        "cs-auto", seed=3, shuffle=parse_shuffle("riffle:1"), previous_order=previous[:400]
    )
    assert Counter(device.shoe.order) == Counter(CARDS)
    assert adjacent_kept(previous, device.shoe.order) > 150
    assert configure_device(profile="cs-1", seed=3).shuffle == FAIR
