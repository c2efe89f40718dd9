"""When the clock ends an automatic machine's shoe (shoe.machine_end_at, Macau Art. 3.2).

The machine takes every round's cards back (Art. 7.2), so nothing in the cards ends its
shoe; the house does, after any round. Its round count and a dealer's relief are procedure
inputs and end the shoe inside the procedure (procedure/shoe_cycle.py), so a replay ends it at
the same round; a time of day is the table PC's clock, so the session asks here and gives
the procedure an EndShoe with the reason machine_end_at, which the journal keeps.
"""

from __future__ import annotations

from datetime import datetime, time, timedelta


def next_machine_ending(opened: datetime, times: tuple[time, ...]) -> datetime | None:
    """The first of the configured times of day after the shoe opened; None with none.

    Times are the table PC's local time, as a pit's shift changes are; opened is aware
    (any zone), and so is the answer.
    """
    if not times:
        return None
    local = opened.astimezone()
    candidates = (
        datetime.combine(local.date() + timedelta(days=days), when).astimezone()
        for days in (0, 1)
        for when in times
    )
    return min(moment for moment in candidates if moment > local)
