"""The protocol registry: a family by name, built in or from another installed
distribution's `cardshoe.protocols` entry point, and the cardshoe family through it."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.driver_testing import WAIT_S, attach_simulator
from support.tiny_protocol import install_tiny_family

from cardshoe.drivers.api.device_link import Capability, DeviceLink
from cardshoe.drivers.api.events import (
    CardId,
    CardSeen,
    DeviceKind,
    GateState,
    ReadFlag,
    SelfTestDone,
)
from cardshoe.drivers.api.protocols import (
    BUILTIN_FAMILIES,
    ENTRY_POINT_GROUP,
    UnknownProtocol,
    family_names,
    find_family,
    open_device,
)
from cardshoe.drivers.errors import CommandRefused
from cardshoe.firmware_sim.devices import create_device


def test_a_family_from_another_distribution_is_found_by_its_entry_point_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(UnknownProtocol, match=r"no device protocol named 'tiny'.*cardshoe"):
        find_family("tiny")
    install_tiny_family(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert family_names() == [*sorted(BUILTIN_FAMILIES), "tiny"]
    with open_device("loop://", protocol="tiny", timeout=0.5) as device:
        assert isinstance(device, DeviceLink)
        assert device.capabilities == Capability.CUT_CARD_DETECTION
        with pytest.raises(CommandRefused, match="GATE: UNSUPPORTED"):
            device.set_gate(locked=True)
        device.set_journaled_seq(41)
        device._port.write(b"7H\r\nKS\r\n")  # type: ignore[attr-defined]
        seen = [device.next_event(1.0), device.next_event(1.0)]
    assert seen == [
        CardSeen(42, seen[0].device_time_ms, CardId.parse("7H"), code="7H"),  # type: ignore[union-attr]
        CardSeen(43, seen[1].device_time_ms, CardId.parse("KS"), code="KS"),  # type: ignore[union-attr]
    ]


def test_an_entry_point_cannot_take_a_built_in_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_tiny_family(tmp_path)
    points = tmp_path / "tiny_reader-1.0.dist-info" / "entry_points.txt"
    points.write_text(f"[{ENTRY_POINT_GROUP}]\ncardshoe = tiny_reader:FAMILY\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert family_names() == sorted(BUILTIN_FAMILIES)
    assert find_family("cardshoe").name == "cardshoe"


def test_the_cardshoe_family_deals_neutral_cards_in_shoe_order() -> None:
    core = create_device("cs-1", seed=7)
    core.dealer.auto = True
    with (
        attach_simulator("pty", core) as attached,
        open_device(attached.url, timeout=WAIT_S, reconnect=False) as device,
    ):
        assert device.kind is DeviceKind.SHOE
        assert device.identity.serial_number == core.serial_number
        assert Capability.ACKNOWLEDGED_DELIVERY | Capability.DRAW_CONTROL in (device.capabilities)
        assert Capability.AUTHENTICATED not in device.capabilities
        first = device.next_event(WAIT_S)
        assert isinstance(first, SelfTestDone) and first.passed
        device.ack(first.seq)
        seen = []
        for _ in range(4):
            device.release_one()
            card = device.next_event(WAIT_S)
            assert isinstance(card, CardSeen) and card.flags == ReadFlag(0)
            device.ack(card.seq)
            seen.append(str(card.card))
        status = device.get_status()
        with pytest.raises(CommandRefused, match="DEAL_NEXT: UNSUPPORTED"):
            device.deal_next()
    assert seen == [str(card) for card in core.shoe.dealt]
    assert (status.cards_dealt, status.gate) == (4, GateState.LOCKED)
