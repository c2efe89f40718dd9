"""The pricing child (pricing_process.py): prices each shoe it is sent until its input ends.

It reads pickled (pickled game, decks, cards out) from stdin and writes each
ShoeEdges to stdout, or the RulesError of a shoe that cannot be priced (a card
seen more often than the decks hold it, as a stacked or salted shoe is): that
is the request's failure, not the child's, so the child stays up for the next
round. Each game is unpickled once and kept, with the payouts it remembers.
Only its parent writes to it. It ignores Ctrl-C, which a terminal sends to
the whole process group: the parent decides when it ends, by closing the pipe.
Whatever ends it early ends it with one line on stderr, never a traceback: the
parent notices the closed pipe, warns, and prices in its own process.

It runs at the lowest CPU priority there is (SCHED_IDLE on Linux, else nice
19): on a table PC whose cores are busy the card waits for no pricing, and a
late pricing only prices a later shoe (pricing_worker.py).
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
from typing import BinaryIO

from cardshoe.controller.protection.advantage import ShoeEdges, player_edges
from cardshoe.controller.rules.errors import RulesError
from cardshoe.controller.rules.games import Game


def main() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    yield_the_cpu()
    try:
        serve(sys.stdin.buffer, sys.stdout.buffer)
    except BrokenPipeError:
        # The parent hung up in the middle of an answer: it no longer wants it. Point
        # stdout at /dev/null so the interpreter's last flush at exit does not fail too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except Exception as exc:  # the parent logs that its child is gone and prices itself
        print(f"cardshoe pricing child: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


def yield_the_cpu() -> None:
    """Take the lowest CPU priority: only a core nothing else wants runs the pricing.

    A system-call filter that refuses it (a unit without the calls cardshoe.service lets
    through) leaves the child at its parent's priority, said in one line: pricing at the
    service's priority beats every round priced in the service itself."""
    try:
        if hasattr(os, "SCHED_IDLE"):
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        else:
            os.nice(19 - os.nice(0))
    except OSError as exc:
        print(
            f"cardshoe pricing child: prices at the service's CPU priority, the lowest was "
            f"refused ({exc.strerror}); let sched_setscheduler through the unit's "
            "SystemCallFilter",
            file=sys.stderr,
        )


def serve(requests: BinaryIO, answers: BinaryIO) -> None:
    games: dict[bytes, Game] = {}
    while True:
        try:
            pickled, decks, out = pickle.load(requests)
        except EOFError:
            return
        game = games.get(pickled) or games.setdefault(pickled, pickle.loads(pickled))
        answer: ShoeEdges | RulesError
        try:
            answer = player_edges(game, decks, out)
        except RulesError as exc:
            answer = exc
        pickle.dump(answer, answers)
        answers.flush()


if __name__ == "__main__":
    sys.exit(main())
