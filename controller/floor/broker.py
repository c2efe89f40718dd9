"""Reaching the MQTT broker: the mqtt:// or mqtts:// URL, TLS files, and one paho client.

Both the uplink and ingest speak MQTT 5 through paho-mqtt 2 (callback API
version 2); the URL decides whether TLS is used, so a test broker and the
floor's TLS broker differ only by a string and three files.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from cardshoe.controller.errors import UserError

DEFAULT_PORTS = {"mqtt": 1883, "mqtts": 8883}
KEEPALIVE_S = 10
"""A broker that vanishes without closing the socket is noticed within 1.5 keepalives."""


@dataclass(frozen=True)
class BrokerSettings:
    """Where the broker is and, for mqtts://, the files of this client's TLS identity."""

    url: str
    ca: Path | None = None
    cert: Path | None = None
    key: Path | None = None

    def __post_init__(self) -> None:
        parts = urlsplit(self.url)
        if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
            raise UserError(
                f"broker {self.url!r} is not usable: give mqtt://HOST:PORT or mqtts://HOST:PORT"
            )
        try:
            parts.port  # noqa: B018 - urlsplit checks the port only when asked
        except ValueError:
            raise UserError(f"broker {self.url!r} has a port that is not a number") from None
        if self.tls and self.ca is None:
            raise UserError(f"broker {self.url!r} uses TLS: give --ca, the floor's CA certificate")
        if (self.cert is None) != (self.key is None):
            raise UserError("give both --cert and --key (the table's certificate and its key)")
        if not self.tls and (self.ca or self.cert):
            raise UserError(f"--ca/--cert/--key need an mqtts:// broker, not {self.url!r}")
        for what, path in (("--ca", self.ca), ("--cert", self.cert), ("--key", self.key)):
            if path is not None and not path.is_file():
                raise UserError(f"{what} {path}: no such file")

    @property
    def tls(self) -> bool:
        return urlsplit(self.url).scheme == "mqtts"

    @property
    def host(self) -> str:
        return urlsplit(self.url).hostname or ""

    @property
    def port(self) -> int:
        parts = urlsplit(self.url)
        return parts.port or DEFAULT_PORTS[parts.scheme]


def new_client(settings: BrokerSettings, client_id: str) -> mqtt.Client:
    """An MQTT 5 client for this broker, not yet connected."""
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv5)
    if settings.tls:
        client.tls_set(
            ca_certs=str(settings.ca),
            certfile=None if settings.cert is None else str(settings.cert),
            keyfile=None if settings.key is None else str(settings.key),
            tls_version=ssl.PROTOCOL_TLS_CLIENT,
        )
    return client
