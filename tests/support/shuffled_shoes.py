"""Shoes as the simulator shuffles them, read as a shoe reader would, without a table.

Statistical tests need hundreds of shoes; dealing each through the table over
a pty would take minutes, so these take the simulator's own shuffles
(firmware_sim/shuffles.py) and let every card out but the last `unread`, as a
cut card would.
"""

from __future__ import annotations

import random

from cardshoe.controller.protection.shoe_records import JournaledShoe, SeenCard
from cardshoe.controller.rules.cards import parse_card
from cardshoe.drivers.protocol.cardid import CardId
from cardshoe.firmware_sim.shoe import DEFAULT_DECK_SET, build_decks
from cardshoe.firmware_sim.shuffles import parse_shuffle

UNREAD = 14
"""Cards behind the cut card that never leave: about the last 12, and the round it ends."""


def seen_card(card: CardId) -> SeenCard:
    text = str(card)
    return SeenCard(parse_card(text.partition("#")[0]), text)


def shuffled_shoes(
    method: str, count: int, seed: int, *, decks: int = 8, unread: int = UNREAD
) -> list[JournaledShoe]:
    """`count` successive shoes of one table, each shuffled by `method` from the last."""
    rng = random.Random(seed)
    shuffle = parse_shuffle(method)
    cards = build_decks(decks, DEFAULT_DECK_SET, tagged=True)
    previous: list[CardId] | None = None
    shoes = []
    for number in range(count):
        order = shuffle.arrange(cards, previous, rng)
        dealt = order[: len(order) - unread]
        shoes.append(
            JournaledShoe(f"S{number}", "punto-banco", decks, [seen_card(c) for c in dealt])
        )
        previous = dealt
    return shoes
