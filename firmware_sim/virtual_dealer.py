"""The person at the table, as far as a manual shoe can tell: a button and a hand.

Tests and `shoectl demo` drive a simulated manual shoe through this policy
object and the device's press_button() / pull_card(). In `auto` mode the
dealer pulls a card whenever the gate is unlocked, one at a time: after
each card the dealer waits until the device has no unacknowledged card
(the table display has shown it) and at least `pull_interval_s` has passed.
So a host that opens the gate with RELEASE_ONE gets exactly one card, and a
host that opens it fully gets one card per acknowledgement until it locks.

Once the shoe is done (the cut card is out, or no card is left) and the gate
has stayed locked for `reload_after_s`, an auto dealer takes out what is left
and loads a freshly shuffled pack, as a dealer does between shoes: so a host
that opens shoe after shoe (`shoectl run --auto-shoe`) gets a new pack each time.
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
    reload_after_s: float | None = 5.0
    """Load a new pack this long after a finished shoe's gate locked; None: never by itself.
    Longer than a betting pause, so the last round is never cut short."""
    locked_since: float | None = None
    """When the gate of a finished shoe was last seen locked; None while it is not."""

    def reload_due(self, now: float, shoe_done: bool, gate_locked: bool) -> bool:
        """Whether the dealer loads a new pack now (auto mode, a finished shoe, gate locked)."""
        if not (self.auto and shoe_done and gate_locked) or self.reload_after_s is None:
            self.locked_since = None
            return False
        if self.locked_since is None:
            self.locked_since = now
        return now - self.locked_since >= self.reload_after_s

    def ready(self, now: float) -> bool:
        """Whether the dealer would reach for the next card now, if the shoe allows it."""
        return self.auto and (
            self.last_pull_at is None or now - self.last_pull_at >= self.pull_interval_s
        )
