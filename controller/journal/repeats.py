"""At most one record of a kind per interval: what the wire or a client repeats is counted.

A refused operator command or a frame that fails authentication changes
nothing at the table, yet each made two records; an attacker on the wire (or
a script looping on a refused command) could grow the journal as fast as it
could send. The first of a kind in an interval is journaled in full; the
repeats that follow are only counted, and the count is journaled once the
interval is over, so the journal grows with time, not with what is sent.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Repeats:
    """Records of one kind left unwritten in the interval that ended."""

    kind: str
    count: int


class RepeatCounter:
    """Decides, per record kind, whether one more is journaled now or only counted."""

    def __init__(self, interval_s: float) -> None:
        self.interval_s = interval_s
        self._written_at: dict[str, float] = {}
        self._counts: dict[str, int] = {}

    def admit(self, kind: str, now: float) -> bool:
        """True: journal this one; False: it is counted for the interval's summary."""
        written = self._written_at.get(kind)
        if written is None or now - written >= self.interval_s:
            self._written_at[kind] = now
            return True
        self._counts[kind] = self._counts.get(kind, 0) + 1
        return False

    def due(self, now: float) -> list[Repeats]:
        """The counts whose interval has ended; their summary counts as the next record."""
        ended = [
            Repeats(kind, count)
            for kind, count in self._counts.items()
            if now - self._written_at[kind] >= self.interval_s
        ]
        for repeats in ended:
            del self._counts[repeats.kind]
            self._written_at[repeats.kind] = now
        return ended
