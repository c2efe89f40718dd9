"""The simulator's device side of docs/protocol.md, driven in-process with a settable clock."""

from __future__ import annotations

import random
import secrets
import struct

import pytest
from support.sim_support import FakeClock, WireHost, decoded

from cardshoe.drivers.protocol.error_codes import ErrorCode
from cardshoe.drivers.protocol.framing import encode_frame
from cardshoe.drivers.protocol.link_constants import PROTOCOL_MAJOR
from cardshoe.drivers.protocol.message_codec import encode_message
from cardshoe.drivers.protocol.messages import (
    ButtonPressed,
    CardRead,
    Command,
    CutCard,
    DealNext,
    DeviceKind,
    Fault,
    FaultCleared,
    FaultKind,
    GateMode,
    GetInfo,
    GetStatus,
    Hello,
    Message,
    MessageType,
    OperationDone,
    Orientation,
    Reply,
    Reset,
    ReturnCards,
    SelfTest,
    SelfTestResult,
    SetGate,
    ShoeEmpty,
    Shuffle,
    Status,
    StatusFlag,
)
from cardshoe.firmware_sim.devices import create_device
from cardshoe.firmware_sim.errors import SimConfigError
from cardshoe.firmware_sim.faults import parse_injection
from cardshoe.firmware_sim.profiles import get_profile
from cardshoe.firmware_sim.shoe import DEFAULT_DECK_SET, build_decks, make_rng
from cardshoe.firmware_sim.timing import Timing


def make_host(profile: str = "cs-1", **options: object) -> WireHost:
    clock = FakeClock()
    options.setdefault("seed", 7)
    return WireHost(create_device(profile, clock=clock, **options), clock)


def connected(profile: str = "cs-1", **options: object) -> WireHost:
    """A host that has connected and acknowledged the power-up self-test result."""
    host = make_host(profile, **options)
    _hello, result = host.connect()
    assert isinstance(result, SelfTestResult)
    host.ack(result.seq)
    return host


def command(host: WireHost, message: Command) -> list[Message]:
    """Send a command and take the immediate answer, before any tick lets time pass."""
    host.send(message)
    return host.receive(tick=False)


def test_power_up_sends_a_delimiter_then_unsolicited_hellos_and_no_events() -> None:
    host = make_host()
    first = host.receive()
    assert host.raw[:1] == b"\x00"
    assert [type(m) for m in first] == [Hello]
    assert first[0].request_id == 0
    later = host.wait(2.05)
    assert [type(m) for m in later] == [Hello, Hello]
    assert all(m.request_id == 0 for m in later)


def test_get_info_answers_hello_and_starts_delivery_at_once() -> None:
    host = make_host()
    host.receive()
    host.send(GetInfo(1, 0))
    hello, result = host.receive()
    assert isinstance(hello, Hello) and hello.request_id == 1
    assert (hello.last_acked_seq, hello.next_seq) == (0, 2)
    assert hello.device_kind is DeviceKind.MANUAL_SHOE
    assert hello.serial_number == "SIM-CS1-0001"
    assert hello.firmware_hash == get_profile("cs-1").firmware_hash
    assert isinstance(result, SelfTestResult) and result.seq == 1 and result.passed


def test_one_event_in_flight_resent_unchanged_until_a_cumulative_ack() -> None:
    host = connected()
    host.core.press_button()
    host.core.press_button()
    (first,) = host.receive()
    assert isinstance(first, ButtonPressed)
    resent = host.wait(0.45)
    assert resent == [first, first]
    (second,) = host.ack(first.seq)
    assert second.seq == first.seq + 1
    assert host.ack(second.seq) == []
    assert host.wait(0.5) == []


def test_stale_and_future_acks_are_ignored() -> None:
    host = connected()
    host.core.press_button()
    (event,) = host.receive()
    assert host.ack(event.seq + 5) == []
    assert host.wait(0.21) == [event]
    host.ack(event.seq)
    assert host.core.link.last_acked_seq == event.seq
    host.ack(event.seq - 1)
    assert host.core.link.last_acked_seq == event.seq


def test_a_repeated_deal_next_is_answered_again_but_deals_once() -> None:
    host = connected("cs-auto")
    replies = command(host, DealNext(5))
    assert replies == [Reply(5, ErrorCode.OK)]
    (card,) = host.receive()
    assert isinstance(card, CardRead) and card.orientation is Orientation.FACE_UP
    host.send(DealNext(5))
    assert host.receive() == [Reply(5, ErrorCode.OK)]
    host.ack(card.seq)
    assert host.wait(0.3) == []
    assert host.core.status().cards_dealt == 1


def test_get_info_always_answers_afresh_and_forgets_the_stored_answer() -> None:
    host = connected("cs-auto")
    command(host, DealNext(1))
    (card,) = host.receive()
    host.send(GetInfo(1, 0))
    hello, replayed = host.receive()
    assert isinstance(hello, Hello) and hello.next_seq == card.seq + 1
    assert replayed == card
    host.ack(card.seq)
    assert command(host, DealNext(1)) == [Reply(1, ErrorCode.OK)]
    (second,) = host.receive()
    assert isinstance(second, CardRead) and second.seq == card.seq + 1


