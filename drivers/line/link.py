"""LineLink: a reader that sends lines, seen through the neutral DeviceLink.

Where the lines come from is a LineSource: a serial byte stream cut at the
profile's terminator (family.py), or a USB keyboard's key presses ended by
Enter (drivers/hid/family.py). Each line is matched against the profile and
becomes a neutral event, numbered on the host: such a reader numbers
nothing and resends nothing, so this family declares none of the
guarantees (docs/drivers.md) and the controller judges every card it gets.

Bad lines never reach the journal one by one: each kind is reported as a
ProtocolViolation at most once per interval, with how many there were, and
a burst raises a MISREAD fault (the table holds with that reason) that
clears once the reader reads properly for a whole window.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from typing import Protocol

from cardshoe.drivers.api.device_link import Capability, DeviceLink
from cardshoe.drivers.api.events import (
    ButtonPressed,
    CardSeen,
    CutCardSeen,
    DeviceEvent,
    DeviceIdentity,
    DeviceStatus,
    Event,
    FaultCleared,
    FaultKind,
    FaultRaised,
    GateState,
    LinkLost,
    LinkRestored,
    ProtocolViolation,
    ReadFlag,
)
from cardshoe.drivers.errors import DeviceGone, DriverError
from cardshoe.drivers.line.bad_lines import BadLineCounter, BadLineReport
from cardshoe.drivers.line.matching import LineKind, LineMatch, match_line, printable
from cardshoe.drivers.line.profile import LineProfile
from cardshoe.drivers.line.splitting import Overlong

log = logging.getLogger(__name__)

EVENT_OF_LINE: Mapping[LineKind, Callable[[int, int, LineMatch], Event]] = {
    LineKind.CARD: lambda seq, ms, found: CardSeen(seq, ms, found.card, code=found.text),
    # A card passed the reader but its code is in no table: a misread card.
    LineKind.UNKNOWN_CODE: lambda seq, ms, found: CardSeen(
        seq, ms, None, flags=ReadFlag.MISREAD, code=found.text
    ),
    LineKind.CUT_CARD: lambda seq, ms, found: CutCardSeen(seq, ms),
    LineKind.BUTTON: lambda seq, ms, found: ButtonPressed(seq, ms),
    # A fault line reports a moment: the reader prints nothing when the fault passes.
    LineKind.FAULT: lambda seq, ms, found: FaultRaised(
        seq, ms, FaultKind.DEVICE_SPECIFIC, found.fault_code, reports_end=False
    ),
}
"""Each kind of good line -> its neutral event (seq, the host's milliseconds, the line)."""
CARD_LINES = frozenset({LineKind.CARD, LineKind.UNKNOWN_CODE})
"""The lines a card passing the reader writes, read or not: counted as cards."""

RECONNECT_INTERVAL_S = 0.2
"""How often a lost reader is looked for again."""


class LineSource(Protocol):
    """Complete lines from a reader, whatever carries them."""

    def read(self) -> list[bytes | Overlong]:
        """The lines completed since the last call; [] after a short wait without any.
        DeviceGone when the reader is unplugged."""
        ...

    def write(self, data: bytes) -> None:
        """Send a reply (the profile's ack); DeviceGone when the reader is gone."""
        ...

    def close(self) -> None: ...


def line_capabilities(profile: LineProfile) -> Capability:
    """What a line reader with this profile can report: no guarantee of delivery, draw
    control, authenticity or counts; physical ids only when its card table names a physical
    card for every code."""
    capabilities = Capability(0)
    if profile.cards is not None and all(card.tagged for card in profile.cards.values()):
        capabilities |= Capability.PHYSICAL_IDS
    if profile.cut_card is not None:
        capabilities |= Capability.CUT_CARD_DETECTION
    if profile.button is not None:
        capabilities |= Capability.DEALER_BUTTON
    return capabilities


class LineLink(DeviceLink):
    """A reader's lines as neutral events; `source` is open, `reopen` finds it after a loss."""

    def __init__(
        self,
        url: str,
        profile: LineProfile,
        source: LineSource,
        reopen: Callable[[], LineSource],
        identity: DeviceIdentity,
        *,
        reconnect: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self._url = url
        self.profile = profile
        self._reopen = reopen
        self._identity = identity
        self._reconnect = reconnect
        self._clock = clock
        self._source: LineSource | None = source
        self._closed = False
        self._pending: deque[Event] = deque()
        self._write_lock = threading.Lock()
        self._next_seq = 1
        self._acked = 0
        self._delivered = 0
        self._retry_at = 0.0
        self.bad_lines = BadLineCounter(profile.bad_lines)
        self._counts = {"lines": 0, "cards": 0, "acks_written": 0, "link_losses": 0}

    # --- who -----------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return self._url

    @property
    def identity(self) -> DeviceIdentity:
        return self._identity

    @property
    def capabilities(self) -> Capability:
        return line_capabilities(self.profile)

    @property
    def connected(self) -> bool:
        return self._source is not None and not self._closed

    def counters(self) -> dict[str, int]:
        """Lines read, cards, acks written, link losses, bad lines by kind; and the stream's
        positions: the last seq handed out (delivered_seq) and the last acknowledged."""
        bad = {f"bad_{kind.value}": count for kind, count in self.bad_lines.totals.items()}
        positions = {"delivered_seq": self._delivered, "acked_seq": self._acked}
        return {**self._counts, **positions, "bad_lines": sum(bad.values()), **bad}

    def get_status(self) -> DeviceStatus:
        if not self.connected:
            raise DeviceGone(f"{self._url}: the reader is not connected")
        active = (FaultKind.MISREAD,) if self.bad_lines.in_burst else ()
        return DeviceStatus(
            gate=GateState.UNKNOWN,
            cards_dealt=None,
            cards_remaining=None,
            active_faults=active,
            extra=dict(self.counters()),
        )

    # --- events ----------------------------------------------------------------------------

    def set_journaled_seq(self, seq: int | None, epoch: int | None = None) -> None:
        """The journal holds up to seq: the next line is seq + 1 (a reader numbers nothing)."""
        self._next_seq = (seq or 0) + 1
        self._acked = self._delivered = seq or 0

    def ack(self, seq: int) -> None:
        """Write the profile's ack once for each line journaled up to seq."""
        count, self._acked = max(0, seq - self._acked), max(self._acked, seq)
        source = self._source
        if not self.profile.ack or not count or source is None:
            return
        try:
            with self._write_lock:
                for _ in range(count):
                    source.write(self.profile.ack)
            self._counts["acks_written"] += count
        except DeviceGone as exc:
            log.info("%s: ack not written: %s", self._url, exc)

    def next_event(self, timeout: float | None = None) -> Event | None:
        deadline = None if timeout is None else self._clock() + timeout
        while True:
            if self._pending:
                event = self._pending.popleft()
                if isinstance(event, DeviceEvent):
                    self._delivered = event.seq
                return event
            if self._closed:
                raise DeviceGone(f"{self._url}: closed")
            self._poll()
            self._pending.extend(self._reports(self._clock()))
            if not self._pending and deadline is not None and self._clock() >= deadline:
                return None

    def _poll(self) -> None:
        source = self._source
        if source is None:
            self._look_for_reader()
            return
        try:
            lines = source.read()
        except DeviceGone as exc:
            self._lose(source, str(exc))
            return
        for line in lines:
            self._take(line)

    def _lose(self, source: LineSource, reason: str) -> None:
        source.close()
        self._source = None
        self._counts["link_losses"] += 1
        self._retry_at = self._clock()
        self._pending.append(LinkLost(reason))

    def _look_for_reader(self) -> None:
        if not self._reconnect:
            self._closed = True
            return
        now = self._clock()
        if now < self._retry_at:
            time.sleep(min(RECONNECT_INTERVAL_S, self._retry_at - now))
            return
        self._retry_at = now + RECONNECT_INTERVAL_S
        try:
            self._source = self._reopen()
        except DriverError as exc:
            log.debug("%s: not back yet: %s", self._url, exc)
            return
        self._pending.append(LinkRestored(self._identity))

    # --- lines -> events -------------------------------------------------------------------

    def _take(self, line: bytes | Overlong) -> None:
        self._counts["lines"] += 1
        if isinstance(line, Overlong):
            found = LineMatch(LineKind.TOO_LONG, printable(line.head) + "...")
        else:
            found = match_line(line, self.profile)
        log.debug("%s: line %r is %s", self._url, found.text, found.describe())
        if found.kind.bad:
            self._bad(found)
            return
        self._pending.append(self._event(found))

    def _event(self, found: LineMatch) -> Event:
        seq, now_ms = self._next_seq, int(self._clock() * 1000)
        self._next_seq += 1
        if found.kind in CARD_LINES:
            self._counts["cards"] += 1
        return EVENT_OF_LINE[found.kind](seq, now_ms, found)

    def _bad(self, found: LineMatch) -> None:
        now = self._clock()
        report = self.bad_lines.count(found.kind, found.text, now)
        if report is not None:
            self._pending.append(_violation(report))
        if self.bad_lines.burst_started(now):
            log.warning("%s: a burst of bad lines; the table holds", self._url)
            self._pending.append(self._fault(FaultRaised, now))

    def _reports(self, now: float) -> list[Event]:
        events: list[Event] = [_violation(report) for report in self.bad_lines.due(now)]
        was_bursting = self.bad_lines.in_burst
        self.bad_lines.burst_started(now)
        if was_bursting and not self.bad_lines.in_burst:
            events.append(self._fault(FaultCleared, now))
        return events

    def _fault(self, kind: type[FaultRaised] | type[FaultCleared], now: float) -> Event:
        seq = self._next_seq
        self._next_seq += 1
        return kind(seq, int(now * 1000), FaultKind.MISREAD)

    # --- lifetime --------------------------------------------------------------------------

    def _close_link(self) -> None:
        self._closed = True
        source, self._source = self._source, None
        if source is not None:
            source.close()


def _violation(report: BadLineReport) -> ProtocolViolation:
    noun = "line" if report.count == 1 else "lines"
    return ProtocolViolation(
        f"{report.count} bad {noun} ({report.kind.value.replace('_', ' ')}), "
        f"the last: {report.example!r}"
    )
