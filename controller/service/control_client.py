"""The control socket's client side: one command and its answer, or a subscription to the
table's events, as shoectl's commands and the console speak to the service (control_socket.py
is the service's side and says what a line holds)."""

from __future__ import annotations

import contextlib
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from cardshoe.controller.errors import UserError
from cardshoe.controller.service.control_socket import BUSY, SUBSCRIBE
from cardshoe.controller.service.socket_claim import EXIT_NO_SERVICE
from cardshoe.drivers.errors import UDEV_GROUP

CLIENT_TIMEOUT_S = 5.0
CONNECT_RETRY_FIRST_S = 0.005
"""A client whose connect finds the backlog full retries after this, doubling, until its
timeout."""


class _Busy(Exception):
    """The service turned the connection away as busy (its reason the argument): try again."""


def request(path: Path, command: str, timeout: float = CLIENT_TIMEOUT_S, **arguments: Any) -> Any:
    """Send one command to the service at path and return its result; UserError if refused."""
    connection, _, result = _answered(path, command, arguments, timeout)
    connection.close()
    return result


class EventStream:
    """The table's events as they happen, until the service closes the stream or end()."""

    def __init__(self, connection: socket.socket, reader: BinaryIO) -> None:
        self._connection = connection
        self._events = _events(reader)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return self

    def __next__(self) -> dict[str, Any]:
        return next(self._events)

    def end(self) -> None:
        """End the stream after the events already read; safe from a signal handler, as it
        only shuts the connection down: a read waiting on it returns, at the end."""
        with contextlib.suppress(OSError):
            self._connection.shutdown(socket.SHUT_RDWR)


@contextlib.contextmanager
def subscription(
    path: Path, timeout: float = CLIENT_TIMEOUT_S
) -> Iterator[tuple[dict[str, Any], EventStream]]:
    """{"status", "board"} now, then the table's events as they happen until it stops."""
    connection, reader, status = _answered(path, SUBSCRIBE, {}, timeout)
    with connection:
        connection.settimeout(None)
        yield status, EventStream(connection, reader)


def _answered(
    path: Path, command: str, arguments: dict[str, Any], timeout: float
) -> tuple[socket.socket, BinaryIO, Any]:
    """The open connection, its reader and the service's answer to one command. Turned away
    over its uid's share, it tries again with backoff until the timeout: one user's burst
    waits its turn, as for a full listen backlog; a share held longer is refused."""
    deadline = time.monotonic() + timeout
    pause = CONNECT_RETRY_FIRST_S
    while True:
        connection = _connect(path, timeout)
        try:
            unsent = _send_request(connection, command, arguments)
            reader = connection.makefile("rb")
            return connection, reader, _read_result(reader, path, timeout, unsent)
        except _Busy as busy:
            connection.close()
            if time.monotonic() + pause > deadline:
                raise UserError(str(busy), EXIT_NO_SERVICE) from None
            time.sleep(pause)
            pause *= 2
        except BaseException:
            connection.close()
            raise


def _events(reader: BinaryIO) -> Iterator[dict[str, Any]]:
    """Event lines until the service closes the stream; a line cut off by its death ends it."""
    try:
        for line in reader:
            if not line.endswith(b"\n"):
                return
            yield json.loads(line)
    except OSError:
        return


def _send_request(
    connection: socket.socket, command: str, arguments: dict[str, Any]
) -> OSError | None:
    """The error if the request could not go: a service that turned the connection away has
    closed it, and its one-line refusal still waits to be read."""
    try:
        connection.sendall(json.dumps({"cmd": command, **arguments}).encode() + b"\n")
    except OSError as exc:
        return exc
    return None


def _read_result(reader: BinaryIO, path: Path, timeout: float, unsent: OSError | None) -> Any:
    try:
        line = reader.readline()
    except TimeoutError:
        line = b""
    except OSError as exc:
        raise UserError(f"lost the service on {path}: {exc}", EXIT_NO_SERVICE) from None
    if unsent is not None and not line:
        raise UserError(f"lost the service on {path}: {unsent}", EXIT_NO_SERVICE)
    if not line.endswith(b"\n"):
        raise UserError(
            f"the service on {path} closed the connection without answering "
            f"(stopping, or busy for over {timeout:g} s)",
            EXIT_NO_SERVICE,
        )
    answer = json.loads(line)
    if not answer["ok"]:
        if answer.get(BUSY):
            raise _Busy(answer["error"])
        raise UserError(answer["error"], answer["exit_code"])
    return answer["result"]


def _connect(path: Path, timeout: float) -> socket.socket:
    """Connect, retrying with backoff while the service's listen backlog is full."""
    deadline = time.monotonic() + timeout
    pause = CONNECT_RETRY_FIRST_S
    while True:
        try:
            return _connect_once(path, timeout)
        except BlockingIOError:
            if time.monotonic() + pause > deadline:
                raise UserError(
                    f"the service on {path} is too busy to accept within {timeout:g} s: try again",
                    EXIT_NO_SERVICE,
                ) from None
            time.sleep(pause)
            pause *= 2


def _connect_once(path: Path, timeout: float) -> socket.socket:
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.settimeout(timeout)
    try:
        connection.connect(str(path))
    except BlockingIOError:
        connection.close()
        raise
    except PermissionError:
        connection.close()
        raise UserError(
            f"permission denied for {path}: add the user to group '{UDEV_GROUP}' "
            "(the service makes its socket mode 0660), then log in again",
            EXIT_NO_SERVICE,
        ) from None
    except (FileNotFoundError, ConnectionRefusedError):
        connection.close()
        raise UserError(
            f"no cardshoe service is running on {path}: start it "
            "(systemctl start cardshoe) or name its socket with --socket or --config",
            EXIT_NO_SERVICE,
        ) from None
    except TimeoutError:
        connection.close()
        raise UserError(
            f"the service on {path} did not accept within {timeout:g} s", EXIT_NO_SERVICE
        ) from None
    return connection
