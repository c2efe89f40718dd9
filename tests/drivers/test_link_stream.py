"""The link's event stream alone (drivers/link_stream.py): each event through the host's
seq rules, and the driver events those rules queue in line with the cards."""

from __future__ import annotations

from cardshoe.drivers import link_sequencing as sequencing
from cardshoe.drivers.link_events import ProtocolViolation, SequenceGap
from cardshoe.drivers.link_stream import EventStream, LinkCounters
from cardshoe.drivers.protocol.cardid import CardId, CardSuit
from cardshoe.drivers.protocol.messages import CardRead, CutCard, Orientation, SensorFlag


def card(seq: int, rank: int = 1, **changes: object) -> CardRead:
    fields: dict = {
        "seq": seq,
        "device_time_ms": seq * 10,
        "card_code": CardId(rank, CardSuit.SPADES).encode(),
        "orientation": Orientation.FACE_DOWN,
        "flags": SensorFlag(0),
        "feed_group": 0,
        "feed_size": 1,
    } | changes
    return CardRead(**fields)


def stream_at(next_seq: int) -> EventStream:
    stream = EventStream("/dev/ttyUSB0", LinkCounters())
    stream.position = sequencing.from_hello(stream.position, 0, next_seq, first=True)
    return stream


def test_events_are_queued_once_in_order_and_a_duplicate_is_acknowledged_again() -> None:
    stream = stream_at(4)
    assert [stream.classify(event) for event in (card(1), card(2), CutCard(3, 30))] == [
        False,
        False,
        False,
    ]
    assert stream.classify(card(2)) is False  # a resend of what the controller holds
    assert list(stream.queue) == [card(1), card(2), CutCard(3, 30)]
    stream.position = sequencing.acknowledged(stream.position, 3) or stream.position
    assert stream.classify(card(2)) is True  # acknowledged already: ack again, drop
    assert (stream.counters.retransmissions, stream.counters.duplicates) == (1, 1)
    assert stream.accepted == 3


def test_a_jump_is_a_gap_reported_once_and_the_later_event_held_back() -> None:
    stream = stream_at(9)
    stream.classify(card(1))
    stream.classify(card(4))
    stream.classify(card(4))
    assert list(stream.queue) == [card(1), SequenceGap(2, 4)]
    assert stream.counters.sequence_gaps == 1


def test_a_changed_resend_and_contradicting_feed_fields_are_violations() -> None:
    stream = stream_at(9)
    stream.classify(card(1))
    stream.classify(card(1, rank=2))
    stream.classify(card(2, feed_group=3))
    violations = [item for item in stream.queue if isinstance(item, ProtocolViolation)]
    assert [item.seq for item in violations] == [1, 2]
    assert "came again with other contents" in violations[0].reason
    assert "without DOUBLE_FEED_SUSPECTED" in violations[1].reason


def test_a_seq_beyond_the_stream_asks_the_device_and_is_dropped_if_it_never_got_there() -> None:
    stream = stream_at(3)
    stream.classify(card(7))
    assert stream.hello_wanted and not stream.queue
    stream.verify_beyond()  # the device's HELLO still says next seq 3
    (violation,) = stream.queue
    assert isinstance(violation, ProtocolViolation) and violation.seq == 7
