"""The host's watch on the device's card count: a card the device dealt is in the journal.

On an unauthenticated link a forged ACK can make the device drop a card event
the host never received: the card left, the journal does not know it, and
nothing would tell until the next handshake. The device's STATUS counts every
card drawn since its pack was loaded; the journal counts the cards the shoe
took. Their difference is fixed for a shoe (cards drawn before the shoe
opened count on the device only), so a difference that grows while the
device has nothing left to send is a card missing from the journal: the
session holds the table (cards_unjournaled, events lost) for a person.

The baseline is read when the shoe opens (or, after a restart, at the first
quiet moment). A count is compared only when the link has been quiet for QUIET_S, longer
than the device's resend interval, so a card still on its way is never
taken for a lost one; and the growth must show in two reads in a row.
"""

from __future__ import annotations

from dataclasses import dataclass

from cardshoe.controller.procedure.holds import HoldReason
from cardshoe.controller.procedure.inputs import HostFinding
from cardshoe.controller.procedure.table import TableModel

CHECK_INTERVAL_S = 1.0
"""How often the session reads the device's count while a shoe is open."""
QUIET_S = 0.5
"""No event for this long (the device resends every 0.2 s): nothing is on its way."""


@dataclass
class CountWatch:
    """The difference (device count - journal count) the current shoe started with."""

    shoe_id: str | None = None
    baseline: int | None = None
    suspect: int | None = None
    """A grown difference seen once; a second read in a row confirms it."""

    def opened(self, shoe_id: str, cards_dealt: int) -> None:
        """A shoe opened with no card taken yet: the device's count now is the baseline."""
        self.shoe_id, self.baseline, self.suspect = shoe_id, cards_dealt, None

    def check(self, model: TableModel, cards_dealt: int) -> HostFinding | None:
        shoe = model.shoe
        if shoe is None or model.holds:
            self.shoe_id = self.baseline = self.suspect = None
            return None
        difference = cards_dealt - (shoe.dealt + shoe.burned)
        if model.shoe_id != self.shoe_id or self.baseline is None:
            self.shoe_id, self.baseline, self.suspect = model.shoe_id, difference, None
            return None
        if difference <= self.baseline:
            self.baseline, self.suspect = min(self.baseline, difference), None
            return None
        if self.suspect != difference:
            self.suspect = difference
            return None
        missing = difference - self.baseline
        self.baseline, self.suspect = difference, None
        return HostFinding(
            HoldReason.CARDS_UNJOURNALED,
            f"the device counts {missing} card(s) more than the journal holds, with no event "
            "left to send: a card event was lost (a forged ACK on an unauthenticated link?); "
            "check the cards on the table, then clear the hold",
        )
