"""The running service's control socket: one JSON object per line over a local Unix socket.

A device has exactly one reader, the service, so every other shoectl command
that wants the table (status, monitor --service, monitor --table) asks the
service here instead of opening the port. The protocol:

- a request is one line, {"cmd": NAME, ...arguments};
- the answer is one line, {"ok": true, "result": {...}} or
  {"ok": false, "error": TEXT, "exit_code": N} (the shoectl exit code);
- {"cmd": "subscribe"} is answered with {"status": ..., "board": ...}: the
  status, and the table's display board (display/board.py) as it stands
  before the first event streamed; then the connection carries one line per
  table event, {"time", "kind", "payload"}, until either side closes it.

The socket file is mode 0660: the service's own group (cardshoe, under
systemd) may connect, nobody else. Whatever a client does, the service stays
bounded: a deep listen backlog (clients retry with backoff when even that is
full), at most MAX_CONNECTIONS connections (and so threads) at once, of which
one uid holds at most MAX_CONNECTIONS_PER_UID and the last OPERATOR_RESERVE
go only to the table's operators, idle ones closed after IDLE_TIMEOUT_S (the
accept loop takes every connection at once, so none waits unaccepted: it is
served and timed, or refused with an answer), a request at most MAX_LINE_BYTES long and
MAX_REQUEST_DEPTH deep; a refused request is one JSON answer, never a
traceback. One service per socket path (socket_claim.py): a lock file
beside the socket, held for the life of the service, tells a live service
from a stale socket file left by a killed one, which is then replaced.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import os
import queue
import socket
import socketserver
import struct
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from cardshoe.controller.errors import (
    EXIT_BAD_INPUT,
    EXIT_CHECK_FAILED,
    UserError,
)
from cardshoe.controller.procedure.facts import TableEvent
from cardshoe.controller.rules.errors import RulesError
from cardshoe.controller.service.socket_claim import EXIT_NO_SERVICE, SocketClaim
from cardshoe.controller.timestamps import utc_timestamp
from cardshoe.drivers.text_input import json_value

_LOGGER = logging.getLogger(__name__)

SOCKET_MODE = 0o660
MAX_LINE_BYTES = 64 * 1024
"""A request longer than this is refused: no command needs more."""
SUBSCRIBER_BACKLOG = 10_000
"""Events queued for one subscriber; a subscriber that falls this far behind is dropped,
so a stalled monitor never slows the table."""
SUBSCRIBE = "subscribe"
"""The one request answered with a stream of events (monitor's) rather than one answer."""
MAX_REQUEST_DEPTH = 8
"""Nesting of a request's JSON beyond this is refused: no command nests more than twice."""
LISTEN_BACKLOG = 128
"""Connections the kernel queues before the service accepts them (socketserver's 5 overflowed
with 50 clients at once)."""
MAX_CONNECTIONS = 64
"""Connections served at once (one thread each); more are refused at once with an answer."""
MAX_CONNECTIONS_PER_UID = 16
"""Connections one uid may hold at once, so one client cannot take them all."""
OPERATOR_RESERVE = 4
"""The last of MAX_CONNECTIONS go only to the table's operators (ControlServer's is_operator),
so idle or hostile clients of other uids never lock them out."""
IDLE_TIMEOUT_S = 30.0
"""A connection that sends nothing (or reads nothing of its subscription) this long is closed."""

BUSY = "busy"
"""In the refusal of a connection over its uid's share: the client tries again (_answered)."""

Handler = Callable[[Mapping[str, Any]], dict[str, Any]]
"""Answers one request (the parsed line) with its result; raises UserError to refuse it."""


@dataclass(frozen=True)
class Unadmitted:
    """Why a connection is turned away, and whether the client may simply try again."""

    reason: str
    busy: bool = False


class Replica(Protocol):
    """State rebuilt from the event stream (a display board), handed whole to new subscribers."""

    def apply(self, kind: str, payload: Mapping[str, Any]) -> None: ...

    def to_json(self) -> dict[str, Any]: ...


# --- the server side -------------------------------------------------------------------


class EventFeed:
    """The observer that copies every table event to each subscribed connection.

    notify() runs inside the table's event handling, so it never blocks: each
    subscriber has its own queue, and one that falls too far behind is dropped.
    The replica takes each event under the same lock as the queues, so a new
    subscriber's copy of it and its stream meet exactly: no event is in both,
    none in neither.
    """

    def __init__(self, replica: Replica | None = None, backlog: int = SUBSCRIBER_BACKLOG) -> None:
        self._replica = replica
        self._backlog = backlog
        self._lock = threading.Lock()
        self._queues: set[queue.Queue[str | None]] = set()

    def attach(self, replica: Replica) -> None:
        """Give the feed its replica once the table is up: the socket serves before."""
        with self._lock:
            self._replica = replica

    def notify(self, event: TableEvent) -> None:
        payload = event.payload()
        line = json.dumps({"time": utc_timestamp(), "kind": event.KIND, "payload": payload})
        with self._lock:
            if self._replica is not None:
                self._replica.apply(event.KIND, payload)
            for lines in list(self._queues):
                try:
                    lines.put_nowait(line)
                except queue.Full:
                    self._queues.discard(lines)
                    _LOGGER.warning("dropped a control-socket subscriber that fell behind")
                    _end_queue(lines)

    def open(self) -> tuple[queue.Queue[str | None], dict[str, Any] | None]:
        """A new subscriber's queue (event lines, then None when it must stop), and the
        replica as it stands before the first of those lines."""
        lines: queue.Queue[str | None] = queue.Queue(self._backlog)
        with self._lock:
            self._queues.add(lines)
            return lines, None if self._replica is None else self._replica.to_json()

    def close_queue(self, lines: queue.Queue[str | None]) -> None:
        with self._lock:
            self._queues.discard(lines)

    def close(self) -> None:
        """Tell every subscriber to stop (the service is stopping)."""
        with self._lock:
            for lines in self._queues:
                _end_queue(lines)
            self._queues.clear()


def _end_queue(lines: queue.Queue[str | None]) -> None:
    """Make room if need be, so the end marker always gets in."""
    with contextlib.suppress(queue.Empty):
        while lines.full():
            lines.get_nowait()
    lines.put_nowait(None)


class ControlServer:
    """Serves requests on a claimed socket path from its own threads until close().

    handlers answer requests by name; "subscribe" is built in: it answers with
    handlers["status"] and the feed's replica, then streams the feed's events.
    """

    def __init__(
        self,
        claim: SocketClaim,
        handlers: Mapping[str, Handler],
        feed: EventFeed,
        *,
        idle_timeout_s: float = IDLE_TIMEOUT_S,
        max_connections: int = MAX_CONNECTIONS,
        max_per_uid: int = MAX_CONNECTIONS_PER_UID,
        is_operator: Callable[[Peer], bool] | None = None,
    ):
        self.path = claim.path
        self.idle_timeout_s = idle_timeout_s
        self.max_connections = max_connections
        self.max_per_uid = max_per_uid
        self._is_operator = is_operator or _is_this_user_or_root
        self._handlers = dict(handlers)
        self._feed = feed
        try:
            self._server = _UnixServer(self)
        except OSError as exc:
            raise UserError(
                f"cannot serve the control socket {self.path}: {exc.strerror or exc}: make "
                f"{self.path.parent} writable for the service user, or set "
                "service.control_socket to a short path in a folder it may write",
                EXIT_NO_SERVICE,
            ) from None
        self._connections: dict[socket.socket, int] = {}
        """Each connection served, and its peer's uid."""
        self._connections_lock = threading.Lock()
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.2},
            name="cardshoe-control-socket",
        )
        self._thread.start()

    def close(self) -> None:
        """Stop accepting, end every connection, wait for their threads, remove the socket."""
        self._server.shutdown()
        self._thread.join()
        self._feed.close()
        with self._connections_lock:
            for connection in self._connections:
                with contextlib.suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)
        self._server.server_close()
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    def __enter__(self) -> ControlServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- called from connection threads -------------------------------------------

    def admit(self, connection: socket.socket, peer: Peer) -> Unadmitted | None:
        """Count a new connection in; or why not: all served, the peer's uid holds its share,
        or only the operators' reserve is left and the peer is not one of them."""
        with self._connections_lock:
            served = len(self._connections)
            if served >= self.max_connections:
                return Unadmitted(
                    f"the service is serving {self.max_connections} connections: try again"
                )
            held = sum(1 for uid in self._connections.values() if uid == peer.uid)
            if held >= self.max_per_uid:
                return Unadmitted(
                    f"uid {peer.uid} holds {held} connections to the service, the most one user "
                    "may: close some (each idle one closes after "
                    f"{self.idle_timeout_s:g} s), then try again",
                    busy=True,
                )
            reserved = served >= self.max_connections - OPERATOR_RESERVE
            if reserved and not self._is_operator(peer):
                return Unadmitted(
                    f"the service is serving {served} connections and keeps the rest for the "
                    "table's operators: try again"
                )
            self._connections[connection] = peer.uid
            return None

    def release(self, connection: socket.socket) -> None:
        with self._connections_lock:
            self._connections.pop(connection, None)

    def answer(self, line: bytes) -> tuple[dict[str, Any], queue.Queue[str | None] | None]:
        """The answer to one request line; for a subscription, also its queue of events.

        The board comes with the queue, exactly in step; the status is read
        just after, as a header.
        """
        try:
            request = json_value(line)
        except ValueError:
            return _refusal("a request is one JSON object per line", EXIT_BAD_INPUT), None
        if _depth(request) > MAX_REQUEST_DEPTH:
            message = f"a request nests at most {MAX_REQUEST_DEPTH} levels deep"
            return _refusal(message, EXIT_BAD_INPUT), None
        if not isinstance(request, dict) or not isinstance(request.get("cmd"), str):
            return _refusal('a request is {"cmd": NAME, ...}', EXIT_BAD_INPUT), None
        name = request["cmd"]
        subscribing = name == SUBSCRIBE
        handler = self._handlers.get("status" if subscribing else name)
        if handler is None:
            known = ", ".join(sorted([*self._handlers, SUBSCRIBE]))
            message = f"unknown command {name!r}: the commands are {known}"
            return _refusal(message, EXIT_BAD_INPUT), None
        lines, board = self._feed.open() if subscribing else (None, None)
        try:
            result = handler(request)
            if subscribing:
                result = {"status": result, "board": board}
            return {"ok": True, "result": result}, lines
        except UserError as exc:
            refusal = _refusal(str(exc), exc.exit_code)
        except RulesError as exc:
            refusal = _refusal(str(exc), EXIT_BAD_INPUT)
        except Exception as exc:
            _LOGGER.exception("control socket command %r failed", name)
            refusal = _refusal(f"the service failed on {name!r}: {exc}", EXIT_CHECK_FAILED)
        if lines is not None:
            self.unsubscribe(lines)
        return refusal, None

    def stream(self, lines: queue.Queue[str | None], write: Callable[[bytes], object]) -> None:
        """Write the subscription's events until the feed ends it or the client goes."""
        try:
            while (line := lines.get()) is not None:
                write(line.encode() + b"\n")
        except OSError:
            return
        finally:
            self.unsubscribe(lines)

    def unsubscribe(self, lines: queue.Queue[str | None]) -> None:
        self._feed.close_queue(lines)


