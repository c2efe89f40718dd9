"""The control socket's server and client on real Unix sockets, and choosing the device."""

from __future__ import annotations

import json
import os
import socket
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.service_support import idle_connections

from cardshoe.controller.config import DeviceConfig
from cardshoe.controller.errors import UserError
from cardshoe.controller.procedure.facts import (
    Alarm,
    AlarmKind,
    BetsClosed,
    RoundOpened,
    ShoeStarted,
)
from cardshoe.controller.scoreboard.board import TableBoard
from cardshoe.controller.service.control_client import request, subscription
from cardshoe.controller.service.control_socket import ControlServer, EventFeed
from cardshoe.controller.service.device_choice import configured_url
from cardshoe.controller.service.socket_claim import claim_socket_path, lock_path_for
from cardshoe.drivers.discovery import Candidate
from cardshoe.drivers.errors import DeviceNotFound


def echo(request_line: Any) -> dict[str, Any]:
    return {"echo": dict(request_line)}


def refuse(request_line: Any) -> dict[str, Any]:
    raise UserError("not now: the shoe is closed", 2)


@pytest.fixture
def feed() -> EventFeed:
    return EventFeed()


@pytest.fixture
def server(tmp_path: Path, feed: EventFeed) -> Iterator[ControlServer]:
    claim = claim_socket_path(tmp_path / "control.sock")
    handlers = {"status": lambda line: {"state": "idle"}, "echo": echo, "refuse": refuse}
    with ControlServer(claim, handlers, feed) as control:
        yield control
    claim.release()


def raw_exchange(path: Path, data: bytes) -> dict[str, Any]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(5)
        connection.connect(str(path))
        connection.sendall(data)
        return json.loads(connection.makefile("rb").readline())


def test_the_socket_is_0660_from_the_start(server: ControlServer) -> None:
    mode = server.path.stat().st_mode
    assert stat.S_ISSOCK(mode)
    assert stat.S_IMODE(mode) == 0o660


def test_a_request_gets_its_handlers_answer(server: ControlServer) -> None:
    assert request(server.path, "echo", shoe_id="S1") == {"echo": {"cmd": "echo", "shoe_id": "S1"}}


def test_a_refusal_keeps_its_message_and_exit_code(server: ControlServer) -> None:
    with pytest.raises(UserError, match="not now: the shoe is closed") as refused:
        request(server.path, "refuse")
    assert refused.value.exit_code == 2


@pytest.mark.parametrize(
    ("line", "error"),
    [
        (b"not json\n", "a request is one JSON object per line"),
        (b'["status"]\n', 'a request is {"cmd": NAME, ...}'),
        (
            b'{"cmd": "fly"}\n',
            "unknown command 'fly': the commands are echo, refuse, status, subscribe",
        ),
        (b'{"cmd": "' + b"x" * 70_000 + b'"}\n', "a request is at most 65536 bytes"),
    ],
)
def test_bad_requests_are_refused_as_bad_input(
    server: ControlServer, line: bytes, error: str
) -> None:
    answer = raw_exchange(server.path, line)
    assert answer == {"ok": False, "error": error, "exit_code": 2}


def test_one_connection_carries_several_requests(server: ControlServer) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(5)
        connection.connect(str(server.path))
        connection.sendall(b'{"cmd": "status"}\n{"cmd": "echo", "n": 2}\n')
        reader = connection.makefile("rb")
        first, second = json.loads(reader.readline()), json.loads(reader.readline())
    assert first["result"] == {"state": "idle"}
    assert second["result"]["echo"]["n"] == 2


def test_a_subscriber_gets_the_status_then_every_event(
    server: ControlServer, feed: EventFeed
) -> None:
    with subscription(server.path) as (answer, events):
        assert answer == {"status": {"state": "idle"}, "board": None}
        feed.notify(RoundOpened(round_no=4, demo=False))
        feed.notify(Alarm(AlarmKind.TAMPER, "AS#00BC614E/1 seen twice"))
        first, second = next(events), next(events)
    assert (first["kind"], first["payload"]) == ("round.opened", {"round_no": 4, "demo": False})
    assert second["payload"] == {"kind": "tamper", "detail": "AS#00BC614E/1 seen twice"}
    assert first["time"].endswith("Z")


def test_a_new_subscriber_gets_the_board_in_step_with_its_stream(tmp_path: Path) -> None:
    feed = EventFeed(TableBoard(table_id="T1"))
    feed.notify(ShoeStarted("S1", "punto-banco", 8, "shoe", "f" * 64, {}, None))
    feed.notify(RoundOpened(round_no=1, demo=False))
    claim = claim_socket_path(tmp_path / "control.sock")
    with (
        ControlServer(claim, {"status": lambda line: {}}, feed),
        subscription(claim.path) as (answer, events),
    ):
        feed.notify(BetsClosed(round_no=1, by="command"))
        board = TableBoard.from_json(answer["board"])
        assert (board.shoe_id, board.round_no, board.phase) == ("S1", 1, "betting")
        following = next(events)
        board.apply(following["kind"], following["payload"])
    claim.release()
    assert following["kind"] == "round.bets_closed"
    assert board.phase == "dealing"


