"""The host's watch on double feeds: the table never waits silently for cards that cannot come.

The cards of a double feed leave together and the device reports them back to
back, each with the group's number and size; the procedure waits for all of
them (at most MAX_FEED_SIZE, what a round can hold) before any other card may
leave, and nothing is asked of the operator meanwhile. So a group whose next
card has not come within FEED_WAIT_S (a reader that over-counts, a CRC-valid
CARD claiming 255) can only wait forever behind a locked gate. The session
then holds the table (feed_incomplete, with an alarm) and a person clears it.
"""

from __future__ import annotations

from cardshoe.controller.procedure.dealing import MAX_FEED_SIZE
from cardshoe.controller.procedure.holds import HoldReason
from cardshoe.controller.procedure.inputs import HostFinding
from cardshoe.controller.procedure.table import TableModel
from cardshoe.drivers.api.events import CardSeen

FEED_WAIT_S = 1.0
"""The rest of a double feed comes within milliseconds; after this long it is not coming."""


def stalled_feed(
    model: TableModel, last_card: CardSeen | None, idle_s: float
) -> HostFinding | None:
    """A finding when the procedure still waits for a feed's cards FEED_WAIT_S after the last."""
    shoe = model.shoe
    if shoe is None or shoe.feed is None or model.holds or idle_s < FEED_WAIT_S:
        return None
    last = "" if last_card is None else f" after card seq {last_card.seq}"
    if last_card is not None and last_card.feed_size > MAX_FEED_SIZE:
        last += f", which announced {last_card.feed_size} (a round holds {MAX_FEED_SIZE})"
    return HostFinding(
        HoldReason.FEED_INCOMPLETE,
        f"a double feed (group {shoe.feed.group}) still lacks {shoe.feed.remaining} card(s) "
        f"{idle_s:.1f} s{last}: the reader over-counted or cards were lost; check the cards "
        "out of the shoe, then clear the hold",
    )
