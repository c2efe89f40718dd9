"""Serving the pit: uvicorn on a socket bound beforehand, over TLS when given a certificate."""

from __future__ import annotations

import logging
import socket
from dataclasses import dataclass
from pathlib import Path

import uvicorn

from cardshoe.controller.pit.app import PitSettings, create_app
from cardshoe.controller.web.server import GRACEFUL_STOP_S, socket_url


@dataclass(frozen=True)
class ServerTls:
    cert: Path
    key: Path


def serve(settings: PitSettings, sock: socket.socket, tls: ServerTls | None) -> None:
    """Serve until SIGINT or SIGTERM."""
    config = uvicorn.Config(
        create_app(settings),
        log_level=logging.WARNING,
        log_config=None,
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=GRACEFUL_STOP_S,
        ssl_certfile=None if tls is None else str(tls.cert),
        ssl_keyfile=None if tls is None else str(tls.key),
    )
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()


def pit_url(sock: socket.socket, tls: ServerTls | None) -> str:
    url = socket_url(sock)
    return url if tls is None else "https" + url.removeprefix("http")
