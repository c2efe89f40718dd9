"""The protocol registry: a family by name, built in or from another installed
distribution's `cardshoe.protocols` entry point, and the cardshoe family through it."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from support.driver_testing import WAIT_S, attach_simulator

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

TINY_FAMILY = textwrap.dedent(
    '''
    """A third party's reader: one card per line ("7H"), numbered on the host."""

    import time

    import serial

    from cardshoe.drivers.api.device_link import Capability, DeviceLink
    from cardshoe.drivers.api.events import (
        CardId, CardSeen, DeviceIdentity, DeviceKind, DeviceStatus, GateState,
    )
    from cardshoe.drivers.api.protocols import ProtocolFamily


    class TinyLink(DeviceLink):
        def __init__(self, url, timeout):
            super().__init__()
            self._url = url
            self._port = serial.serial_for_url(url, timeout=timeout)
            self._seq = 0

        url = property(lambda self: self._url)
        capabilities = property(lambda self: Capability(0))
        connected = property(lambda self: self._port.is_open)

        @property
        def identity(self):
            return DeviceIdentity(DeviceKind.SHOE, "TINY", "T-1", "1", b"", "tiny", "1")

        def set_journaled_seq(self, seq, epoch=None):
            self._seq = seq or 0

        def next_event(self, timeout=None):
            line = self._port.readline().strip()
            if not line:
                return None
            self._seq += 1
            card = CardId.parse(line.decode("ascii"))
            return CardSeen(self._seq, time.monotonic_ns() // 1_000_000, card, code=str(card))

        def ack(self, seq):
            pass

        def get_status(self):
            return DeviceStatus(GateState.UNKNOWN, None, None)

        def _close_link(self):
            self._port.close()


    def open_tiny(request):
        return TinyLink(request.url, request.timeout)


    FAMILY = ProtocolFamily("tiny", Capability(0), open_tiny)
    '''
)


def install_tiny_family(site: Path) -> None:
    """A distribution as pip leaves it: its module and a dist-info naming the entry point."""
    (site / "tiny_reader.py").write_text(TINY_FAMILY)
    info = site / "tiny_reader-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tiny-reader\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\ntiny = tiny_reader:FAMILY\n")


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
        assert device.capabilities == Capability(0)
        with pytest.raises(CommandRefused, match="GATE: UNSUPPORTED"):
            device.set_gate(locked=True)
        device.set_journaled_seq(41)
        device._port.write(b"7H\r\nKS\r\n")  # type: ignore[attr-defined]
        seen = [device.next_event(), device.next_event()]
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
