"""The hid family through pyusb's real core on the simulator's backend.

The simulated reader types each line as boot keyboard reports on an interrupt
endpoint, bound to the kernel's keyboard driver until the host detaches it.
"""

from __future__ import annotations

import errno
import tomllib
from pathlib import Path

import pytest
import usb.core
import usb.util
from support.driver_testing import next_events

from cardshoe.drivers.api.events import (
    ButtonPressed,
    CardId,
    CardSeen,
    CutCardSeen,
    LinkLost,
    LinkRestored,
)
from cardshoe.drivers.api.protocols import BadProtocolOptions, find_family, open_device
from cardshoe.drivers.line.checksum import Checksum
from cardshoe.drivers.line.profile import LineProfile
from cardshoe.firmware_sim.faults import parse_injection
from cardshoe.firmware_sim.hid_reader import HID_READER_PID, HidReader
from cardshoe.firmware_sim.line_reader import LineFormat
from cardshoe.firmware_sim.usb_backend import SimUsbBackend

EXAMPLE = Path(__file__).parents[2] / "docs" / "examples" / "line-shoe.toml"
URL = f"usb://1209:{HID_READER_PID:04x}/HR-000001"
WAIT_S = 5.0
NMEA = LineFormat(checksum=Checksum.NMEA)


def hid_table() -> dict:
    table = tomllib.loads(EXAMPLE.read_text())["device"]["line"]
    return {key: value for key, value in table.items() if key not in ("baud", "terminator", "ack")}


def hid_profile() -> LineProfile:
    return find_family("hid").parse_options(hid_table(), EXAMPLE.parent)


def dealt(reader: HidReader, index: int) -> CardId:
    card = reader.shoe.dealt[index]
    return CardId(card.rank, int(card.suit))


def test_a_typed_shoe_reads_as_cards_through_pyusb() -> None:
    reader = HidReader(
        format=LineFormat(checksum=Checksum.NMEA), seed=6, decks=1, cut_card_depth=49
    )
    with (
        SimUsbBackend(reader) as backend,
        open_device(URL, protocol="hid", options=hid_profile(), usb_backend=backend) as link,
    ):
        assert not backend.devices[0].kernel_driver_bound, "the host detached usbhid"
        assert link.identity.serial_number == "HR-000001"
        assert link.identity.model == "HID card reader"
        reader.press_button()
        for _ in range(3):
            reader.pull_card()
        button, *cards, cut = next_events(link, 5)
    assert isinstance(button, ButtonPressed) and button.seq == 1
    assert [card.card for card in cards if isinstance(card, CardSeen)] == [
        dealt(reader, index) for index in range(3)
    ]
    assert isinstance(cut, CutCardSeen) and cut.seq == 5


def test_the_keyboard_driver_must_be_detached_before_the_claim() -> None:
    with SimUsbBackend(HidReader()) as backend:
        device = usb.core.find(idVendor=0x1209, idProduct=HID_READER_PID, backend=backend)
        device.set_configuration()
        assert device.is_kernel_driver_active(0)
        with pytest.raises(usb.core.USBError) as refused:
            usb.util.claim_interface(device, 0)
        assert refused.value.errno == errno.EBUSY
        usb.util.dispose_resources(device)


def test_an_unplugged_reader_comes_back_with_its_driver_detached_again() -> None:
    reader = HidReader(
        format=NMEA, seed=3, decks=1, injections=[parse_injection("unplug@card=2,for=0.3")]
    )
    with (
        SimUsbBackend(reader) as backend,
        open_device(URL, protocol="hid", options=hid_profile(), usb_backend=backend) as link,
    ):
        reader.pull_card()
        (first,) = next_events(link, 1)
        reader.pull_card()
        lost, restored = next_events(link, 2)
        assert isinstance(lost, LinkLost) and isinstance(restored, LinkRestored)
        assert not backend.devices[0].kernel_driver_bound
        reader.pull_card()
        (third,) = next_events(link, 1)
    assert isinstance(first, CardSeen) and first.card == dealt(reader, 0)
    assert isinstance(third, CardSeen) and third.card == dealt(reader, 2) and third.seq == 2


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("ack", "OK", "device.hid.ack: nothing can be written back to a keyboard; remove the key"),
        ("baud", 9600, "device.hid.baud: a USB keyboard has no baud rate; remove the key"),
        ("checksum", "xor", 'device.hid.checksum = \'xor\': use "none" or "nmea"'),
    ],
)
def test_serial_line_keys_are_refused_for_a_keyboard(key: str, value: object, message: str) -> None:
    with pytest.raises(BadProtocolOptions) as caught:
        find_family("hid").parse_options(hid_table() | {key: value}, EXAMPLE.parent)
    assert str(caught.value) == message


def test_a_table_config_names_a_hid_reader_by_its_usb_ids(tmp_path: Path) -> None:
    from cardshoe.controller.config import load_config

    path = tmp_path / "table.toml"
    path.write_text(
        '[device]\nkind = "shoe"\nprotocol = "hid"\nusb_vid = 0x1209\nusb_pid = 0x0004\n'
        'usb_serial = "HR-000001"\n\n[device.hid]\n'
        + "".join(f"{key} = {value!r}\n" for key, value in hid_table().items())
    )
    device = load_config(path).device
    assert (device.protocol, device.usb_vid, device.usb_serial) == ("hid", 0x1209, "HR-000001")
    assert isinstance(device.protocol_options, LineProfile)
    assert device.protocol_options.checksum is Checksum.NMEA
