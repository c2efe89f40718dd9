"""Events the host driver itself raises, delivered in line with the device's events.

An unplug, a hole in the sequence numbers or a device that breaks the
protocol must reach the controller in order with the cards around it, so
the table can go on hold at the right moment; these travel in the same queue
as the codec's device events. They carry no seq and are never acknowledged.
They are the device-neutral driver events of api/events.py, which every family
raises alike; only LinkRestored is the wire's own here, carrying the HELLO.
"""

from __future__ import annotations

from dataclasses import dataclass

from cardshoe.drivers.api.events import (
    AuthFailure,
    DriverEvent,
    LinkLost,
    ProtocolViolation,
    SequenceGap,
    SequenceRegression,
)
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


@dataclass(frozen=True)
class LinkRestored(DriverEvent):
    """The same device answered again; it now replays its unacknowledged events.

    The wire's own form, with the device's HELLO; the cardshoe family says it as the
    neutral LinkRestored (api/events.py) with the identity the HELLO gives.
    """

    hello: Hello


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
