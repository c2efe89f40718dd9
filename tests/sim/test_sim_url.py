"""sim:// URLs through pyserial's own serial_for_url, with the handler registered explicitly."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import serial
from support.sim_support import StreamHost

from cardshoe.drivers.protocol.messages import (
    Ack,
    CardRead,
    DealNext,
    GetInfo,
    Hello,
    Reply,
    SensorFlag,
)
from cardshoe.firmware_sim import sim_url
from cardshoe.firmware_sim.devices import create_device


@pytest.fixture
def registered() -> Iterator[None]:
    sim_url.register_sim_url_handler()
    yield
    sim_url.release_all()


def port_host(port: serial.SerialBase) -> StreamHost:
    return StreamHost(port.write, lambda: port.read(max(1, port.in_waiting)))


def test_a_sim_url_opens_a_fresh_device_with_the_url_settings(registered: None) -> None:
    url = "sim://cs-auto?seed=5&decks=6&serial=SIM-T1&inject=double-feed@round=1"
    with serial.serial_for_url(url, timeout=0.05) as port:
        assert port.device.serial_number == "SIM-T1"
        assert port.device.status().cards_remaining == 6 * 52
        host = port_host(port)
        host.send(GetInfo(1, 0))
        hello = host.wait_for(lambda m: isinstance(m, Hello) and m.request_id == 1)
        assert hello.serial_number == "SIM-T1"
        result = host.wait_for(lambda m: hasattr(m, "seq"))
        host.send(Ack(result.seq))
        host.send(DealNext(2))
        assert host.wait_for(lambda m: isinstance(m, Reply)).request_id == 2
        first = host.wait_for(lambda m: isinstance(m, CardRead))
        host.send(Ack(first.seq))
        second = host.wait_for(lambda m: isinstance(m, CardRead))
        assert SensorFlag.DOUBLE_FEED_SUSPECTED in first.flags & second.flags
        assert first.feed_group == second.feed_group != 0


def test_a_published_device_outlives_its_port_and_is_found_again(registered: None) -> None:
    device = create_device("cs-1", seed=2)
    url = sim_url.publish(device, "table7")
    assert url == "sim://cs-1?name=table7"
    with serial.serial_for_url(url, timeout=0.05) as port:
        assert port.device is device
    device.press_button()
    with serial.serial_for_url(url, timeout=0.05) as port:
        host = port_host(port)
        host.send(GetInfo(3, 0))
        host.wait_for(lambda m: isinstance(m, Hello) and m.request_id == 3)
        assert host.wait_for(lambda m: hasattr(m, "seq")).seq == 1


def test_an_unplugged_sim_device_fails_reads_and_refuses_to_open(registered: None) -> None:
    device = create_device("cs-1", seed=2)
    url = sim_url.publish(device, "unplugged")
    with serial.serial_for_url(url, timeout=0.05) as port:
        device.unplug()
        with pytest.raises(serial.SerialException, match="unplugged"):
            for _ in range(100):
                port.read(100)
    with pytest.raises(serial.SerialException, match="unplugged"):
        serial.serial_for_url(url)
    device.replug()
    with serial.serial_for_url(url, timeout=0.05) as port:
        assert port.is_open


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("sim://cs-9", "no simulator profile 'cs-9'"),
        ("sim://cs-1?colour=red", "unknown parameters"),
        ("sim://cs-1?seed=x", "seed must be a whole number"),
        ("sim://cs-1?inject=jam", "say when"),
        ("sim://cs-1?seed=1&seed=2", "seed given more than once"),
    ],
)
def test_bad_sim_urls_are_value_errors_like_pyserials_own(
    registered: None, url: str, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        serial.serial_for_url(url)
