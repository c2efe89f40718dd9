"""Serving the pit: uvicorn on a socket bound beforehand, over TLS when given a certificate."""

from __future__ import annotations

import ipaddress
import logging
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import uvicorn

from cardshoe.controller.errors import UserError
from cardshoe.controller.pit.app import PitSettings, create_app
from cardshoe.controller.web.server import GRACEFUL_STOP_S, socket_url


@dataclass(frozen=True)
class ServerTls:
    cert: Path
    key: Path


LOCAL_PROXIES = ("127.0.0.1", "::1")
"""The proxies trusted when none is named: a reverse proxy on this machine."""


def trusted_proxies(given: Sequence[str]) -> list[str]:
    """The proxies whose X-Forwarded-For names the client, each an IP address or network
    as uvicorn reads it (which would take a typing slip for a name that never matches);
    none given: this machine's. A client a proxy names counts its own failed logins."""
    return [_proxy(proxy) for proxy in given] or list(LOCAL_PROXIES)


def _proxy(text: str) -> str:
    try:
        if "/" in text:
            return str(ipaddress.ip_network(text, strict=False))
        return str(ipaddress.ip_address(text))
    except ValueError:
        raise UserError(
            f"--proxy {text!r} is not an IP address or network: give one such as 10.1.2.3 "
            "or 10.1.2.0/24"
        ) from None


def serve(
    settings: PitSettings, sock: socket.socket, tls: ServerTls | None, proxies: list[str]
) -> None:
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
        forwarded_allow_ips=proxies,
    )
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()


def pit_url(sock: socket.socket, tls: ServerTls | None) -> str:
    url = socket_url(sock)
    return url if tls is None else "https" + url.removeprefix("http")
