"""The pty and TCP attachments, opened the way a host opens a port: with pyserial."""

from __future__ import annotations

import os
import time

import pytest
import serial
from support.sim_support import StreamHost

from cardshoe.drivers.protocol.error_codes import ErrorCode
from cardshoe.drivers.protocol.messages import (
    Ack,
    ButtonPressed,
    CardRead,
    GateMode,
    GetInfo,
    Hello,
    Message,
    Reply,
    SelfTestResult,
    SetGate,
)
from cardshoe.firmware_sim.attach_pty import serve_pty
from cardshoe.firmware_sim.attach_tcp import serve_tcp
from cardshoe.firmware_sim.devices import create_device


def port_host(port: serial.SerialBase) -> StreamHost:
    return StreamHost(port.write, lambda: port.read(max(1, port.in_waiting)))


def hello_for(request_id: int) -> object:
    return lambda m: isinstance(m, Hello) and m.request_id == request_id


def is_type(cls: type) -> object:
    return lambda m: isinstance(m, cls)


def open_when_present(path: str) -> serial.Serial:
    """Open a port that is being plugged back in, as a host's reconnect loop would."""
    deadline = time.monotonic() + 5
    while True:
        try:
            return serial.Serial(path, timeout=0.05, exclusive=True)
        except serial.SerialException:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def connect(host: StreamHost, request_id: int = 1) -> tuple[Message, Message]:
    host.send(GetInfo(request_id, 0))
    hello = host.wait_for(hello_for(request_id))
    first = host.wait_for(lambda m: hasattr(m, "seq"))
    return hello, first


def test_a_host_opens_the_pty_with_pyserial_and_gets_hello_and_events() -> None:
    device = create_device("cs-1", seed=3)
    with serve_pty(device) as pty:
        assert pty.path.startswith("/dev/pts/")
        assert os.path.realpath(pty.link) == pty.path
        with serial.Serial(pty.path, timeout=0.05, exclusive=True) as port:
            host = port_host(port)
            hello, result = connect(host)
            assert hello.serial_number == "SIM-CS1-0001"
            assert isinstance(result, SelfTestResult)
            assert host.wait_for(is_type(SelfTestResult)) == result, "resent until acknowledged"
            host.send(Ack(result.seq))
            device.dealer.auto = True
            device.press_button()
            host.send(Ack(host.wait_for(is_type(ButtonPressed)).seq))
            host.send(SetGate(2, GateMode.RELEASE_ONE))
            assert host.wait_for(is_type(Reply)) == Reply(2, ErrorCode.OK)
            card = host.wait_for(is_type(CardRead))
            assert card.card.deck_set == device.deck_set
            host.send(Ack(card.seq))
        assert device.status().cards_dealt == 1


def test_unplugging_the_pty_fails_the_host_read_and_replug_returns_via_the_link() -> None:
    device = create_device("cs-1", seed=3)
    with serve_pty(device) as pty:
        with serial.Serial(str(pty.link), timeout=0.05, exclusive=True) as port:
            host = port_host(port)
            _, result = connect(host)
            device.press_button()
            device.unplug()
            with pytest.raises(serial.SerialException):
                deadline = time.monotonic() + 5
                while time.monotonic() < deadline:
                    port.read(100)
        device.replug()
        with open_when_present(str(pty.link)) as port:
            assert os.path.realpath(pty.link) == pty.path
            host = port_host(port)
            hello, replayed = connect(host, 7)
            assert replayed == result, "the unacknowledged event is replayed first"
            assert hello.last_acked_seq == 0


def test_tcp_serves_socket_urls_and_unplug_drops_the_connection() -> None:
    device = create_device("cs-auto", seed=3)
    with serve_tcp(device) as tcp:
        assert tcp.url == f"socket://127.0.0.1:{tcp.port}"
        with serial.serial_for_url(tcp.url, timeout=0.05) as port:
            host = port_host(port)
            hello, result = connect(host)
            assert hello.serial_number == "SIM-CSAUTO-0001"
            device.unplug()
            with pytest.raises(serial.SerialException):
                deadline = time.monotonic() + 5
                while time.monotonic() < deadline:
                    port.read(100)
        device.replug()
        with serial.serial_for_url(tcp.url, timeout=0.05) as port:
            host = port_host(port)
            _, replayed = connect(host, 2)
            assert replayed == result