def test_a_subscriber_that_falls_behind_is_dropped_not_waited_for() -> None:
    feed = EventFeed(backlog=3)
    lines, _ = feed.open()
    for round_no in range(10):
        feed.notify(RoundOpened(round_no=round_no, demo=False))
    queued = [lines.get_nowait() for _ in range(lines.qsize())]
    assert len(queued) == 3
    assert queued[-1] is None, "the end marker tells the connection to close"


def test_stopping_the_server_ends_subscriptions_and_removes_the_socket(tmp_path: Path) -> None:
    claim = claim_socket_path(tmp_path / "control.sock")
    control = ControlServer(claim, {"status": lambda line: {}}, EventFeed())
    with subscription(claim.path) as (_, events):
        control.close()
        assert list(events) == []
    assert not claim.path.exists()
    claim.release()


def test_a_live_service_keeps_its_path(server: ControlServer) -> None:
    with pytest.raises(UserError, match=rf"another shoectl run \(pid {os.getpid()}\) serves"):
        claim_socket_path(server.path)


def test_a_stale_socket_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "control.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as dead:
        dead.bind(str(path))
    claim = claim_socket_path(path)
    assert not path.exists()
    assert lock_path_for(path).read_text() == f"{os.getpid()}\n"
    claim.release()


def test_a_server_whose_lock_file_was_deleted_still_keeps_its_path(
    server: ControlServer,
) -> None:
    lock_path_for(server.path).unlink()
    with pytest.raises(UserError, match="a service already answers on"):
        claim_socket_path(server.path)
    assert request(server.path, "status") == {"state": "idle"}


def test_a_file_that_is_not_a_socket_is_never_removed(tmp_path: Path) -> None:
    path = tmp_path / "table.toml"
    path.write_text('table_id = "T1"\n')
    with pytest.raises(UserError, match="is an existing file, not a socket") as refused:
        claim_socket_path(path)
    assert refused.value.exit_code == 2
    assert path.read_text() == 'table_id = "T1"\n'


def test_a_missing_folder_is_named(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"no folder .*RuntimeDirectory"):
        claim_socket_path(tmp_path / "run" / "control.sock")


