"""Time the exact odds enumeration; `shoectl odds` for 8-deck Punto Banco must stay under 1 s.

Prints the best of a few runs of the enumeration for each game, then the
wall time of the whole command (interpreter start-up included) as a
technician would run it. A measurement, not a test: it asserts nothing.
"""

from __future__ import annotations

import subprocess
import sys
import time

from cardshoe.controller.rules.games import get_game
from cardshoe.controller.rules.odds import compute_odds

CASES = [("punto-banco", 8), ("seven-up", 6), ("macau-1", 8), ("macau-2", 8)]
RUNS = 3
ODDS_COMMAND = [sys.executable, "-m", "cardshoe.controller.cli", "odds", "--game", "punto-banco"]
ODDS_COMMAND += ["--decks", "8", "--json"]


def best_of(runs: int, action) -> float:
    timings = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        timings.append(time.perf_counter() - started)
    return min(timings)


def main() -> None:
    for name, decks in CASES:
        game = get_game(name)
        seconds = best_of(RUNS, lambda game=game, decks=decks: compute_odds(game, decks))
        print(f"compute_odds {name:<12} {decks} decks: {seconds:.3f} s")
    seconds = best_of(
        RUNS, lambda: subprocess.run(ODDS_COMMAND, check=True, capture_output=True, text=True)
    )
    print(f"shoectl odds --game punto-banco --decks 8 --json (whole process): {seconds:.3f} s")


if __name__ == "__main__":
    main()
