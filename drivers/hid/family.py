"""The "hid" protocol family: a barcode reader in USB keyboard mode, read through pyusb.

`[device] protocol = "hid"` with usb_vid / usb_pid (and usb_serial) naming
the reader, and a `[device.hid]` table holding the same profile keys as a
line reader's (drivers/line/profile.py) but those of a serial line: Enter
ends every line, a keyboard has no baud rate, and nothing can be written
back to it, so `baud`, `terminator` and `ack` are refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cardshoe.drivers.api.device_link import Capability
from cardshoe.drivers.api.protocols import BadProtocolOptions, OpenRequest, ProtocolFamily
from cardshoe.drivers.errors import LinkProtocolError
from cardshoe.drivers.hid.boot_keyboard import UNKNOWN_KEY, BootReport, KeyboardLines, ReportError
from cardshoe.drivers.hid.usb_keyboard import KeyboardReports
from cardshoe.drivers.line.family import reader_identity
from cardshoe.drivers.line.link import LineLink
from cardshoe.drivers.line.profile import LineProfile, LineProfileError, parse_line_profile
from cardshoe.drivers.line.splitting import CHECKSUM_ROOM, Overlong

FAMILY_NAME = "hid"
SERIAL_LINE_KEYS = {
    "baud": "a USB keyboard has no baud rate",
    "terminator": "Enter ends every line a keyboard types",
    "ack": "nothing can be written back to a keyboard",
}


def parse_options(table: Mapping[str, Any], base_dir: Path) -> LineProfile:
    for key, why in SERIAL_LINE_KEYS.items():
        if key in table:
            raise BadProtocolOptions(f"device.{FAMILY_NAME}.{key}: {why}; remove the key")
    try:
        return parse_line_profile(table, base_dir)
    except LineProfileError as exc:
        message = str(exc).replace("device.line", f"device.{FAMILY_NAME}", 1)
        raise BadProtocolOptions(message) from None


class KeyboardLineSource:
    """Lines typed by a keyboard reader, ended by Enter, bounded as a serial line's are."""

    def __init__(self, reports: KeyboardReports, max_length: int) -> None:
        self.reports = reports
        self._limit = max_length + CHECKSUM_ROOM
        self._keys = KeyboardLines()

    def read(self) -> list[bytes | Overlong]:
        report = self.reports.read()
        if report is None:
            return []
        try:
            typed = self._keys.feed(BootReport.parse(report))
        except ReportError:
            # Not a boot report (the reader is in another mode): a bad line to count.
            typed = [UNKNOWN_KEY]
        lines: list[bytes | Overlong] = [line.encode("utf-8") for line in typed]
        if len(self._keys.pending) > self._limit:
            lines.append(Overlong(self._keys.drop_pending().encode("utf-8")))
        return lines

    def write(self, data: bytes) -> None:
        raise LinkProtocolError(f"{self.reports.url}: a keyboard reader takes no replies")

    def close(self) -> None:
        self.reports.close()


def _profile(request: OpenRequest) -> LineProfile:
    if not isinstance(request.options, LineProfile):
        raise BadProtocolOptions(
            f"protocol {FAMILY_NAME!r} needs a [device.{FAMILY_NAME}] table saying how to read "
            "the reader's lines (the keys of docs/examples/line-shoe.toml but baud, terminator "
            "and ack)"
        )
    return request.options


def open_hid_reader(request: OpenRequest) -> LineLink:
    profile = _profile(request)

    def open_source() -> KeyboardLineSource:
        return KeyboardLineSource(
            KeyboardReports.open(request.url, backend=request.usb_backend), profile.max_length
        )

    first = open_source()
    identity = reader_identity(
        first.reports.product, first.reports.serial_number or request.url, FAMILY_NAME
    )
    return LineLink(request.url, profile, first, open_source, identity, reconnect=request.reconnect)


FAMILY = ProtocolFamily(
    name=FAMILY_NAME,
    capabilities=Capability.CUT_CARD_DETECTION | Capability.DEALER_BUTTON | Capability.PHYSICAL_IDS,
    open=open_hid_reader,
    parse_options=parse_options,
    summary="a barcode card reader in USB keyboard mode, read through pyusb (a [device.hid] "
    "profile says how to read its lines)",
)
