"""sd_notify against a real AF_UNIX datagram socket standing in for systemd."""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from cardshoe.controller.service.sdnotify import Notifier


@pytest.fixture
def notify_socket(tmp_path: Path) -> Iterator[tuple[socket.socket, str]]:
    """A listening socket bound in tmp_path, and the NOTIFY_SOCKET value naming it."""
    path = tmp_path / "notify.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as listener:
        listener.bind(str(path))
        listener.settimeout(5)
        yield listener, str(path)


def test_each_call_sends_its_message_as_one_datagram(notify_socket):
    listener, address = notify_socket
    notifier = Notifier.from_environment({"NOTIFY_SOCKET": address})

    notifier.ready()
    notifier.status("dealing round 12")
    notifier.watchdog()
    notifier.stopping()

    received = [listener.recv(4096) for _ in range(4)]
    assert received == [b"READY=1", b"STATUS=dealing round 12", b"WATCHDOG=1", b"STOPPING=1"]


def test_status_is_folded_to_one_line(notify_socket):
    listener, address = notify_socket

    Notifier.from_environment({"NOTIFY_SOCKET": address}).status("journal\nreplayed\t ok\n")

    assert listener.recv(4096) == b"STATUS=journal replayed ok"


def test_abstract_namespace_socket_is_reached_by_its_at_name():
    name = f"cardshoe-test-{uuid.uuid4().hex}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as listener:
        listener.bind("\0" + name)
        listener.settimeout(5)

        Notifier.from_environment({"NOTIFY_SOCKET": "@" + name}).ready()

        assert listener.recv(4096) == b"READY=1"


def test_process_environment_is_read_by_default(notify_socket, monkeypatch):
    listener, address = notify_socket
    monkeypatch.setenv("NOTIFY_SOCKET", address)
    monkeypatch.setenv("WATCHDOG_USEC", "10000000")
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))

    notifier = Notifier.from_environment()
    notifier.watchdog()

    assert notifier.watchdog_interval() == 5.0
    assert listener.recv(4096) == b"WATCHDOG=1"


def test_without_notify_socket_every_call_is_a_no_op():
    notifier = Notifier.from_environment({})

    assert not notifier.enabled
    notifier.ready()
    notifier.status("idle")
    notifier.watchdog()
    notifier.stopping()


def test_a_vanished_service_manager_is_reported(tmp_path):
    notifier = Notifier.from_environment({"NOTIFY_SOCKET": str(tmp_path / "gone.sock")})

    with pytest.raises(FileNotFoundError):
        notifier.ready()


def test_relative_notify_socket_is_rejected():
    with pytest.raises(ValueError, match="NOTIFY_SOCKET"):
        Notifier.from_environment({"NOTIFY_SOCKET": "run/notify"})


@pytest.mark.parametrize(
    ("environ", "interval"),
    [
        ({}, None),
        ({"WATCHDOG_USEC": "10000000"}, 5.0),
        ({"WATCHDOG_USEC": "3000000", "WATCHDOG_PID": str(os.getpid())}, 1.5),
        ({"WATCHDOG_USEC": "10000000", "WATCHDOG_PID": str(os.getpid() + 1)}, None),
    ],
    ids=["unset", "no-pid", "our-pid", "another-process"],
)
def test_watchdog_interval_is_half_the_timeout_for_this_process(environ, interval):
    assert Notifier.from_environment(environ).watchdog_interval() == interval


@pytest.mark.parametrize(
    "environ",
    [
        {"WATCHDOG_USEC": "ten"},
        {"WATCHDOG_USEC": "0"},
        {"WATCHDOG_USEC": "5", "WATCHDOG_PID": "-1"},
    ],
    ids=["not-a-number", "zero", "negative-pid"],
)
def test_malformed_watchdog_variables_are_rejected(environ):
    with pytest.raises(ValueError, match="WATCHDOG_"):
        Notifier.from_environment(environ)
