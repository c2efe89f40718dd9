"""The person at the table, as far as a manual shoe can tell: a button and a hand.

Tests and `shoectl demo` drive a simulated manual shoe through this policy
object and the device's press_button() / pull_card(). In `auto` mode the
dealer pulls a card whenever the gate is unlocked, one at a time: after
each card the dealer waits until the device has no unacknowledged card
(the table display has shown it) and at least `pull_interval_s` has passed.
So a host that opens the gate with RELEASE_ONE gets exactly one card, and a
host that opens it fully gets one card per acknowledgement until it locks.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class VirtualDealer:
    auto: bool = False
    """Pull whenever the gate is unlocked, without being told."""
    pull_interval_s: float = 0.0
    """The least time between two automatic pulls (realistic timing: about 1.5 s)."""
    last_pull_at: float | None = None

    def ready(self, now: float) -> bool:
        """Whether the dealer would reach for the next card now, if the shoe allows it."""
        return self.auto and (
            self.last_pull_at is None or now - self.last_pull_at >= self.pull_interval_s
        )
