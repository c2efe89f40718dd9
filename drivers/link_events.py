"""Events the host driver itself raises, delivered in line with the device's events.

An unplug, a hole in the sequence numbers or a device that breaks the
protocol must reach the controller in order with the cards around it, so
the table can go on hold at the right moment; these dataclasses travel in
the same queue as the codec's device events. They carry no seq and are
never acknowledged.
"""

from __future__ import annotations

from dataclasses import dataclass

from cardshoe.drivers.protocol.messages import (
    ButtonPressed,
    CardRead,
    CutCard,
    Fault,
    FaultCleared,
    Hello,
    OperationDone,
    SelfTestResult,
    SensorFlag,
    ShoeEmpty,
)


class DriverEvent:
    """Raised by the host driver, not sent by the device: no seq, no acknowledgement."""


@dataclass(frozen=True)
class LinkLost(DriverEvent):
    """The link went down; with reconnect on, the driver is already trying again."""

    reason: str


@dataclass(frozen=True)
class LinkRestored(DriverEvent):
    """The same device answered again; it now replays its unacknowledged events."""

    hello: Hello


@dataclass(frozen=True)
class SequenceGap(DriverEvent):
    """Events expected .. got-1 are missing: acknowledged elsewhere or lost.

    The driver holds back event `got` until the controller resolves the gap:
    set_journaled_seq(got - 1) accepts the loss and resumes delivery.
    """

    expected: int
    got: int


@dataclass(frozen=True)
class SequenceRegression(DriverEvent):
    """The device's counter is behind what the host recorded, or its stream epoch changed:
    lost memory, a wipe or a clone.

    The driver takes nothing from the device until the controller re-synchronises
    (resync(device_acked_seq)), an explicit step the controller journals.
    """

    host_seq: int
    device_next_seq: int
    device_acked_seq: int = 0
    """The device's own last acknowledged seq: a re-synchronisation resumes after it."""
    host_epoch: int | None = None
    """The epoch the host's seqs count in (protocol 1.2); None when unknown."""
    device_epoch: int | None = None
    """The epoch the device's HELLO gave; None from a 1.0/1.1 device."""


@dataclass(frozen=True)
class ProtocolViolation(DriverEvent):
    """The device sent something the protocol forbids; seq names the event it concerns."""

    reason: str
    seq: int | None = None


@dataclass(frozen=True)
class AuthFailure(ProtocolViolation):
    """A frame failed authentication and was dropped unread (forged, altered, replayed, or
    unsealed on an authenticated link), or the device failed authentication at a reconnect.

    A ProtocolViolation, so a controller that knows only those still raises an alarm.
    """


DeviceEvent = (
    CardRead
    | CutCard
    | ShoeEmpty
    | ButtonPressed
    | Fault
    | FaultCleared
    | SelfTestResult
    | OperationDone
    | LinkLost
    | LinkRestored
    | SequenceGap
    | SequenceRegression
    | ProtocolViolation
    | AuthFailure
)


def feed_violation(card: CardRead) -> str | None:
    """Why a card's double-feed fields contradict each other, or None if they agree.

    The codec checks each field alone; only together do they say whether the
    card left alone (group 0, size 1, no flag) or with others (a non-zero
    group, size 2 or more, DOUBLE_FEED_SUSPECTED set).
    """
    suspected = SensorFlag.DOUBLE_FEED_SUSPECTED in card.flags
    if card.feed_group == 0:
        if card.feed_size != 1:
            return f"card seq {card.seq}: feed group 0 with feed size {card.feed_size}, not 1"
        if suspected:
            return f"card seq {card.seq}: DOUBLE_FEED_SUSPECTED without a feed group"
        return None
    if not suspected:
        return f"card seq {card.seq}: feed group {card.feed_group} without DOUBLE_FEED_SUSPECTED"
    if card.feed_size < 2:
        return f"card seq {card.seq}: feed group {card.feed_group} with feed size {card.feed_size}"
    return None
