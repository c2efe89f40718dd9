"""The remaining-shoe pricing in a child process, on a core of its own.

One exact pricing of every bet is 5-10 ms of pure Python (rules/odds.py).
On a thread of the service it still holds the interpreter lock while the
next card waits to be journaled and acknowledged: measured with bench/
bench_session.py, the durable wire-to-decision p99 went from 1.6 ms to over
6 ms. A child process prices in parallel with the table and costs the table
one pipe round trip.

The child is a plain `python -m` of pricing_child.py, not a multiprocessing
child: it never re-imports whatever script started the service, and nothing
is forked from a process that runs threads. One child serves every watcher
of a process and keeps each game's pricing table built; it ends when this
process closes its end of the pipe. If it cannot run, the pricing runs
here, slower but never skipped.
"""

from __future__ import annotations

import atexit
import contextlib
import pickle
import subprocess
import sys
import threading
from collections.abc import Iterable

import structlog

from cardshoe.controller.protection.advantage import ShoeEdges, player_edges
from cardshoe.controller.rules.cards import Card
from cardshoe.controller.rules.errors import RulesError
from cardshoe.controller.rules.games import Game

log = structlog.get_logger(__name__)

CHILD_MODULE = f"{__package__}.pricing_child"
CLOSE_WAIT_S = 2.0
"""How long close() waits for the child to finish the pricing under way before killing it."""


class PricedGame:
    """A game as the child is sent it: pickled once, while it is small.

    A Game remembers the payouts it has computed, so pickling it again after
    a few pricings costs more than the pricing saves.
    """

    def __init__(self, game: Game) -> None:
        self.game = game
        self.pickled = pickle.dumps(game)


class PricingProcess:
    """player_edges computed by a child process, started when first asked."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._child: subprocess.Popen[bytes] | None = None

    def price(self, game: PricedGame, decks: int, out: Iterable[Card]) -> ShoeEdges:
        """Every bet of the game priced for the shoe of `decks` decks left once `out` is out."""
        cards = tuple(out)
        with self._lock:
            try:
                return self._ask(game, decks, cards)
            except (OSError, EOFError, pickle.UnpicklingError) as exc:
                log.warning("pricing process unavailable; pricing in the service", error=str(exc))
                self._close()
        return player_edges(game.game, decks, cards)

    def start(self) -> None:
        """Start the child now, so the first round's pricing does not wait for its start-up;
        nothing is asked of it, so the caller never waits for its idle priority."""
        with self._lock:
            if self._child is None:
                try:
                    self._start()
                except OSError as exc:
                    log.warning(
                        "pricing process unavailable; pricing in the service", error=str(exc)
                    )

    def close(self) -> None:
        with self._lock:
            self._close()

    def _ask(self, game: PricedGame, decks: int, cards: tuple[Card, ...]) -> ShoeEdges:
        child = self._child or self._start()
        assert child.stdin is not None and child.stdout is not None
        pickle.dump((game.pickled, decks, cards), child.stdin)
        child.stdin.flush()
        answer: ShoeEdges | RulesError = pickle.load(child.stdout)
        if isinstance(answer, RulesError):
            raise answer  # this shoe cannot be priced; the child is fine
        return answer

    def _start(self) -> subprocess.Popen[bytes]:
        # -I: the child imports the installed cardshoe only, never a folder of the same
        # name in the working directory or on PYTHONPATH.
        self._child = subprocess.Popen(
            [sys.executable, "-I", "-m", CHILD_MODULE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        return self._child

    def _close(self) -> None:
        """The child ends at the closed pipe, or is killed if it does not."""
        child, self._child = self._child, None
        if child is None:
            return
        for stream in (child.stdin, child.stdout):
            if stream is not None:
                # Closing flushes what a dead child never read: that write fails again.
                with contextlib.suppress(BrokenPipeError):
                    stream.close()
        try:
            child.wait(CLOSE_WAIT_S)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


PRICING = PricingProcess()
"""The process's one pricing child, shared by every watcher."""
atexit.register(PRICING.close)
