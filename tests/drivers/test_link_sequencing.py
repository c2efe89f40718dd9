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
    assert sequencing.classify(position, 9) is Arrival.GAP
    assert sequencing.classify(position, 10) is Arrival.BEYOND_STREAM
    held = sequencing.regressed(position)
    assert {sequencing.classify(held, seq) for seq in (2, 4, 6, 8, 10)} == {Arrival.HELD}


def test_delivery_and_acknowledgement_move_the_position_forward_only() -> None:
    position = sequencing.delivered(StreamPosition(), 1)
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
    assert sequencing.stream_findings(later) == (SequenceRegression(7, 1, device_acked_seq=0),)
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


def test_case_7_an_ack_the_device_ignores_never_turns_a_regression_into_a_gap() -> None:
    """Issue 11 case 7: the journal holds 81 events, the wiped device starts again at 1."""
    device = sequencing.from_hello(StreamPosition(), 0, 1, first=True)
    host = sequencing.journaled(device, 81)
    (regression,) = sequencing.stream_findings(host)
    assert regression == SequenceRegression(81, 1, device_acked_seq=0)
    held = sequencing.regressed(host)
    assert sequencing.ack_to_repeat(held) is None
    assert sequencing.ack_sent(held, 81) == held
    resumed = sequencing.resynchronised(held, regression.device_acked_seq)
    assert sequencing.stream_findings(resumed) == ()
    assert sequencing.classify(resumed, 1) is Arrival.NEXT


def test_case_7_a_new_epoch_is_a_regression_even_above_the_journal() -> None:
    position = sequencing.journaled(sequencing.from_hello(StreamPosition(), 90, 95, first=True), 81)
    assert sequencing.stream_findings(position, host_epoch=7, device_epoch=7) == (
        SequenceGap(82, 91),
    )
    (regression,) = sequencing.stream_findings(position, host_epoch=7, device_epoch=8)
    assert isinstance(regression, SequenceRegression)
    assert (regression.host_epoch, regression.device_epoch) == (7, 8)
    assert sequencing.stream_findings(position, host_epoch=None, device_epoch=8) == (
        SequenceGap(82, 91),
    )


def test_case_7_a_forged_far_ahead_seq_is_beyond_the_stream_not_a_gap() -> None:
    position = sequencing.delivered(sequencing.from_hello(StreamPosition(), 0, 1, first=True), 1)
    assert sequencing.classify(position, 2) is Arrival.NEXT
    assert sequencing.classify(position, 0xFFFFFF00) is Arrival.BEYOND_STREAM
