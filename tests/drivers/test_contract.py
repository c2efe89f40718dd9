"""The one contract suite: the same host-driver cases over every transport.

Each case runs against the real firmware simulator on a pseudo-terminal, on
TCP loopback, through the sim:// pyserial handler and through pyusb's real
core with the simulator's backend (TRANSPORTS). A transport passes when the
device API behaves identically on it. The byte-level case also runs over
pyserial's loop:// echo port, where a device API makes no sense.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import pytest
from support.driver_testing import (
    TRANSPORTS,
    WAIT_S,
    Attached,
    attach_simulator,
    next_of,
)

from cardshoe.drivers.device import DealerDevice, ShoeDevice, open_device
from cardshoe.drivers.errors import CommandRefused, DeviceGone, PortBusy
from cardshoe.drivers.link_events import DeviceEvent
from cardshoe.drivers.protocol.framing import DELIMITER, FrameDecoder, encode_frame
from cardshoe.drivers.protocol.link_constants import PROTOCOL_MINOR
from cardshoe.drivers.protocol.message_codec import decode_message, encode_message
from cardshoe.drivers.protocol.messages import (
    Capability,
    CardRead,
    DeviceKind,
    ErrorCode,
    Event,
    Fault,
    FaultKind,
    GetInfo,
    Hello,
    MessageType,
    OperationDone,
    SelfTestResult,
    StatusFlag,
)
from cardshoe.drivers.transports.base import Transport
from cardshoe.drivers.transports.registry import open_transport
from cardshoe.firmware_sim.devices import create_device
from cardshoe.firmware_sim.faults import parse_injection

Attach = Callable[..., Attached]


@pytest.fixture(params=TRANSPORTS)
def attach(request: pytest.FixtureRequest) -> Iterator[Attach]:
    """attach(profile, **device options): a fresh simulated device on this transport."""
    with ExitStack() as stack:

        def make(profile: str = "cs-1", **options: Any) -> Attached:
            core = create_device(profile, seed=7, **options)
            return stack.enter_context(attach_simulator(request.param, core))

        yield make


@pytest.fixture(params=(*TRANSPORTS, "loop"))
def transport(request: pytest.FixtureRequest) -> Iterator[Transport]:
    """A bare transport to a simulated shoe, or to pyserial's loop:// echo."""
    if request.param == "loop":
        yield open_transport("loop://")
        return
    core = create_device("cs-1", seed=7)
    with attach_simulator(request.param, core) as attached:
        yield open_transport(attached.url, usb_backend=attached.usb_backend)


def test_a_transport_carries_frames_whole_in_both_directions(transport: Transport) -> None:
    """The device answers GET_INFO 9 with HELLO 9; the echo port hands GET_INFO 9 back."""
    frame = DELIMITER + encode_frame(encode_message(GetInfo(9, PROTOCOL_MINOR)))
    try:
        for start in range(0, len(frame), 5):
            transport.write(frame[start : start + 5])
        decoder, answered = FrameDecoder(), []
        for _ in range(100):
            messages = [decode_message(payload) for payload in decoder.feed(transport.read())]
            answered += [m for m in messages if isinstance(m, Hello | GetInfo)]
            if any(message.request_id == 9 for message in answered):
                break
        assert any(message.request_id == 9 for message in answered)
        assert decoder.counters.bad_frames == 0
    finally:
        transport.close()
    with pytest.raises(DeviceGone):
        transport.read()


def test_the_handshake_reports_the_device_as_it_is(attach: Attach) -> None:
    attached = attach("cs-1")
    core = attached.core
    with attached.open() as device:
        info = device.info
        assert isinstance(device, ShoeDevice)
        assert info.kind is DeviceKind.MANUAL_SHOE
        assert (info.model, info.serial_number, info.firmware_version) == (
            core.profile.model,
            core.serial_number,
            core.profile.firmware_version,
        )
        assert info.firmware_hash == core.firmware_hash
        assert info.capabilities == core.profile.capabilities | Capability.FIRMWARE_UPDATE
        assert info.protocol_version == "1.3"


def test_the_power_up_self_test_comes_first_and_passes(attach: Attach) -> None:
    attached = attach("cs-auto")
    with attached.open() as device:
        assert isinstance(device, DealerDevice)
        result = device.next_event(WAIT_S)
        assert isinstance(result, SelfTestResult)
        assert result.passed
        assert result.firmware_hash == attached.core.firmware_hash
        device.ack(result.seq)
        assert StatusFlag.SELF_TEST_PASSED in device.get_status().flags


