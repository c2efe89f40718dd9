"""The serial transport on its own: line settings, and failures as driver errors.

Bytes through every transport are the contract suite's first case. A URL
that no device answers (pyserial's loop:// echoes the host's own GET_INFO)
must time out, not crash.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from pytest_mock import MockerFixture

from cardshoe.drivers.device import open_device
from cardshoe.drivers.errors import (
    AccessDenied,
    DeviceNotFound,
    DeviceTimeout,
    InvalidUrl,
)
from cardshoe.drivers.protocol.link_constants import SERIAL_BAUDRATE
from cardshoe.drivers.transports.registry import open_transport
from cardshoe.drivers.transports.serial_port import SerialTransport


def test_the_port_is_set_to_the_protocol_line_settings() -> None:
    transport = open_transport("loop://")
    assert isinstance(transport, SerialTransport)
    port = transport._port
    try:
        assert (port.baudrate, port.bytesize, port.parity, port.stopbits) == (
            SERIAL_BAUDRATE,
            8,
            "N",
            1,
        )
        assert not (port.xonxoff or port.rtscts or port.dsrdtr)
        assert port.exclusive
    finally:
        transport.close()


def test_a_peer_that_only_echoes_never_completes_the_handshake() -> None:
    with pytest.raises(DeviceTimeout, match="did not answer GetInfo"):
        open_device("loop://", timeout=0.5)


def test_an_unknown_scheme_is_an_invalid_url() -> None:
    with pytest.raises(InvalidUrl, match="nosuch"):
        open_transport("nosuch://thing")


def test_a_missing_port_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(DeviceNotFound, match="no device at"):
        open_transport(str(tmp_path / "ttyUSB9"))


def test_permission_denied_names_the_udev_group(mocker: MockerFixture) -> None:
    """Tests run as root here, so the kernel's EACCES is simulated at os.open."""
    master, slave = os.openpty()
    path = os.ttyname(slave)
    real_open = os.open

    def deny(name: str, *args: object, **kwargs: object) -> int:
        if name == path:
            raise PermissionError(errno.EACCES, "Permission denied", name)
        return real_open(name, *args, **kwargs)  # type: ignore[arg-type]

    mocker.patch("os.open", deny)
    try:
        with pytest.raises(AccessDenied) as denied:
            open_transport(path)
    finally:
        os.close(slave)
        os.close(master)
    message = str(denied.value)
    assert "group 'cardshoe'" in message
    assert "udev/70-cardshoe.rules" in message
