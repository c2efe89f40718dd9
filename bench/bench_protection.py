"""Time one pricing of every bet of a remaining 8-deck shoe, the table's after-round check.

After every round the table prices every bet of its game for the shoe that
is left (controller/protection/watcher.py), so each pricing must stay under
25 ms on this machine and never delay the next round (issue 15). Shoes are
taken at every stage of a seeded shuffled shoe, from full to a few rounds
from the end; the clock is the process's CPU time, so other work on the
shared cores does not count against the engine. The one-off build of each
dealing's table (once a process, when the watcher starts) is reported beside
it. A measurement, not a test: it asserts nothing.

    .venv/bin/python bench/bench_protection.py [--shoes 40]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from results import Measurement, Target, percentile, print_measurements

from cardshoe.controller.rules.cards import Card, ShoeComposition
from cardshoe.controller.rules.games import GAME_NAMES, get_game
from cardshoe.controller.rules.odds import composition_table, price_shoe

DECKS = 8
SEED = 15
PRICING_TARGET = Target(25, at_least=False, text="≤ 25 ms")


def remaining_shoes(shoes: int) -> list[dict[Card, int]]:
    """What is left of seeded shuffled shoes after 0, 20, 40 ... 380 cards."""
    rng = random.Random(SEED)
    composition = ShoeComposition(DECKS)
    left = []
    for _ in range(shoes):
        cards = list(composition.cards())
        rng.shuffle(cards)
        left += [composition.remaining(cards[:seen]) for seen in range(0, 381, 20)]
    return left


def pricing_ms(name: str, shoes: list[dict[Card, int]]) -> tuple[list[float], float]:
    """CPU milliseconds of each pricing, and of the first (which reads the dealing's shipped
    table)."""
    game = get_game(name)
    composition_table.cache_clear()  # another benchmark's table service may have built it
    started = time.process_time()
    price_shoe(game, DECKS, shoes[0])
    first = (time.process_time() - started) * 1000
    timings = []
    for shoe in shoes:
        started = time.process_time()
        price_shoe(game, DECKS, shoe)
        timings.append((time.process_time() - started) * 1000)
    return timings, first


def measure(shoes: int = 40) -> list[Measurement]:
    prepared = remaining_shoes(shoes)
    rows = []
    for name in GAME_NAMES:
        timings, first = pricing_ms(name, prepared)
        how = (
            f"{len(prepared)} remaining shoes of {shoes} shuffled {DECKS}-deck shoes, every bet, "
            f"exact; p50 {statistics.median(timings):.1f} ms; the first pricing of a process "
            f"reads the shipped table once: {first:.0f} ms; CPU time"
        )
        rows.append(
            Measurement(
                f"remaining-shoe pricing p99, {name}",
                percentile(timings, 99),
                "ms",
                PRICING_TARGET,
                how,
            )
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shoes", type=int, default=40, help="shuffled shoes per game")
    print_measurements(measure(parser.parse_args().shoes))


if __name__ == "__main__":
    main()
