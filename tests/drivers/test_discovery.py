"""Discovery and `shoectl list`: what a technician sees before opening anything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import usb.backend.libusb0
import usb.backend.libusb1
import usb.backend.openusb
from pytest_mock import MockerFixture
from serial.tools.list_ports_common import ListPortInfo
from support.shoectl import ShoectlRunner

from cardshoe.drivers.device import open_device
from cardshoe.drivers.discovery import discover, serial_candidates
from cardshoe.firmware_sim.devices import create_device
from cardshoe.firmware_sim.usb_backend import SimUsbBackend

USB_BACKENDS = (usb.backend.libusb1, usb.backend.libusb0, usb.backend.openusb)
NO_LIBUSB = all(backend.get_backend() is None for backend in USB_BACKENDS)


def port(device: str, vid: int | None = None, serial_number: str | None = None) -> ListPortInfo:
    info = ListPortInfo(device, skip_link_detection=True)
    info.vid, info.pid = (vid, 0x6001) if vid else (None, None)
    info.serial_number = serial_number
    info.manufacturer = "FTDI" if vid else None
    info.location = "1-1.4" if vid else None
    return info


def test_usb_serial_ports_and_cardshoe_links_are_candidates(
    tmp_path: Path, pty_path: str, mocker: MockerFixture
) -> None:
    """No USB-serial adapter exists here, so pyserial's port list is given; links are real."""
    cardshoe_links, by_id = tmp_path / "cardshoe", tmp_path / "by-id"
    cardshoe_links.mkdir()
    by_id.mkdir()
    (cardshoe_links / "shoe-FT1234").symlink_to(pty_path)
    (by_id / "usb-FTDI_FT232R_FT1234-if00-port0").symlink_to(pty_path)
    mocker.patch(
        "serial.tools.list_ports.comports",
        return_value=[port("/dev/ttyS0"), port(pty_path, vid=0x0403, serial_number="FT1234")],
    )
    (candidate,) = serial_candidates(cardshoe_links, (by_id,))
    assert candidate.url == str(cardshoe_links / "shoe-FT1234")
    assert candidate.device_path == pty_path
    assert candidate.symlinks == (
        str(cardshoe_links / "shoe-FT1234"),
        str(by_id / "usb-FTDI_FT232R_FT1234-if00-port0"),
    )
    record = candidate.to_json()
    assert (record["usb_id"], record["serial_number"], record["location"]) == (
        "0403:6001",
        "FT1234",
        "1-1.4",
    )


def test_a_plain_port_counts_only_with_a_cardshoe_link(
    tmp_path: Path, pty_path: str, mocker: MockerFixture
) -> None:
    mocker.patch("serial.tools.list_ports.comports", return_value=[port(pty_path)])
    assert serial_candidates(tmp_path / "cardshoe", ()) == []
    (tmp_path / "cardshoe").mkdir()
    (tmp_path / "cardshoe" / "shoe-rs232").symlink_to(pty_path)
    (candidate,) = serial_candidates(tmp_path / "cardshoe", ())
    assert candidate.url == str(tmp_path / "cardshoe" / "shoe-rs232")
    assert candidate.to_json()["usb_id"] is None


def test_usb_devices_are_listed_with_what_tells_them_apart(tmp_path: Path) -> None:
    shoe = create_device("cs-1", serial_number="SHOE-7")
    dealer = create_device("cs-auto", serial_number="DEALER-2")
    with SimUsbBackend(shoe, dealer) as backend:
        found = discover(usb_backend=backend, cardshoe_link_dir=tmp_path, serial_link_dirs=())
        usb_found = [candidate for candidate in found.candidates if candidate.transport == "usb"]
        assert [(c.url, c.serial_number, c.product) for c in usb_found] == [
            ("usb://1209:0001/SHOE-7", "SHOE-7", shoe.profile.product),
            ("usb://1209:0001/DEALER-2", "DEALER-2", dealer.profile.product),
        ]
        assert len({candidate.location for candidate in usb_found}) == 2
        assert found.notes == ()
        with open_device(usb_found[1].url, usb_backend=backend) as device:
            assert device.info.serial_number == "DEALER-2"


@pytest.mark.skipif(not NO_LIBUSB, reason="libusb is installed here")
def test_without_libusb_usb_is_skipped_with_a_note(tmp_path: Path) -> None:
    found = discover(cardshoe_link_dir=tmp_path, serial_link_dirs=())
    assert [candidate for candidate in found.candidates if candidate.transport == "usb"] == []
    assert any("libusb" in note for note in found.notes)


def test_shoectl_list_json_is_an_array(shoectl: ShoectlRunner) -> None:
    result = shoectl("list", "--json")
    assert result.returncode == 0, result.stderr
    candidates = json.loads(result.stdout)
    assert isinstance(candidates, list)
    assert all({"url", "transport", "serial_number", "symlinks"} <= set(c) for c in candidates)


@pytest.mark.skipif(not NO_LIBUSB, reason="libusb is installed here")
def test_shoectl_list_notes_the_missing_usb_backend(shoectl: ShoectlRunner) -> None:
    result = shoectl("list")
    assert result.returncode == 0
    assert "libusb" in result.stderr
    assert "Traceback" not in result.stderr
