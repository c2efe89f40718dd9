"""The "line" protocol family: a reader writing one ASCII line per event on a serial line.

`[device] protocol = "line"` with a `[device.line]` profile (profile.py,
docs/examples/line-shoe.toml); the URL is any the transports open (a
/dev path, socket://, rfc2217://, the simulator's sim://).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cardshoe.drivers.api.device_link import Capability
from cardshoe.drivers.api.events import DeviceIdentity, DeviceKind
from cardshoe.drivers.api.protocols import BadProtocolOptions, OpenRequest, ProtocolFamily
from cardshoe.drivers.line.link import LineLink
from cardshoe.drivers.line.profile import LineProfile, LineProfileError, parse_line_profile
from cardshoe.drivers.line.splitting import LineSplitter, Overlong
from cardshoe.drivers.transports.base import Transport
from cardshoe.drivers.transports.registry import open_transport

FAMILY_NAME = "line"
PROTOCOL_VERSION = "1"


def parse_options(table: Mapping[str, Any], base_dir: Path) -> LineProfile:
    try:
        return parse_line_profile(table, base_dir)
    except LineProfileError as exc:
        raise BadProtocolOptions(str(exc)) from None


def profile_of(request: OpenRequest) -> LineProfile:
    """The request's profile; a line reader cannot be read without one."""
    if not isinstance(request.options, LineProfile):
        raise BadProtocolOptions(
            f"protocol {FAMILY_NAME!r} needs a [device.{FAMILY_NAME}] table saying how to read "
            "the reader's lines: see docs/examples/line-shoe.toml"
        )
    return request.options


def reader_identity(model: str, serial_number: str, family: str) -> DeviceIdentity:
    """A reader says nothing about itself: it is a shoe, named by where it is plugged in."""
    return DeviceIdentity(
        kind=DeviceKind.SHOE,
        model=model,
        serial_number=serial_number,
        firmware_version="",
        firmware_hash=b"",
        protocol=family,
        protocol_version=PROTOCOL_VERSION,
    )


class SerialLines:
    """Lines from a byte stream, cut at a terminator."""

    def __init__(self, transport: Transport, splitter: LineSplitter) -> None:
        self._transport = transport
        self._splitter = splitter

    def read(self) -> list[bytes | Overlong]:
        return self._splitter.feed(self._transport.read())

    def write(self, data: bytes) -> None:
        self._transport.write(data)

    def close(self) -> None:
        self._transport.close()


def open_serial_lines(
    url: str, baud: int, splitter: LineSplitter, usb_backend: Any = None
) -> SerialLines:
    transport = open_transport(url, usb_backend=usb_backend)
    try:
        transport.set_baudrate(baud)
    except BaseException:
        transport.close()
        raise
    return SerialLines(transport, splitter)


def profile_splitter(profile: LineProfile) -> LineSplitter:
    return LineSplitter(profile.terminator, profile.max_length)


def open_line_reader(request: OpenRequest) -> LineLink:
    profile = profile_of(request)

    def open_source() -> SerialLines:
        return open_serial_lines(
            request.url, profile.baud, profile_splitter(profile), request.usb_backend
        )

    return LineLink(
        request.url,
        profile,
        open_source(),
        open_source,
        reader_identity("line reader", request.url, FAMILY_NAME),
        reconnect=request.reconnect,
    )


FAMILY = ProtocolFamily(
    name=FAMILY_NAME,
    capabilities=Capability.CUT_CARD_DETECTION | Capability.DEALER_BUTTON | Capability.PHYSICAL_IDS,
    open=open_line_reader,
    parse_options=parse_options,
    summary="a card reader writing one ASCII line per card on a serial port (a [device.line] "
    "profile says how to read it)",
)
