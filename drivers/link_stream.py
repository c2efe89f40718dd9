"""The device's event stream as the host keeps it: where it stands, and the queue the
controller reads.

Every event goes through the host's seq rules (link_sequencing.py, pure) here:
delivered once in order, a duplicate acknowledged again, a resend of what the
controller holds dropped, a jump a SequenceGap, a seq beyond the device's stream
checked against its next HELLO. The driver events those rules raise are queued in
line with the cards. Not thread-safe: the link calls it with its lock held and wakes
whoever waits on the queue afterwards.
"""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass

from cardshoe.drivers import link_sequencing as sequencing
from cardshoe.drivers.api.events import ProtocolViolation, SequenceGap, SequenceRegression
from cardshoe.drivers.link_events import DeviceEvent, feed_violation
from cardshoe.drivers.protocol.messages import CardRead, Event

log = logging.getLogger("cardshoe.drivers.link")  # the link's own log: one logger per device link

RECENT_EVENTS = 256


@dataclass
class LinkCounters:
    """What the link has seen beyond the frame decoder's counters."""

    undecodable: int = 0
    """Frames with a good CRC whose payload is not a valid message."""
    duplicates: int = 0
    """Events at or below the acknowledged seq, acknowledged again and dropped."""
    retransmissions: int = 0
    """Resends of an event the controller holds but has not acknowledged yet."""
    sequence_gaps: int = 0
    unmatched_answers: int = 0
    """Answers to no waiting command (late, or to an earlier session)."""
    command_retries: int = 0
    reconnects: int = 0
    auth_failures: int = 0
    """Frames dropped unread because they failed authentication (protocol 1.1)."""


class EventStream:
    """The stream position, its epoch and the event queue of one device's link."""

    def __init__(self, url: str, counters: LinkCounters) -> None:
        self.url = url
        self.counters = counters
        self.position = sequencing.StreamPosition()
        self.epoch: int | None = None
        """The stream epoch the position counts in: the journal's, else the first HELLO's."""
        self.queue: deque[DeviceEvent] = deque()
        self.accepted = 0
        self.recent: deque[tuple[int, Event]] = deque(maxlen=RECENT_EVENTS)
        self.hello_wanted = False
        """A seq beyond the stream came: the device's next HELLO must say where it stands."""
        self.reported_gap: tuple[int, int] | None = None
        self.reported_regression: SequenceRegression | None = None
        self._reported_beyond: int | None = None
        self._unverified_beyond: int | None = None
        """A seq beyond the announced stream, dropped until a new HELLO says whether the
        device has reached it (a gap) or not (a frame that is not the device's)."""
        self._reported_conflicts: deque[int] = deque(maxlen=RECENT_EVENTS)

    def check_position(self, device_epoch: int | None) -> None:
        """Queue a gap or regression if the device's stream and ours disagree."""
        findings = sequencing.stream_findings(
            self.position, host_epoch=self.epoch, device_epoch=device_epoch
        )
        for finding in findings:
            if isinstance(finding, SequenceGap):
                self.report_gap(finding.expected, finding.got)
                continue
            self.position = sequencing.regressed(self.position)
            if finding == self.reported_regression:
                continue
            self.reported_regression = finding
            log.error(
                "%s: the device's stream went back: next seq %d (epoch %s) against the "
                "recorded %d (epoch %s)",
                self.url,
                finding.device_next_seq,
                finding.device_epoch,
                finding.host_seq,
                finding.host_epoch,
            )
            self.queue.append(finding)

    def classify(self, event: Event) -> bool:
        """Apply the host's seq rules to one event; True: acknowledge it again."""
        seq = event.seq
        arrival = sequencing.classify(self.position, seq)
        if arrival is sequencing.Arrival.HELD:
            return False
        if arrival is sequencing.Arrival.BEYOND_STREAM:
            self._report_beyond(seq)
            return False
        if arrival in (sequencing.Arrival.DUPLICATE, sequencing.Arrival.RETRANSMISSION):
            self._compare_with_delivered(event)
        if arrival is sequencing.Arrival.DUPLICATE:
            self.counters.duplicates += 1
            return True
        if arrival is sequencing.Arrival.RETRANSMISSION:
            self.counters.retransmissions += 1
            return False
        if arrival is sequencing.Arrival.GAP:
            self.report_gap(self.position.queued_upto + 1, seq)
            return False
        if isinstance(event, CardRead) and (reason := feed_violation(event)):
            log.error("%s: %s", self.url, reason)
            self.queue.append(ProtocolViolation(reason, seq))
        self.queue.append(event)  # type: ignore[arg-type]
        self.position = sequencing.delivered(self.position, seq)
        self.accepted += 1
        self.recent.append((self.accepted, event))
        return False

    def _compare_with_delivered(self, event: Event) -> None:
        """A resend must be the event delivered under its seq, unchanged.

        Another event under a delivered seq means one of the two is not the
        device's (a forged frame on an unauthenticated link): raise the alarm once.
        """
        kept = next((item for _, item in reversed(self.recent) if item.seq == event.seq), None)
        if kept is None or kept == event or event.seq in self._reported_conflicts:
            return
        self._reported_conflicts.append(event.seq)
        reason = (
            f"event seq {event.seq} came again with other contents: {event!r} after the "
            f"delivered {kept!r}; one of them is not the device's"
        )
        log.error("%s: %s", self.url, reason)
        self.queue.append(ProtocolViolation(reason, event.seq))

    def _report_beyond(self, seq: int) -> None:
        """Ask the device where its stream stands (GET_INFO) before deciding what seq is.

        An event lost on the way (dropped, then acknowledged by a forger) makes the
        device's next genuine event look beyond the stream too; only the device's
        own HELLO tells that gap from a forged frame.
        """
        if self._unverified_beyond is None:
            self._unverified_beyond = seq
            self.hello_wanted = True
            log.info("%s: event seq %d is beyond the announced stream; asking", self.url, seq)

    def verify_beyond(self) -> None:
        """After a HELLO: a seq the device has not reached is not the device's."""
        seq, self._unverified_beyond = self._unverified_beyond, None
        if seq is None or seq < self.position.device_next_seq or self._reported_beyond == seq:
            return
        self._reported_beyond = seq
        reason = (
            f"event seq {seq} is beyond the device's stream (its next seq is "
            f"{self.position.device_next_seq}): not from the device; dropped"
        )
        log.error("%s: %s", self.url, reason)
        self.queue.append(ProtocolViolation(reason, seq))

    def report_gap(self, expected: int, got: int) -> None:
        if self.reported_gap == (expected, got):
            return
        self.reported_gap = (expected, got)
        self.counters.sequence_gaps += 1
        log.error("%s: sequence gap, expected event %d, got %d", self.url, expected, got)
        self.queue.append(SequenceGap(expected, got))
