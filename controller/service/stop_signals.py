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


@contextmanager
def stop_on_signals(request_stop: Callable[[], None]) -> Iterator[None]:
    """Within the block, SIGTERM and SIGINT call request_stop; the old handlers come back after."""
    previous = {number: signal.signal(number, lambda *_: request_stop()) for number in STOP_SIGNALS}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
