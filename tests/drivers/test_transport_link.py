"""The host's link rules over a real pty, against a peer scripted frame by frame.

These are the cases a correct device never produces (gaps, CRC-valid
garbage, a foreign major, a clone) or that need exact control of timing
(a lost answer, a lost ACK); the contract suite runs the ordinary protocol
against the real simulator over every transport.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from support.driver_testing import (
    WAIT_S,
    ScriptedPeer,
    ThreadedCall,
    hello,
)

from cardshoe.drivers.device import DealerDevice, ShoeDevice, open_device
from cardshoe.drivers.errors import (
    CommandRefused,
    DeviceGone,
    DeviceTimeout,
    LinkProtocolError,
    PortBusy,
)
from cardshoe.drivers.link import LinkTiming
from cardshoe.drivers.link_events import (
    LinkLost,
    ProtocolViolation,
    SequenceGap,
    SequenceRegression,
)
from cardshoe.drivers.protocol.cardid import CardId
from cardshoe.drivers.protocol.framing import encode_frame
from cardshoe.drivers.protocol.message_codec import encode_message
from cardshoe.drivers.protocol.messages import (
    Ack,
    Capability,
    CardRead,
    DealNext,
    DeviceKind,
    ErrorCode,
    GateMode,
    GetInfo,
    GetStatus,
    Orientation,
    Reply,
    SensorFlag,
    SetGate,
    Status,
    StatusFlag,
)

FAST_RETRY = LinkTiming(reply_timeout_s=0.1, poll_interval_s=60.0, link_down_after_s=120.0)


@pytest.fixture
def peer() -> Iterator[ScriptedPeer]:
    peer = ScriptedPeer()
    yield peer
    peer.unplug()


def card(seq: int, text: str = "AS", **changes: object) -> CardRead:
    fields = {
        "seq": seq,
        "device_time_ms": 1000 + seq,
        "card_code": CardId.parse(text).encode(),
        "orientation": Orientation.FACE_DOWN,
        "flags": SensorFlag(0),
        "feed_group": 0,
        "feed_size": 1,
    }
    return CardRead(**(fields | changes))  # type: ignore[arg-type]


def test_the_handshake_picks_the_device_class_and_reports_identity(peer: ScriptedPeer) -> None:
    with peer.connect(last_acked_seq=7, next_seq=9) as device:
        assert isinstance(device, ShoeDevice)
        info = device.info
        assert (info.model, info.serial_number, info.kind) == (
            "SCRIPTED",
            "PEER1",
            DeviceKind.MANUAL_SHOE,
        )
        assert info.protocol_version == "1.0"
        assert info.counters["last_acked_seq"] == 7
        assert info.counters["next_seq"] == 9
        assert info.to_json()["capabilities"] == ["GATE", "DOUBLE_FEED_DETECTION"]


def test_a_dealer_gets_the_dealer_class(peer: ScriptedPeer) -> None:
    with peer.connect(
        device_kind=DeviceKind.AUTO_DEALER, capabilities=Capability.DEAL_NEXT
    ) as device:
        assert isinstance(device, DealerDevice)
        with ThreadedCall(device.deal_next) as call:
            request = peer.expect(DealNext)
            peer.send(Reply(request.request_id, ErrorCode.OK))
        assert call.error is None


def test_events_arrive_in_order_and_are_acked_only_when_the_controller_says(
    peer: ScriptedPeer,
) -> None:
    with peer.connect() as device:
        peer.send(card(1, "AS"))
        assert device.next_event(WAIT_S) == card(1, "AS")
        peer.send(card(1, "AS"))  # the device's resend: the controller has it, not yet acked
        assert device.next_event(0.2) is None
        assert not any(isinstance(message, Ack) for message in peer.received_now())
        device.ack(1)
        assert peer.expect(Ack) == Ack(1)
        peer.send(card(2, "KH"))
        assert device.next_event(WAIT_S) == card(2, "KH")
        assert device.info.counters["retransmissions"] == 1


def test_a_duplicate_of_an_acked_event_is_acked_again_and_dropped(peer: ScriptedPeer) -> None:
    with peer.connect(last_acked_seq=5, next_seq=6) as device:
        peer.send(card(4))
        assert peer.expect(Ack) == Ack(5)
        assert device.next_event(0.2) is None
        assert device.info.counters["duplicates"] == 1


def test_a_gap_is_reported_once_and_held_until_resolved(peer: ScriptedPeer) -> None:
    with peer.connect(next_seq=5) as device:
        peer.send(card(1))
        assert device.next_event(WAIT_S) == card(1)
        device.ack(1)
        peer.send(card(4), card(4))
        assert device.next_event(WAIT_S) == SequenceGap(expected=2, got=4)
        assert device.next_event(0.2) is None
        device.set_journaled_seq(3)
        assert peer.expect(Ack) == Ack(1)
        assert peer.expect(Ack) == Ack(3)
        peer.send(card(4))
        assert device.next_event(WAIT_S) == card(4)


def test_a_journal_behind_the_device_is_a_gap(peer: ScriptedPeer) -> None:
    with peer.connect(last_acked_seq=10, next_seq=11) as device:
        device.set_journaled_seq(8)
        assert device.next_event(WAIT_S) == SequenceGap(expected=9, got=11)


def test_a_journal_ahead_of_the_device_acks_again_and_drops_the_replay(
    peer: ScriptedPeer,
) -> None:
    with peer.connect(last_acked_seq=3, next_seq=8) as device:
        device.set_journaled_seq(5)
        assert peer.expect(Ack) == Ack(5)
        peer.send(card(4))
        assert peer.expect(Ack) == Ack(5)
        peer.send(card(6))
        assert device.next_event(WAIT_S) == card(6)


def test_a_device_counter_behind_the_journal_is_a_regression(peer: ScriptedPeer) -> None:
    with peer.connect(last_acked_seq=2, next_seq=3) as device:
        device.set_journaled_seq(40)
        assert device.next_event(WAIT_S) == SequenceRegression(
            host_seq=40, device_next_seq=3, device_acked_seq=2
        )


def test_a_device_that_comes_back_with_a_lower_counter_is_a_regression(
    peer: ScriptedPeer,
) -> None:
    with peer.connect(last_acked_seq=5, next_seq=6) as device:
        device.set_journaled_seq(5)
        peer.send(hello(0))  # the device restarted ...
        request = peer.expect(GetInfo)
        peer.send(hello(request.request_id, last_acked_seq=0, next_seq=1))  # ... with no memory
        assert device.next_event(WAIT_S) == SequenceRegression(host_seq=5, device_next_seq=1)


def test_an_ack_the_device_lost_is_sent_again_at_the_handshake(peer: ScriptedPeer) -> None:
    with peer.connect(next_seq=2) as device:
        peer.send(card(1))
        assert device.next_event(WAIT_S) == card(1)
        device.ack(1)
        assert peer.expect(Ack) == Ack(1)
        peer.send(hello(0))
        request = peer.expect(GetInfo)
        peer.send(hello(request.request_id, last_acked_seq=0, next_seq=2))
        assert peer.expect(Ack) == Ack(1)
        assert device.next_event(0.2) is None


def test_contradicting_feed_fields_raise_a_protocol_violation_before_the_card(
    peer: ScriptedPeer,
) -> None:
    with peer.connect() as device:
        bad = card(1, feed_group=0, feed_size=2)
        peer.send(bad)
        violation = device.next_event(WAIT_S)
        assert isinstance(violation, ProtocolViolation)
        assert violation.seq == 1
        assert "feed size 2" in violation.reason
        assert device.next_event(WAIT_S) == bad


def test_a_proper_double_feed_raises_no_violation(peer: ScriptedPeer) -> None:
    with peer.connect() as device:
        together = {"flags": SensorFlag.DOUBLE_FEED_SUSPECTED, "feed_group": 3, "feed_size": 2}
        pair = [card(1, "AS", **together), card(2, "KH", **together)]
        peer.send(pair[0])
        assert device.next_event(WAIT_S) == pair[0]
        device.ack(1)
        peer.send(pair[1])
        assert device.next_event(WAIT_S) == pair[1]


def test_garbage_and_undecodable_frames_are_counted_never_raised(peer: ScriptedPeer) -> None:
    with peer.connect() as device:
        undecodable = encode_frame(bytes([1, 0x10, 0, 1, 0, 0, 0]))  # a CARD with no body
        peer.send_raw(b"\x17\x42garbage\x00" + undecodable + undecodable)
        violation = device.next_event(WAIT_S)
        assert isinstance(violation, ProtocolViolation)
        assert violation.seq == 1
        peer.send(card(1))
        assert device.next_event(WAIT_S) == card(1)
        counters = device.info.counters
        assert counters["undecodable"] == 2
        assert counters["crc_errors"] + counters["cobs_errors"] >= 1


def test_a_damaged_copy_before_each_event_is_never_accepted(peer: ScriptedPeer) -> None:
    flips = random.Random(5)
    with peer.connect() as device:
        for seq in range(1, 21):
            frame = bytearray(encode_frame(encode_message(card(seq, "9D"))))
            position = flips.randrange(len(frame) - 1)  # any byte but the delimiter
            frame[position] ^= 1 << flips.randrange(8)
            peer.send_raw(bytes(frame))
            peer.send(card(seq, "9D"))
            assert device.next_event(WAIT_S) == card(seq, "9D")
            device.ack(seq)
        assert device.next_event(0.2) is None
        counters = device.info.counters
        assert counters["crc_errors"] + counters["cobs_errors"] >= 20
        assert counters["undecodable"] == 0


def test_a_lost_answer_is_retried_with_the_same_request_id(peer: ScriptedPeer) -> None:
    with peer.connect(timing=FAST_RETRY) as device, ThreadedCall(device.get_status) as call:
        first = peer.expect(GetStatus)
        second = peer.expect(GetStatus)
        assert second.request_id == first.request_id
        peer.send(Status(second.request_id, StatusFlag(0), GateMode.LOCKED, 0, None, ()))
    assert call.error is None
    assert call.result.gate is GateMode.LOCKED


def test_no_answer_after_every_retry_is_a_timeout(peer: ScriptedPeer) -> None:
    with peer.connect(timing=FAST_RETRY) as device:
        with pytest.raises(DeviceTimeout):
            device.get_status()
        sends = [m for m in peer.received_now() if isinstance(m, GetStatus)]
        assert len(sends) == 3
        assert len({message.request_id for message in sends}) == 1


def test_a_refusal_carries_the_device_error_code(peer: ScriptedPeer) -> None:
    with peer.connect() as device, ThreadedCall(lambda: device.set_gate(False)) as call:
        request = peer.expect(SetGate)
        assert request.mode is GateMode.OPEN
        peer.send(Reply(request.request_id, ErrorCode.DOOR_OPEN))
    assert isinstance(call.error, CommandRefused)
    assert call.error.code is ErrorCode.DOOR_OPEN


def test_a_missing_capability_is_refused_without_asking(peer: ScriptedPeer) -> None:
    with peer.connect(capabilities=Capability(0)) as device:
        with pytest.raises(CommandRefused) as refused:
            device.set_gate(True)
        assert refused.value.code is ErrorCode.UNSUPPORTED
        assert not any(isinstance(message, SetGate) for message in peer.received_now())


def test_a_device_refusing_our_major_fails_the_open(peer: ScriptedPeer) -> None:
    with peer.opening() as opening:
        request = peer.expect(GetInfo)
        peer.send(Reply(request.request_id, ErrorCode.VERSION_MISMATCH))
        with pytest.raises(LinkProtocolError, match="VERSION_MISMATCH"):
            opening.result(WAIT_S)


def test_a_hello_in_a_foreign_major_fails_the_open(peer: ScriptedPeer) -> None:
    with peer.opening() as opening:
        request = peer.expect(GetInfo)
        payload = bytearray(encode_message(hello(request.request_id)))
        payload[0] = 2
        peer.send_raw(encode_frame(bytes(payload)))
        with pytest.raises(LinkProtocolError, match=r"protocol 2\.x"):
            opening.result(WAIT_S)


def test_acking_an_event_never_delivered_is_a_caller_bug(peer: ScriptedPeer) -> None:
    with peer.connect() as device, pytest.raises(ValueError, match="only events up to 0"):
        device.ack(1)


def test_an_unsolicited_hello_makes_the_host_handshake_again(peer: ScriptedPeer) -> None:
    with peer.connect() as device:
        peer.send(hello(0))
        request = peer.expect(GetInfo)
        peer.send(hello(request.request_id))
        peer.send(card(1))
        assert device.next_event(WAIT_S) == card(1)


def test_a_second_opener_is_told_who_holds_the_port(peer: ScriptedPeer) -> None:
    with peer.connect(), pytest.raises(PortBusy, match=r"in use by .*\(pid \d+\)"):
        open_device(peer.path, timeout=WAIT_S)


def test_an_unplug_without_reconnect_ends_the_event_stream(peer: ScriptedPeer) -> None:
    device = peer.connect(reconnect=False)
    peer.send(card(1))
    assert device.next_event(WAIT_S) == card(1)
    peer.unplug()
    lost = device.next_event(WAIT_S)
    assert isinstance(lost, LinkLost)
    with pytest.raises(DeviceGone):
        device.next_event(WAIT_S)
    with pytest.raises(DeviceGone):
        device.get_status()
    device.close()


def test_case_7_a_forged_far_ahead_card_is_a_violation_not_a_gap(peer: ScriptedPeer) -> None:
    """Issue 11 case 7: one CRC-valid CARD with a far-ahead seq on an unpaired link used to
    be a gap whose clearing wedged the table. The host asks the device where its stream
    stands; the device's HELLO shows it never got there: one alarm, and its own stream
    goes on."""
    with peer.connect(next_seq=2) as device:
        peer.send(card(1))
        assert device.next_event(WAIT_S) == card(1)
        device.ack(1)
        assert peer.expect(Ack) == Ack(1)
        peer.send(card(0xFFFFFF00, "KH"), card(0xFFFFFF00, "KH"))
        request = peer.expect(GetInfo)
        peer.send(hello(request.request_id, last_acked_seq=1, next_seq=2))
        violation = device.next_event(WAIT_S)
        assert isinstance(violation, ProtocolViolation)
        assert violation.seq == 0xFFFFFF00 and "beyond the device's stream" in violation.reason
        peer.send(card(2, "QD"))
        assert device.next_event(WAIT_S) == card(2, "QD")
        assert device.info.counters["sequence_gaps"] == 0
        device.ack(2)
        assert peer.expect(Ack) == Ack(2)


def test_case_7_an_ack_beyond_the_devices_counter_is_not_counted_as_taken(
    peer: ScriptedPeer,
) -> None:
    """The journal is ahead of a wiped device: the host's ACK is one the device ignores, so it
    must not turn the regression into a gap once the regression is resolved."""
    with peer.connect(last_acked_seq=0, next_seq=1) as device:
        device.set_journaled_seq(81)
        regression = device.next_event(WAIT_S)
        assert regression == SequenceRegression(host_seq=81, device_next_seq=1)
        assert device.info.counters["last_acked_seq"] == 0
        device.resync(0)
        peer.send(card(1))
        assert device.next_event(WAIT_S) == card(1)
        assert device.info.counters["sequence_gaps"] == 0


def test_case_11_a_different_card_under_a_delivered_seq_is_an_alarm(peer: ScriptedPeer) -> None:
    """Issue 11 case 11: a forged CARD with the next seq was journaled and the genuine one
    under the same seq dropped as a duplicate without a look at its contents."""
    with peer.connect(next_seq=1) as device:
        peer.send(card(1, "KH"))  # the forger's, first
        assert device.next_event(WAIT_S) == card(1, "KH")
        device.ack(1)
        assert peer.expect(Ack) == Ack(1)
        peer.send(card(1, "AS"), card(1, "AS"))  # the device's own, late, resent
        violation = device.next_event(WAIT_S)
        assert isinstance(violation, ProtocolViolation) and violation.seq == 1
        assert "other contents" in violation.reason
        assert device.next_event(0.3) is None  # said once, not once per resend
        peer.send(card(1, "KH"))  # an unchanged resend is no finding
        assert device.next_event(0.3) is None


def test_case_11_an_event_lost_on_the_way_is_a_gap_once_the_device_confirms_it(
    peer: ScriptedPeer,
) -> None:
    """Event 2 never arrived (a forged ACK made the device drop it): event 3 looks beyond the
    stream the host knows; the device's HELLO shows it is real, so it is a gap, not an alarm."""
    with peer.connect(next_seq=2) as device:
        peer.send(card(1))
        assert device.next_event(WAIT_S) == card(1)
        device.ack(1)
        assert peer.expect(Ack) == Ack(1)
        peer.send(card(3, "QD"))
        request = peer.expect(GetInfo)
        peer.send(hello(request.request_id, last_acked_seq=2, next_seq=4))
        assert device.next_event(WAIT_S) == SequenceGap(expected=2, got=3)
