"""SIGTERM and SIGINT as a request to stop, for the commands that run until told.

The handler only calls `request_stop`, which must only set a flag: a handler
runs between two bytecodes of the main thread, possibly inside a lock that
thread holds, so taking any lock there could deadlock the very loop it
interrupted. The loop reads the flag after the step under way, which
finishes its journal transaction and acknowledgement first.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


@dataclass
class StopRequest:
    """The flag for a loop that polls: the handler sets it, the loop reads it each turn."""

    requested: bool = False

    def request(self) -> None:
        self.requested = True


def hear_stop_signals() -> None:
    """Unblock SIGTERM and SIGINT in this thread, before it starts any other.

    A process inherits the signal mask of the thread that spawned it. Started
    by a thread that had blocked them, a command would never see its stop
    signal: it would wait pending until SIGKILL, and the command would end
    without its last batch, transaction or acknowledgement. Every shoectl
    command calls this first, so each hears them whatever its parent blocked,
    and the threads it starts inherit the unblocked mask.
    """
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


@contextmanager
def stop_on_signals(request_stop: Callable[[], None]) -> Iterator[None]:
    """Within the block, SIGTERM and SIGINT call request_stop; the old handlers come back after."""
    previous = {number: signal.signal(number, lambda *_: request_stop()) for number in STOP_SIGNALS}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