def test_reconnect_reports_acked_and_next_seq_and_replays_unacked_events() -> None:
    host = connected()
    for _ in range(3):
        host.core.press_button()
    (first,) = host.receive()
    host.ack(first.seq)
    host.send(GetInfo(9, 0))
    hello, replay = host.receive()
    assert (hello.last_acked_seq, hello.next_seq) == (first.seq, first.seq + 3)
    assert replay.seq == first.seq + 1


def test_silence_for_three_seconds_stops_events_and_restarts_hellos() -> None:
    host = connected()
    host.core.press_button()
    host.receive()
    received = host.wait(3.5)
    events = [m for m in received if isinstance(m, ButtonPressed)]
    hellos = [m for m in received if isinstance(m, Hello)]
    assert 10 <= len(events) <= 15
    assert hellos and all(h.request_id == 0 for h in hellos)
    assert isinstance(received[-1], Hello)


def header(major: int, message_type: int, flags: int, tag: int) -> bytes:
    return bytes([major, message_type, flags]) + struct.pack("<I", tag)


@pytest.mark.parametrize(
    ("payload", "reply"),
    [
        (header(PROTOCOL_MAJOR, 0x7F, 0, 12), Reply(12, ErrorCode.UNKNOWN_MESSAGE)),
        (header(2, 0x41, 0, 13), Reply(13, ErrorCode.VERSION_MISMATCH)),
        (header(PROTOCOL_MAJOR, 0x41, 0x80, 14), Reply(14, ErrorCode.UNSUPPORTED)),
        (header(PROTOCOL_MAJOR, 0x43, 0, 15) + b"\x09", Reply(15, ErrorCode.MALFORMED)),
        (b"\x01\x41", Reply(0, ErrorCode.MALFORMED)),
    ],
)
def test_unusable_payloads_are_refused_with_the_documented_result(
    payload: bytes, reply: Reply
) -> None:
    host = connected()
    host.send_raw(payload)
    assert host.receive() == [reply]


def test_status_reports_counts_gate_and_flags() -> None:
    host = connected()
    (status,) = command(host, GetStatus(2))
    assert isinstance(status, Status)
    assert (
        status.flags
        == StatusFlag.CARD_AT_EXIT | StatusFlag.SHOE_LOADED | StatusFlag.SELF_TEST_PASSED
    )
    assert (status.gate, status.cards_dealt, status.cards_remaining) == (
        GateMode.LOCKED,
        0,
        8 * 52,
    )
    auto = connected("cs-auto", decks=6)
    (status,) = command(auto, GetStatus(3))
    assert status.cards_remaining == 6 * 52


def test_gate_release_one_lets_exactly_one_card_go() -> None:
    host = connected()
    assert not host.core.pull_card()
    assert command(host, SetGate(2, GateMode.RELEASE_ONE)) == [Reply(2, ErrorCode.OK)]
    assert host.core.pull_card()
    assert not host.core.pull_card()
    (card,) = host.receive()
    assert isinstance(card, CardRead) and card.orientation is Orientation.FACE_DOWN
    assert card.card.deck_set == 0x00BC614E
    assert host.core.gate is GateMode.LOCKED


def test_commands_a_model_lacks_are_unsupported() -> None:
    shoe = connected()
    assert command(shoe, DealNext(2)) == [Reply(2, ErrorCode.UNSUPPORTED)]
    assert command(shoe, Shuffle(3, 8)) == [Reply(3, ErrorCode.UNSUPPORTED)]
    auto = connected("cs-auto")
    assert command(auto, SetGate(2, GateMode.OPEN)) == [Reply(2, ErrorCode.UNSUPPORTED)]


def test_the_cut_card_shows_twelve_from_the_end_and_the_shoe_runs_empty() -> None:
    host = connected(decks=1)
    host.core.dealer.auto = True
    command(host, SetGate(2, GateMode.OPEN))
    events = []
    received = host.receive()
    while received:
        events += received
        received = host.ack(received[-1].seq)
    cards = [e for e in events if isinstance(e, CardRead)]
    assert len(cards) == 52
    assert len({c.card_code for c in cards}) == 52
    cut_at = next(i for i, e in enumerate(events) if isinstance(e, CutCard))
    assert sum(isinstance(e, CardRead) for e in events[:cut_at]) == 52 - 12
    assert isinstance(events[-1], ShoeEmpty) and events[-1].cards_dealt == 52
    (status,) = command(host, GetStatus(3))
    assert StatusFlag.CUT_CARD_SEEN in status.flags
    assert StatusFlag.SHOE_LOADED not in status.flags