def _refusal(message: str, exit_code: int) -> dict[str, Any]:
    return {"ok": False, "error": message, "exit_code": exit_code}


def _depth(value: Any) -> int:
    """How deeply a parsed JSON value nests (a scalar is 0), without recursion."""
    deepest = 0
    pending = [(value, 0)]
    while pending:
        item, level = pending.pop()
        deepest = max(deepest, level)
        if isinstance(item, dict):
            pending.extend((child, level + 1) for child in item.values())
        elif isinstance(item, list):
            pending.extend((child, level + 1) for child in item)
    return deepest


@dataclass(frozen=True)
class Peer:
    """Who is at the other end of a connection, as the kernel says (SO_PEERCRED)."""

    pid: int
    uid: int
    gid: int


_PEER: contextvars.ContextVar[Peer | None] = contextvars.ContextVar("control_peer", default=None)


def current_peer() -> Peer | None:
    """The peer of the request being answered, for a handler that checks who asks; each
    connection is answered in its own thread, so each sees its own peer."""
    return _PEER.get()


def _is_this_user_or_root(peer: Peer) -> bool:
    """Who may use the operators' reserve when the service says nothing else."""
    return peer.uid in {0, os.geteuid()}


def peer_of(connection: socket.socket) -> Peer:
    """The kernel's credentials of a Unix socket's peer: a client cannot forge them."""
    size = struct.calcsize("3i")
    pid, uid, gid = struct.unpack(
        "3i", connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, size)
    )
    return Peer(pid, uid, gid)


