"""The serial transport on its own: bytes through pyserial, failures as driver errors.

loop:// is pyserial's echo port: what the host writes comes back, which is
all a byte-level check needs. A device URL that no device answers (loop://
answers the host with its own GET_INFO) must time out, not crash.
"""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from driver_testing import assert_no_driver_threads_left
from pytest_mock import MockerFixture

from cardshoe.drivers.device import open_device
from cardshoe.drivers.errors import (
    AccessDenied,
    DeviceGone,
    DeviceNotFound,
    DeviceTimeout,
    InvalidUrl,
)
from cardshoe.drivers.framing import FrameDecoder, encode_frame
from cardshoe.drivers.link_constants import SERIAL_BAUDRATE
from cardshoe.drivers.messages import Ack, encode_message
from cardshoe.drivers.serial_transport import SerialTransport
from cardshoe.drivers.transport import open_transport


@pytest.fixture(autouse=True)
def no_leaked_threads() -> Iterator[None]:
    before = set(threading.enumerate())
    yield
    assert_no_driver_threads_left(before)


def read_until(transport: SerialTransport, size: int) -> bytes:
    received = b""
    for _ in range(100):
        received += transport.read()
        if len(received) >= size:
            break
    return received


def test_loop_echoes_frames_intact_through_the_decoder() -> None:
    transport = open_transport("loop://")
    assert isinstance(transport, SerialTransport)
    try:
        frames = b"".join(encode_frame(encode_message(Ack(seq))) for seq in (1, 2, 300))
        transport.write(frames[:5])
        transport.write(frames[5:])
        payloads = FrameDecoder().feed(read_until(transport, len(frames)))
        assert payloads == [encode_message(Ack(seq)) for seq in (1, 2, 300)]
        assert transport.read() == b""
    finally:
        transport.close()


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


def test_a_closed_port_reads_as_device_gone() -> None:
    transport = open_transport("loop://")
    transport.close()
    with pytest.raises(DeviceGone):
        transport.read()
    with pytest.raises(DeviceGone):
        transport.write(b"\x00")


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
