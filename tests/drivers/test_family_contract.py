"""The device contract every protocol family keeps, over every transport it speaks.

Each case runs once per entry of FAMILY_CASES (tests/support/driver_testing.py): the
cardshoe link on a pty, TCP, sim:// and pyusb's real core, and every other family on its
own simulator. The controller relies on exactly this much, through drivers/api, whatever
the device; the cardshoe wire's own rules stay in test_contract.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from support.driver_testing import FAMILY_CASES, WAIT_S, FamilyDevice, next_of

from cardshoe.drivers.api.device_link import Capability, DeviceLink
from cardshoe.drivers.api.events import CardSeen, DeviceKind
from cardshoe.drivers.api.protocols import find_family
from cardshoe.drivers.errors import CommandRefused, DeviceGone


@pytest.fixture(params=sorted(FAMILY_CASES))
def family(request: pytest.FixtureRequest) -> Iterator[FamilyDevice]:
    with FAMILY_CASES[request.param]() as attached:
        yield attached


def deal(attached: FamilyDevice, device: DeviceLink, count: int) -> list[CardSeen]:
    cards = []
    for _ in range(count):
        attached.let_one_out(device)
        cards.append(next_of(device, CardSeen))
    return cards


def test_a_device_says_who_it_is_and_promises_no_more_than_its_family(
    family: FamilyDevice,
) -> None:
    with family.open() as device:
        identity = device.identity
        assert identity.kind is DeviceKind.SHOE
        assert identity.protocol == family.protocol and identity.serial_number
        assert device.capabilities & find_family(family.protocol).capabilities == (
            device.capabilities
        )
        described = json.loads(json.dumps(device.describe()))
        assert described["protocol"] == family.protocol
        assert described["capabilities"] == [
            member.name.lower() for member in Capability if member in device.capabilities
        ]
        assert device.connected


def test_cards_arrive_once_each_in_the_order_they_left(family: FamilyDevice) -> None:
    with family.open() as device:
        cards = deal(family, device, 6)
        assert device.next_event(0.3) is None
    assert [str(card.card) for card in cards] == family.dealt()
    seqs = [card.seq for card in cards]
    assert seqs == sorted(set(seqs))


def test_a_new_session_goes_on_after_what_the_journal_holds(family: FamilyDevice) -> None:
    with family.open() as device:
        (first,) = deal(family, device, 1)
    with family.open() as device:
        device.set_journaled_seq(first.seq)
        (second,) = deal(family, device, 1)
    assert second.seq > first.seq
    assert [str(first.card), str(second.card)] == family.dealt()


def test_what_a_device_cannot_do_is_refused_and_a_closed_device_is_gone(
    family: FamilyDevice,
) -> None:
    device = family.open()
    capabilities = device.capabilities
    commands = {
        "deal_next": lambda: device.deal_next(),
        "shuffle": lambda: device.shuffle(1),
        "return_cards": lambda: device.return_cards(1),
    }
    if Capability.DRAW_CONTROL not in capabilities:
        commands["set_gate"] = lambda: device.set_gate(locked=True)
    if Capability.SELF_TEST not in capabilities:
        commands["self_test"] = lambda: device.self_test(WAIT_S)
    for name, command in commands.items():
        with pytest.raises(CommandRefused):
            command()
        assert device.connected, name
    device.close()
    with pytest.raises(DeviceGone):
        for _ in range(100):  # what came before the close is still delivered first
            device.next_event(0.1)
