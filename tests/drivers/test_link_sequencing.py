"""The host's sequencing rules as pure functions: no thread, no transport, no clock."""

from __future__ import annotations

import pytest

from cardshoe.drivers import link_sequencing as sequencing
from cardshoe.drivers.link_events import SequenceGap, SequenceRegression
from cardshoe.drivers.link_sequencing import Arrival, StreamPosition


def test_each_arrival_is_named_against_the_position() -> None:
    position = StreamPosition(acked=3, queued_upto=5, device_acked=3, device_next_seq=9)
    assert sequencing.classify(position, 2) is Arrival.DUPLICATE
    assert sequencing.classify(position, 3) is Arrival.DUPLICATE
    assert sequencing.classify(position, 4) is Arrival.RETRANSMISSION
    assert sequencing.classify(position, 5) is Arrival.RETRANSMISSION
    assert sequencing.classify(position, 6) is Arrival.NEXT
    assert sequencing.classify(position, 8) is Arrival.GAP


def test_delivery_and_acknowledgement_move_the_position_forward_only() -> None:
    position = sequencing.delivered(sequencing.seen(StreamPosition(), 1), 1)
    assert position == StreamPosition(queued_upto=1, device_next_seq=2)
    acked = sequencing.acknowledged(position, 1)
    assert acked == StreamPosition(acked=1, queued_upto=1, device_next_seq=2)
    assert sequencing.acknowledged(acked, 1) is None
    with pytest.raises(ValueError, match="only events up to 1 were delivered"):
        sequencing.acknowledged(acked, 2)


def test_the_first_hello_starts_from_the_devices_own_ack_and_later_ones_do_not() -> None:
    first = sequencing.from_hello(StreamPosition(), 7, 9, first=True)
    assert first == StreamPosition(acked=7, queued_upto=7, device_acked=7, device_next_seq=9)
    later = sequencing.from_hello(first, 0, 1, first=False)
    assert later == StreamPosition(acked=7, queued_upto=7, device_acked=0, device_next_seq=1)
    assert sequencing.stream_findings(later) == (SequenceRegression(7, 1),)
    assert sequencing.ack_to_repeat(later) == 7


def test_a_journal_behind_the_device_is_a_gap_and_one_ahead_repeats_its_ack() -> None:
    hello = sequencing.from_hello(StreamPosition(), 10, 11, first=True)
    behind = sequencing.journaled(hello, 8)
    assert sequencing.stream_findings(behind) == (SequenceGap(9, 11),)
    ahead = sequencing.journaled(sequencing.from_hello(StreamPosition(), 3, 8, first=True), 5)
    assert sequencing.stream_findings(ahead) == ()
    assert sequencing.ack_to_repeat(ahead) == 5
    assert sequencing.journaled(hello, None) == hello


def test_an_ack_on_the_wire_counts_as_the_devices_once_sent() -> None:
    position = StreamPosition(acked=4, queued_upto=4, device_acked=2, device_next_seq=5)
    assert sequencing.ack_sent(position, 4).device_acked == 4
    assert sequencing.ack_sent(position, 1).device_acked == 2