class _Connection(socketserver.StreamRequestHandler):
    server: _UnixServer

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.server.control.idle_timeout_s)

    def finish(self) -> None:
        self.server.control.release(self.request)
        with contextlib.suppress(OSError):
            super().finish()

    def handle(self) -> None:
        with contextlib.suppress(TimeoutError):
            self._serve()

    def _serve(self) -> None:
        control = self.server.control
        _PEER.set(peer_of(self.request))
        while line := self.rfile.readline(MAX_LINE_BYTES + 1):
            if len(line) > MAX_LINE_BYTES:
                self._send(_refusal(f"a request is at most {MAX_LINE_BYTES} bytes", EXIT_BAD_INPUT))
                return
            answer, lines = control.answer(line)
            sent = self._send(answer)
            if lines is None:
                if not sent:
                    return
                continue
            if sent:
                control.stream(lines, self._write)
            else:
                control.unsubscribe(lines)
            return

    def _write(self, data: bytes) -> None:
        self.wfile.write(data)
        self.wfile.flush()

    def _send(self, answer: dict[str, Any]) -> bool:
        try:
            self._write(json.dumps(answer).encode() + b"\n")
        except OSError:
            return False
        return True


class _UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = False
    block_on_close = True
    """close() waits for every connection's thread, so none outlives the service."""
    request_queue_size = LISTEN_BACKLOG

    def process_request(self, request: Any, client_address: Any) -> None:
        """A thread for the connection, or, when ControlServer.admit says no, one refusal and
        close."""
        try:
            unadmitted = self.control.admit(request, peer_of(request))
        except OSError:
            unadmitted = Unadmitted("the service could not tell who connected: try again")
        if unadmitted is None:
            super().process_request(request, client_address)
            return
        _LOGGER.warning("control socket: refused a connection: %s", unadmitted.reason)
        busy = {BUSY: True} if unadmitted.busy else {}
        refusal = _refusal(unadmitted.reason, EXIT_NO_SERVICE) | busy
        with contextlib.suppress(OSError):
            request.setblocking(False)
            request.send(json.dumps(refusal).encode() + b"\n")
        self.shutdown_request(request)

    def __init__(self, control: ControlServer) -> None:
        self.control = control
        super().__init__(str(control.path), _Connection)

    def server_bind(self) -> None:
        """Bind with a umask that leaves the socket 0660 from its first instant."""
        previous = os.umask(0o777 & ~SOCKET_MODE)
        try:
            super().server_bind()
        finally:
            os.umask(previous)
        os.chmod(str(self.server_address), SOCKET_MODE)
