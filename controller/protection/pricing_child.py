"""The pricing child (pricing_process.py): prices each shoe it is sent until its input ends.

It reads pickled (pickled game, decks, cards out) from stdin and writes each
ShoeEdges to stdout; each game is unpickled once and kept, with the payouts it
remembers. Only its parent writes to it. It ignores Ctrl-C, which
a terminal sends to the whole process group: the parent decides when it
ends, by closing the pipe.
"""

from __future__ import annotations

import pickle
import signal
import sys

from cardshoe.controller.protection.advantage import player_edges
from cardshoe.controller.rules.games import Game


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    requests, answers = sys.stdin.buffer, sys.stdout.buffer
    games: dict[bytes, Game] = {}
    while True:
        try:
            pickled, decks, out = pickle.load(requests)
        except EOFError:
            return
        game = games.get(pickled) or games.setdefault(pickled, pickle.loads(pickled))
        pickle.dump(player_edges(game, decks, out), answers)
        answers.flush()


if __name__ == "__main__":
    main()
