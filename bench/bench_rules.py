"""Rules-only rounds per second: shuffled 8-deck shoes played through the rules engine.

Each game plays the same seeded shoes card by card with play_shoe_order,
asking every complete round for its outcome, as the procedure does; the
shuffle is done beforehand and not timed. The clock is the process's CPU
time, so other work on the shared cores does not count against the engine.
Target (issue 7): 100,000 rounds/s or more. A measurement, not a test: it
asserts nothing.

    .venv/bin/python bench/bench_rules.py [--shoes 200]
"""

from __future__ import annotations

import argparse
import random
import time

from results import Measurement, Target, print_measurements

from cardshoe.controller.rules.cards import Card, ShoeComposition
from cardshoe.controller.rules.games import GAME_NAMES, Game, get_game
from cardshoe.controller.rules.shoe_order import play_shoe_order

DECKS = 8
SEED = 7
RUNS = 5
ROUNDS_TARGET = Target(100_000, at_least=True, text="≥ 100,000 rounds/s")


def shuffled_shoes(count: int) -> list[list[Card]]:
    rng = random.Random(SEED)
    shoes = []
    for _ in range(count):
        cards = list(ShoeComposition(DECKS).cards())
        rng.shuffle(cards)
        shoes.append(cards)
    return shoes


def play_all(game: Game, shoes: list[list[Card]]) -> int:
    """Rounds dealt, complete and void; every complete round is asked its outcome."""
    rounds = 0
    for shoe in shoes:
        for played in play_shoe_order(game, shoe):
            if played.void is None:
                played.round.outcome()
            rounds += 1
    return rounds


def rounds_per_second(game: Game, shoes: list[list[Card]]) -> float:
    """The best of a few runs, in rounds per second of CPU time."""
    best = 0.0
    for _ in range(RUNS):
        started = time.process_time()
        rounds = play_all(game, shoes)
        best = max(best, rounds / (time.process_time() - started))
    return best


def measure(shoes: int = 200) -> list[Measurement]:
    prepared = shuffled_shoes(shoes)
    return [
        Measurement(
            f"rules-only rounds/s, {name}",
            rounds_per_second(get_game(name), prepared),
            "rounds/s",
            ROUNDS_TARGET,
            f"{shoes} shuffled {DECKS}-deck shoes, outcome of every round, CPU time",
        )
        for name in GAME_NAMES
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shoes", type=int, default=200, help="shuffled shoes per game")
    print_measurements(measure(parser.parse_args().shoes))


if __name__ == "__main__":
    main()
