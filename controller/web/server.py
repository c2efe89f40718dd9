"""Serving the scoreboard: the listening socket, uvicorn, and a thread for the demo.

The socket is bound here, before uvicorn starts, so an address that is
taken or malformed is one clear UserError line rather than a uvicorn log,
and port 0 gives the port the kernel chose (tests and the demo print it).
"""

from __future__ import annotations

import ipaddress
import logging
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import uvicorn

from cardshoe.controller.config import TableConfig
from cardshoe.controller.errors import UserError
from cardshoe.controller.web.app import MAX_CLIENTS, create_app
from cardshoe.controller.web.console_page import WebConsole
from cardshoe.controller.web.feed import BoardFeed
from cardshoe.drivers.text_input import whole_number

GRACEFUL_STOP_S = 1
"""Open event streams never end by themselves: give them this long once asked to stop."""
LISTEN_BACKLOG = 256


@dataclass(frozen=True)
class ListenAddress:
    host: str
    port: int
    option: str = "--listen"
    """The option it was given with, named in errors."""

    @classmethod
    def parse(cls, text: str, option: str = "--listen") -> ListenAddress:
        """HOST:PORT, [IPv6]:PORT; the host is an IP address (the unit binds no name)."""
        host, colon, port_text = text.rpartition(":")
        host = host.removeprefix("[").removesuffix("]")
        problem = None
        port = whole_number(port_text, 5)
        if not colon or port is None or port > 65535:
            problem = "is not HOST:PORT"
        else:
            try:
                ipaddress.ip_address(host)
            except ValueError:
                problem = "does not start with an IP address"
        if problem is not None:
            raise UserError(
                f"{option} {text!r} {problem}: give an address and a port, "
                "e.g. 127.0.0.1:8080 or [::1]:8080"
            )
        return cls(host, int(port_text), option)

    def bind(self) -> socket.socket:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.host, self.port))
            sock.listen(LISTEN_BACKLOG)
        except OSError as exc:
            sock.close()
            raise UserError(
                f"{self.option} {self}: cannot listen there ({exc.strerror}): "
                "choose another port, or stop what holds this one"
            ) from None
        return sock

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


def socket_url(sock: socket.socket) -> str:
    """The page's URL on a bound socket (the port the kernel chose, for port 0)."""
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


class ScoreboardServer:
    """uvicorn serving one journal's scoreboard on a socket already bound."""

    def __init__(
        self,
        journal_path: Path,
        sock: socket.socket,
        config: TableConfig | None,
        max_clients: int = MAX_CLIENTS,
        console: WebConsole | None = None,
    ) -> None:
        self.feed = BoardFeed.open(journal_path, config)
        self.socket = sock
        settings = uvicorn.Config(
            create_app(self.feed, max_clients, console),
            log_level=logging.WARNING,
            log_config=None,  # uvicorn's loggers go through the project's handler (structlog)
            access_log=False,
            lifespan="on",
            timeout_graceful_shutdown=GRACEFUL_STOP_S,
        )
        self._server = uvicorn.Server(settings)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return socket_url(self.socket)

    def run(self) -> None:
        """Serve until SIGINT or SIGTERM (in the main thread) or stop()."""
        try:
            self._server.run(sockets=[self.socket])
        finally:
            self.feed.close()
            self.socket.close()

    def start_in_thread(self) -> None:
        """Serve beside other work (shoectl demo --web); stop() ends it."""
        self._thread = threading.Thread(target=self.run, name="scoreboard-web", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join()


@contextmanager
def served_in_thread(
    journal_path: Path, sock: socket.socket, config: TableConfig | None
) -> Iterator[ScoreboardServer]:
    """The scoreboard served from a thread while the block runs (shoectl demo --web)."""
    server = ScoreboardServer(journal_path, sock, config)
    server.start_in_thread()
    try:
        yield server
    finally:
        server.stop()