def test_shuffle_replies_then_reports_operation_done_and_is_busy_meanwhile() -> None:
    host = connected("cs-auto", timing=Timing(shuffle_s=2.0))
    assert command(host, Shuffle(4, 6)) == [Reply(4, ErrorCode.OK)]
    assert command(host, DealNext(5)) == [Reply(5, ErrorCode.BUSY)]
    (status,) = command(host, GetStatus(6))
    assert StatusFlag.BUSY in status.flags
    (done,) = [m for m in host.wait(2.1) if isinstance(m, OperationDone)]
    assert (done.request_id, done.operation, done.result) == (4, MessageType.SHUFFLE, ErrorCode.OK)
    assert done.card_count == 6 * 52


def test_return_takes_the_cards_back_and_flags_a_count_mismatch() -> None:
    host = connected("cs-auto")
    dealt = []
    for request_id in (2, 3, 4, 5):
        command(host, DealNext(request_id))
        (card,) = host.receive()
        dealt.append(card)
        host.ack(card.seq)
    assert command(host, ReturnCards(6, 4)) == [Reply(6, ErrorCode.OK)]
    (done,) = host.receive()
    assert (done.operation, done.card_count) == (MessageType.RETURN, 4)
    host.ack(done.seq)
    (status,) = command(host, GetStatus(7))
    assert status.cards_remaining == 8 * 52
    command(host, DealNext(8))
    (card,) = host.receive()
    host.ack(card.seq)
    command(host, ReturnCards(9, 2))
    (done,) = host.receive()
    (fault,) = host.ack(done.seq)
    assert isinstance(fault, Fault) and fault.kind is FaultKind.CARD_COUNT_MISMATCH
    host.ack(fault.seq)
    assert command(host, DealNext(10)) == [Reply(10, ErrorCode.FAULT_ACTIVE)]


def test_reset_replies_then_restarts_keeping_the_queue_and_counter() -> None:
    host = connected()
    host.core.press_button()
    (button,) = host.receive()
    host.send(Reset(3))
    received = host.receive()
    assert received[0] == Reply(3, ErrorCode.OK)
    assert b"\x00\x00" in host.raw or host.raw.endswith(b"\x00")
    hello = next(m for m in received[1:] + host.wait(0.05) if isinstance(m, Hello))
    assert hello.request_id == 0
    host.send(GetInfo(4, 0))
    hello, replay = host.receive()
    assert replay == button
    assert hello.next_seq == button.seq + 2  # the restart's self-test result is queued behind


def test_self_test_command_replies_then_reports_its_result() -> None:
    host = connected()
    assert command(host, SelfTest(2)) == [Reply(2, ErrorCode.OK)]
    (result,) = host.receive()
    assert isinstance(result, SelfTestResult) and result.passed
    assert result.checks_run == 9


def test_a_full_queue_raises_event_backlog_and_locks_until_acknowledged() -> None:
    host = connected(queue_capacity=6)
    command(host, SetGate(2, GateMode.OPEN))
    for _ in range(5):
        host.core.press_button()
    assert not host.core.pull_card()
    assert host.core.link.backlogged
    (first,) = host.receive(tick=False)
    assert command(host, SetGate(3, GateMode.OPEN)) == [Reply(3, ErrorCode.EVENT_BACKLOG)]
    events = [first]
    received = host.ack(first.seq)
    while received:
        events += received
        received = host.ack(received[-1].seq)
    kinds = [(type(e), getattr(e, "kind", None)) for e in events]
    assert (Fault, FaultKind.EVENT_BACKLOG) in kinds
    assert kinds[-1] == (FaultCleared, FaultKind.EVENT_BACKLOG)
    assert command(host, SetGate(4, GateMode.OPEN)) == [Reply(4, ErrorCode.OK)]


def test_a_seed_makes_the_shuffle_reproducible_and_no_seed_is_secure() -> None:
    first = create_device("cs-auto", seed=11).shoe.cards
    second = create_device("cs-auto", seed=11).shoe.cards
    other = create_device("cs-auto", seed=12).shoe.cards
    assert first == second != other
    assert isinstance(make_rng(None), secrets.SystemRandom)
    assert type(make_rng(3)) is random.Random
    assert sorted(map(str, first)) == sorted(map(str, build_decks(8, DEFAULT_DECK_SET, True)))


def test_settings_a_device_cannot_have_are_refused() -> None:
    with pytest.raises(SimConfigError, match="no simulator profile"):
        create_device("cs-9")
    with pytest.raises(SimConfigError, match="cannot happen on a AUTO_DEALER"):
        create_device("cs-auto", injections=[parse_injection("reversed-card@round=1")])
    with pytest.raises(SimConfigError, match="lacks DOOR_SENSOR"):
        create_device("cs-1-basic", injections=[parse_injection("door-open@card=3")])
    with pytest.raises(SimConfigError, match="decks must be"):
        create_device("cs-1", decks=0)


def test_frames_split_at_any_byte_still_reach_the_device() -> None:
    host = connected()
    frame = encode_frame(encode_message(GetStatus(21)))
    for byte in frame:
        host.core.feed(bytes([byte]))
    (status,) = host.receive()
    assert status.request_id == 21
    assert decoded(encode_frame(encode_message(status))) == [status]