def test_no_service_is_exit_3(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no cardshoe service is running on") as refused:
        request(tmp_path / "control.sock", "status")
    assert refused.value.exit_code == 3


def test_a_socket_not_permitted_names_the_group(mocker, tmp_path: Path) -> None:
    # Tests run as root, who may connect to anything: the refusal itself is simulated.
    mocker.patch("socket.socket.connect", side_effect=PermissionError(13, "Permission denied"))
    with pytest.raises(UserError, match="add the user to group 'cardshoe'") as refused:
        request(tmp_path / "control.sock", "status")
    assert refused.value.exit_code == 3


def serve_once(path: Path, answer: bytes | None) -> threading.Thread:
    """A service that accepts one connection and dies: after reading the request and writing
    answer, or at once when answer is None."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen()

    def serve() -> None:
        with listener, listener.accept()[0] as connection:
            if answer is not None:
                connection.makefile("rb").readline()
                connection.sendall(answer)

    thread = threading.Thread(target=serve)
    thread.start()
    return thread


def test_a_service_dying_before_it_reads_the_request_is_exit_3(tmp_path: Path) -> None:
    thread = serve_once(tmp_path / "control.sock", None)
    # More than a socket buffer holds, so the send is still under way when the peer is gone.
    with pytest.raises(UserError, match="lost the service on") as lost:
        request(tmp_path / "control.sock", "echo", padding="x" * 4_000_000)
    thread.join()
    assert lost.value.exit_code == 3


def test_an_answer_cut_short_by_the_service_dying_is_exit_3(tmp_path: Path) -> None:
    thread = serve_once(tmp_path / "control.sock", b'{"ok": true, "res')
    with pytest.raises(UserError, match="closed the connection without answering") as lost:
        request(tmp_path / "control.sock", "status")
    thread.join()
    assert lost.value.exit_code == 3


# --- which device the configuration means ----------------------------------------------

ADAPTER = Candidate(
    url="/dev/cardshoe/shoe-A10K",
    transport="serial",
    device_path="/dev/ttyUSB0",
    vendor_id=0x0403,
    product_id=0x6001,
    serial_number="A10K",
)
OTHER_ADAPTER = Candidate(
    url="/dev/ttyUSB1",
    transport="serial",
    device_path="/dev/ttyUSB1",
    vendor_id=0x0403,
    product_id=0x6001,
    serial_number="B20Q",
)
DEALER = Candidate(
    url="usb://1209:0001/D1",
    transport="usb",
    device_path="/dev/bus/usb/001/004",
    vendor_id=0x1209,
    product_id=0x0001,
    serial_number="D1",
)


def test_a_url_is_taken_as_it_is() -> None:
    assert configured_url(DeviceConfig(url="socket://10.0.0.5:4001"), [ADAPTER]) == (
        "socket://10.0.0.5:4001"
    )


def test_usb_ids_pick_the_matching_candidate() -> None:
    candidates = [ADAPTER, OTHER_ADAPTER, DEALER]
    assert configured_url(DeviceConfig(usb_serial="B20Q"), candidates) == "/dev/ttyUSB1"
    assert configured_url(DeviceConfig(usb_vid=0x1209, usb_pid=0x0001), candidates) == (
        "usb://1209:0001/D1"
    )


def test_with_nothing_configured_the_only_device_is_used() -> None:
    assert configured_url(DeviceConfig(), [DEALER]) == "usb://1209:0001/D1"


def test_two_matching_devices_are_never_guessed_between() -> None:
    with pytest.raises(UserError, match=r"2 devices match .*set device\.url or device\.usb_serial"):
        configured_url(DeviceConfig(usb_vid=0x0403), [ADAPTER, OTHER_ADAPTER])


def test_no_matching_device_names_what_was_looked_for() -> None:
    with pytest.raises(DeviceNotFound, match=r"device\.usb_serial = 'ZZZ'"):
        configured_url(DeviceConfig(usb_serial="ZZZ"), [ADAPTER])
    with pytest.raises(DeviceNotFound, match=r"no device\.url set"):
        configured_url(DeviceConfig(), [])


def test_case_13_a_burst_of_clients_is_served_without_one_failure(tmp_path: Path) -> None:
    """Issue 11 case 13: 50 clients at once, 4 requests each, against a slow-ish handler; the
    listen backlog was 5 and a full one failed the client's connect with BlockingIOError."""
    claim = claim_socket_path(tmp_path / "control.sock")

    def slow_status(line: Any) -> dict[str, Any]:
        threading.Event().wait(0.002)
        return {"state": "idle"}

    failures: list[BaseException] = []
    answers: list[Any] = []

    def client() -> None:
        for _ in range(4):
            try:
                answers.append(request(claim.path, "status"))
            except BaseException as exc:
                failures.append(exc)

    with ControlServer(claim, {"status": slow_status}, EventFeed()):
        clients = [threading.Thread(target=client) for _ in range(50)]
        for thread in clients:
            thread.start()
        for thread in clients:
            thread.join()
    claim.release()
    assert failures == []
    assert answers == [{"state": "idle"}] * 200


def test_case_14_idle_clients_time_out_and_never_hold_more_than_the_bound(
    tmp_path: Path,
) -> None:
    """Issue 11 case 14: idle connections held one thread each, forever. Now at most
    max_connections are served, the next is refused with an answer, and idle ones close."""
    claim = claim_socket_path(tmp_path / "control.sock")
    before = threading.active_count()
    control = ControlServer(
        claim,
        {"status": lambda line: {"state": "idle"}},
        EventFeed(),
        idle_timeout_s=0.5,
        max_connections=8,
    )
    try:
        with idle_connections(claim.path, 8) as idle:
            with pytest.raises(UserError, match="serving 8 connections") as refused:
                request(claim.path, "status")
            assert refused.value.exit_code == 3
            assert threading.active_count() <= before + 1 + 8
            for connection in idle:
                connection.settimeout(5)
                assert connection.recv(100) == b""  # the service closed it after 0.5 s idle
            assert request(claim.path, "status") == {"state": "idle"}
    finally:
        control.close()
        claim.release()


@pytest.mark.parametrize(
    ("line", "error"),
    [
        (b"[" * 5000 + b"]" * 5000, "one JSON object per line"),
        (b'{"cmd": "status", "n": ' + b"9" * 5000 + b"}", "one JSON object per line"),
        (b'{"cmd": "status", "a": ' + b"[" * 20 + b"]" * 20 + b"}", "at most 8 levels deep"),
    ],
    ids=["nested-5000", "integer-5000-digits", "nested-20"],
)
def test_case_14_a_deep_or_huge_request_is_refused_with_one_answer(
    server: ControlServer, line: bytes, error: str
) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(5)
        connection.connect(str(server.path))
        connection.sendall(line + b"\n")
        answer = json.loads(connection.makefile("rb").readline())
    assert answer == {"ok": False, "error": answer["error"], "exit_code": 2}
    assert error in answer["error"]
    assert request(server.path, "status") == {"state": "idle"}
