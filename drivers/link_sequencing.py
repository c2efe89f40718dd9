"""The host's sequencing rules for one device's event stream, as pure functions of state.

The link's reader thread asks these functions what to do with each event
and each HELLO, and keeps the StreamPosition they return; nothing here
locks, sleeps or does I/O, so every rule of docs/protocol.md "Event
delivery" is tested without threads (tests/drivers/test_link_sequencing.py):

- an event at or below the acknowledged seq is a duplicate: acknowledge
  again and drop;
- one the controller holds but has not acknowledged yet is a retransmission:
  drop;
- the seq after the last delivered one is the next event: deliver;
- a later seq the device could have sent is a gap: hold it back until the
  controller resolves the gap;
- a seq beyond everything the device has announced (HELLO next_seq, then each
  event taken in order) cannot come from the device's stream: a protocol
  violation, dropped, never a gap an operator could "resolve" into a
  position the device never reached;
- after a regression (the device's counter went back, or its stream epoch
  changed) nothing is taken or acknowledged until the operator re-synchronises:
  an ACK then could delete events of the new stream that no journal holds.
- a seq beyond everything the device has announced (HELLO next_seq, then each
  event delivered in order) cannot come from the device's stream: a
  protocol violation, dropped, never a gap an operator could "resolve" into a
  position the device never reached.

The position moves only on what the device has shown: an ACK the device
would ignore (beyond its next seq) is never counted as acknowledged by it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum

from cardshoe.drivers.api.events import SequenceGap, SequenceRegression


class Arrival(Enum):
    """What one arriving event is, against the stream position."""

    DUPLICATE = "duplicate"
    """At or below the acknowledged seq: acknowledge again, drop."""
    RETRANSMISSION = "retransmission"
    """Delivered to the controller, not acknowledged yet: drop."""
    NEXT = "next"
    """The next event: deliver it."""
    GAP = "gap"
    """Events before it are missing: hold it back, report the gap."""
    BEYOND_STREAM = "beyond_stream"
    """Further than the device has announced: not from its stream; drop it, alarm once."""
    HELD = "held"
    """A regression waits for the operator's re-synchronisation: drop it, acknowledge nothing."""


@dataclass(frozen=True)
class StreamPosition:
    """Where the host stands in one device's event stream."""

    acked: int = 0
    """Highest seq durably recorded by the controller (or, without a journal, the device)."""
    queued_upto: int = 0
    """Highest seq handed to the controller's queue."""
    device_acked: int = 0
    """Highest seq the device holds as acknowledged, as far as the host can know."""
    device_next_seq: int = 1
    """The seq of the device's next new event: from HELLO, then each event taken in order."""
    resync_pending: bool = False
    """A regression was found: the stream is not the journal's until re-synchronised."""


def classify(position: StreamPosition, seq: int) -> Arrival:
    """What an event with this seq is."""
    if position.resync_pending:
        return Arrival.HELD
    if seq <= position.acked:
        return Arrival.DUPLICATE
    if seq <= position.queued_upto:
        return Arrival.RETRANSMISSION
    if seq == position.queued_upto + 1:
        return Arrival.NEXT
    if seq > position.device_next_seq:
        return Arrival.BEYOND_STREAM
    return Arrival.GAP


def delivered(position: StreamPosition, seq: int) -> StreamPosition:
    """The position once the NEXT event seq is in the controller's queue."""
    return replace(
        position, queued_upto=seq, device_next_seq=max(position.device_next_seq, seq + 1)
    )


def acknowledged(position: StreamPosition, seq: int) -> StreamPosition | None:
    """The position once the controller acknowledges up to seq; None if nothing changes.

    Raises ValueError for a seq that was never delivered.
    """
    if seq > position.queued_upto:
        raise ValueError(
            f"cannot acknowledge event {seq}: only events up to "
            f"{position.queued_upto} were delivered"
        )
    if seq <= position.acked:
        return None
    return replace(position, acked=seq)


def ack_sent(position: StreamPosition, seq: int) -> StreamPosition:
    """The position once ACK seq is on the wire.

    The device drops an ACK beyond its last event (docs/protocol.md), so such
    an ACK moves nothing: counting it is what made a regression look like a gap.
    """
    if seq >= position.device_next_seq:
        return position
    return replace(position, device_acked=max(position.device_acked, seq))


def journaled(position: StreamPosition, seq: int | None) -> StreamPosition:
    """The position once the controller declares what its journal holds (None: trust the device)."""
    held = position.device_acked if seq is None else seq
    return replace(position, acked=held, queued_upto=held)


def from_hello(
    position: StreamPosition, last_acked_seq: int, next_seq: int, *, first: bool
) -> StreamPosition:
    """The position after a HELLO; the first handshake starts from the device's own ack."""
    start = position
    if first:
        start = replace(position, acked=last_acked_seq, queued_upto=last_acked_seq)
    return replace(start, device_acked=last_acked_seq, device_next_seq=next_seq)


def stream_findings(
    position: StreamPosition, *, host_epoch: int | None = None, device_epoch: int | None = None
) -> tuple[SequenceGap | SequenceRegression, ...]:
    """A gap or regression when the device's stream and the host's disagree.

    Epochs (protocol 1.2) compare only when both sides know one: a 1.0/1.1
    device says none, and a new journal has recorded none yet.
    """
    new_epoch = None not in (host_epoch, device_epoch) and host_epoch != device_epoch
    if new_epoch or position.device_next_seq - 1 < position.queued_upto:
        return (
            SequenceRegression(
                position.queued_upto,
                position.device_next_seq,
                device_acked_seq=position.device_acked,
                host_epoch=host_epoch,
                device_epoch=device_epoch,
            ),
        )
    if position.device_acked > position.queued_upto:
        return (SequenceGap(position.queued_upto + 1, position.device_acked + 1),)
    return ()


def regressed(position: StreamPosition) -> StreamPosition:
    """The position once a regression is reported: nothing taken until resynchronised."""
    return replace(position, resync_pending=True)


def resynchronised(position: StreamPosition, after: int) -> StreamPosition:
    """The position once the operator has re-synchronised to the device's stream after `after`.

    `after` is the device's own last acknowledged seq, so every event it still
    holds is taken as new; nothing the host believed before counts.
    """
    return replace(
        position, acked=after, queued_upto=after, device_acked=after, resync_pending=False
    )


def ack_to_repeat(position: StreamPosition) -> int | None:
    """The ACK to send again when the device holds less as acknowledged than the host."""
    if position.resync_pending or position.device_acked >= position.acked:
        return None
    return position.acked
