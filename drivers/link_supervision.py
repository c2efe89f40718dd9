"""What the link's supervisor does on each tick, as pure functions of what it observed.

The supervisor thread (link.py) only gathers the facts (a reader error, how long
the device has been silent, whether a new handshake was asked for) and carries out
the decision: declare the link lost, handshake again, poll the device, or wait; and
while the link is down, when to try reconnecting, backing off between attempts.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class LinkState(Enum):
    """Where the link stands; the supervisor acts on it each tick."""

    CONNECTING = "connecting"
    UP = "up"
    DOWN = "down"
    """Lost; the supervisor is reconnecting."""
    GONE = "gone"
    """Closed, or lost with reconnection off: nothing more will arrive."""


class Watch(Enum):
    LOSE = "lose"
    """The link is down: a transport failure, or the device silent too long."""
    REHANDSHAKE = "rehandshake"
    """GET_INFO again: the device restarted its session, or a seq needs its HELLO."""
    KEEPALIVE = "keepalive"
    """Nothing in either direction for a poll interval: GET_STATUS."""
    WAIT = "wait"


@dataclass(frozen=True)
class Observed:
    """The link as the supervisor finds it on one tick while it is up."""

    reader_error: str | None
    silent_for_s: float
    """Since the last valid frame from the device."""
    idle_for_s: float
    """Since the last frame in the quieter direction: received or sent."""
    rehandshake_wanted: bool


def watch(
    observed: Observed, *, link_down_after_s: float, poll_interval_s: float
) -> tuple[Watch, str]:
    """The supervisor's action for an up link, and the reason a LOSE gives."""
    if observed.reader_error is not None:
        return Watch.LOSE, observed.reader_error
    if observed.silent_for_s > link_down_after_s:
        return Watch.LOSE, f"no frame from the device for {observed.silent_for_s:.1f} s"
    if observed.rehandshake_wanted:
        return Watch.REHANDSHAKE, ""
    if observed.idle_for_s >= poll_interval_s:
        return Watch.KEEPALIVE, ""
    return Watch.WAIT, ""


@dataclass(frozen=True)
class Backoff:
    """When the next reconnection attempt is due, doubling the wait after each failure."""

    initial_s: float
    maximum_s: float
    wait_s: float = 0.0
    next_at: float = 0.0

    def due(self, now: float) -> bool:
        return now >= self.next_at

    def failed(self, now: float) -> Backoff:
        wait = self.initial_s if self.wait_s == 0.0 else min(self.wait_s * 2, self.maximum_s)
        return Backoff(self.initial_s, self.maximum_s, wait, now + wait)

    def reset(self) -> Backoff:
        return Backoff(self.initial_s, self.maximum_s)