def test_released_cards_arrive_once_each_in_shoe_order(attach: Attach) -> None:
    attached = attach("cs-1")
    attached.core.dealer.auto = True
    with attached.open() as device:
        assert isinstance(device, ShoeDevice)
        next_of(device, SelfTestResult)
        seen = []
        for _ in range(6):
            device.release_one()
            seen.append(next_of(device, CardRead).card)
        assert device.next_event(0.3) is None
        assert seen == attached.core.shoe.dealt
        assert device.get_status().cards_dealt == 6


def test_the_dealer_deals_shuffles_and_takes_cards_back(attach: Attach) -> None:
    attached = attach("cs-auto")
    with attached.open() as device:
        assert isinstance(device, DealerDevice)
        next_of(device, SelfTestResult)
        dealt = []
        for _ in range(4):
            device.deal_next()
            dealt.append(next_of(device, CardRead).card)
        assert dealt == attached.core.shoe.dealt
        returned = device.return_cards(4)
        done = next_of(device, OperationDone)
        assert (done.request_id, done.operation, done.card_count) == (
            returned,
            MessageType.RETURN,
            4,
        )
        shuffled = device.shuffle(1)
        done = next_of(device, OperationDone)
        assert (done.request_id, done.operation, done.result, done.card_count) == (
            shuffled,
            MessageType.SHUFFLE,
            ErrorCode.OK,
            52,
        )


def test_a_refused_command_carries_the_device_code(attach: Attach) -> None:
    attached = attach("cs-1")
    with attached.open() as device:
        assert isinstance(device, ShoeDevice)
        next_of(device, SelfTestResult)
        attached.core.open_door()
        assert next_of(device, Fault).kind is FaultKind.DOOR_OPEN
        with pytest.raises(CommandRefused) as refused:
            device.release_one()
        assert refused.value.code is ErrorCode.DOOR_OPEN


def test_self_test_on_demand_returns_the_result_and_still_delivers_it(attach: Attach) -> None:
    attached = attach("cs-1")
    with attached.open() as device:
        delivered: list[DeviceEvent] = []

        def journal(event: DeviceEvent) -> None:
            delivered.append(event)
            if isinstance(event, Event):
                device.ack(event.seq)

        device.on_event(journal)
        result = device.self_test(timeout=WAIT_S)
        assert result.passed
        assert result.firmware_hash == attached.core.firmware_hash
        device.get_status()  # a round trip after the result: the callback has had it
    assert result in delivered


def test_unacknowledged_events_are_replayed_to_the_next_session(attach: Attach) -> None:
    attached = attach("cs-auto")
    with attached.open() as device:
        assert isinstance(device, DealerDevice)
        next_of(device, SelfTestResult)
        device.deal_next()
        card = device.next_event(WAIT_S)
        assert isinstance(card, CardRead)
    with attached.open() as device:
        assert device.next_event(WAIT_S) == card
        device.ack(card.seq)
    with attached.open() as device:
        device.set_journaled_seq(card.seq)
        assert device.next_event(0.3) is None


def test_damaged_lost_and_doubled_frames_cost_no_card_and_add_none(attach: Attach) -> None:
    attached = attach(
        "cs-auto",
        injections=[
            parse_injection("corrupt-bytes@card=2"),
            parse_injection("drop-frame@card=3"),
            parse_injection("duplicate-frame@card=4"),
        ],
    )
    with attached.open() as device:
        assert isinstance(device, DealerDevice)
        next_of(device, SelfTestResult)
        dealt = []
        for _ in range(5):
            device.deal_next()
            dealt.append(next_of(device, CardRead).card)
        assert dealt == attached.core.shoe.dealt
        counters = device.info.counters
        assert counters["crc_errors"] + counters["cobs_errors"] >= 1
        assert counters["retransmissions"] + counters["duplicates"] >= 1


def test_a_pty_port_is_opened_exclusively() -> None:
    """Serial only: the flock that keeps a second process off the same shoe."""
    core = create_device("cs-1", seed=7)
    with (
        attach_simulator("pty", core) as attached,
        attached.open(),
        pytest.raises(PortBusy, match=r"in use by .*\(pid \d+\)"),
    ):
        attached.open()


@pytest.mark.hardware
def test_a_real_device_handshakes_and_reports_status() -> None:
    """pytest -m hardware, with CARDSHOE_DEVICE_URL naming the device (e.g. /dev/cardshoe/...).

    Read-only: it acknowledges nothing, so the device keeps every event for its table.
    """
    url = os.environ.get("CARDSHOE_DEVICE_URL")
    if not url:
        pytest.skip("set CARDSHOE_DEVICE_URL to the URL of the attached device")
    with open_device(url, reconnect=False) as device:
        info = device.info
        assert info.serial_number
        assert info.protocol_version.startswith("1.")
        device.get_status()
