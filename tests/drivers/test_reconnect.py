"""Unplug and re-plug mid-round: no card event lost, none counted twice.

The simulator drops the link on every transport; the host driver must see
the loss, reconnect with backoff, handshake again and take the device's
replay through its duplicate rules, so the cards the controller journals
are exactly the shoe order.
"""

from __future__ import annotations

import pytest
from support.driver_testing import (
    TRANSPORTS,
    WAIT_S,
    ScriptedPeer,
    attach_simulator,
    hello,
    next_of,
)

from cardshoe.drivers.device import Device, ShoeDevice, open_device
from cardshoe.drivers.link import LinkTiming
from cardshoe.drivers.link_events import LinkLost, LinkRestored, ProtocolViolation
from cardshoe.drivers.protocol.cardid import CardId
from cardshoe.drivers.protocol.messages import (
    CardRead,
    Event,
    GateMode,
    GetInfo,
    GetStatus,
    SelfTestResult,
    Status,
    StatusFlag,
)
from cardshoe.firmware_sim.attach_tcp import serve_tcp
from cardshoe.firmware_sim.devices import create_device
from cardshoe.firmware_sim.faults import parse_injection

CARDS = 24


def open_gate_again_after_restore(device: Device, event: object) -> None:
    """The device restarted with its gate locked; the controller opens it again."""
    if isinstance(event, LinkRestored):
        assert isinstance(device, ShoeDevice)
        device.set_gate(False)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_unplugs_mid_round_lose_and_duplicate_no_card(transport: str) -> None:
    core = create_device("cs-1", seed=11)
    core.dealer.auto = True
    journal: list[CardId] = []
    links = {"lost": 0, "restored": 0}
    with attach_simulator(transport, core) as attached, attached.open() as device:
        assert isinstance(device, ShoeDevice)
        next_of(device, SelfTestResult)
        device.set_gate(False)
        held_back: CardRead | None = None
        while len(journal) < CARDS:
            event = device.next_event(WAIT_S)
            assert event is not None, f"stalled after {len(journal)} cards"
            if isinstance(event, LinkLost):
                links["lost"] += 1
                core.replug()
            elif isinstance(event, LinkRestored):
                links["restored"] += 1
                open_gate_again_after_restore(device, event)
                if held_back is not None:
                    device.ack(held_back.seq)
                    held_back = None
            elif isinstance(event, CardRead):
                journal.append(event.card)
                if len(journal) == 8:
                    core.unplug()  # journaled; the ACK below never reaches the device
                    device.ack(event.seq)
                elif len(journal) == 16:
                    core.unplug()  # delivered, acknowledged only after the re-plug
                    held_back = event
                else:
                    device.ack(event.seq)
            elif isinstance(event, Event):
                device.ack(event.seq)
        counters = device.info.counters
    assert journal == core.shoe.dealt[:CARDS]
    assert len(set(journal)) == CARDS
    assert links == {"lost": 2, "restored": 2}
    assert counters["reconnects"] == 2
    assert counters["sequence_gaps"] == 0


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_simulators_unplug_fault_costs_no_card(transport: str) -> None:
    core = create_device(
        "cs-1",
        seed=3,
        injections=[parse_injection(f"unplug@card={card},for=0.2") for card in (5, 9)],
    )
    core.dealer.auto = True
    journal: list[CardId] = []
    with attach_simulator(transport, core) as attached, attached.open() as device:
        next_of(device, SelfTestResult)
        assert isinstance(device, ShoeDevice)
        device.set_gate(False)
        while len(journal) < 12:
            event = device.next_event(WAIT_S * 2)
            assert event is not None, f"stalled after {len(journal)} cards"
            open_gate_again_after_restore(device, event)
            if isinstance(event, CardRead):
                journal.append(event.card)
            if isinstance(event, Event):
                device.ack(event.seq)
        reconnects = device.info.counters["reconnects"]
    assert journal == core.shoe.dealt[:12]
    assert reconnects == 2


def test_another_device_on_the_same_url_is_never_taken_for_the_first() -> None:
    first = create_device("cs-1", seed=1, serial_number="TABLE-7-SHOE")
    spare = create_device("cs-1", seed=1, serial_number="SPARE-SHOE")
    with serve_tcp(first) as tcp, open_device(tcp.url, timeout=WAIT_S) as device:
        next_of(device, SelfTestResult)
        tcp.close()
        assert isinstance(device.next_event(WAIT_S), LinkLost)
        with serve_tcp(spare, port=tcp.port):
            violation = device.next_event(WAIT_S)
            assert isinstance(violation, ProtocolViolation)
            assert "SPARE-SHOE" in violation.reason
            assert not device.connected
            assert device.info.serial_number == "TABLE-7-SHOE"


def test_a_silent_device_is_declared_lost_and_found_again() -> None:
    timing = LinkTiming(
        reply_timeout_s=0.1, poll_interval_s=0.1, link_down_after_s=0.6, backoff_initial_s=0.05
    )
    peer = ScriptedPeer()
    try:
        with peer.connect(timing=timing, reconnect=True) as device:
            poll = peer.expect(GetStatus)
            peer.send(Status(poll.request_id, StatusFlag(0), GateMode.LOCKED, 0, None, ()))
            lost = device.next_event(WAIT_S)
            assert isinstance(lost, LinkLost)
            assert "no frame" in lost.reason
            request = peer.expect(GetInfo)
            peer.send(hello(request.request_id))
            assert isinstance(device.next_event(WAIT_S), LinkRestored)
            assert device.connected
    finally:
        peer.unplug()
