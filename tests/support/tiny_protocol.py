"""A third party's protocol family, installed the way pip leaves a distribution: a module
and a dist-info whose entry_points.txt names it in the cardshoe.protocols group.

The family is a card reader that writes one card per line ("7H", or "CUT" for the cut
card) on a serial port, numbered on the host; it declares no guarantee at all.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from cardshoe.drivers.api.protocols import ENTRY_POINT_GROUP

TINY_FAMILY = textwrap.dedent(
    '''
    """A third party's reader: one card per line ("7H", "CUT"), numbered on the host."""

    import time

    import serial

    from cardshoe.drivers.api.device_link import Capability, DeviceLink
    from cardshoe.drivers.api.events import (
        CardId, CardSeen, CutCardSeen, DeviceIdentity, DeviceKind, DeviceStatus, GateState,
    )
    from cardshoe.drivers.api.protocols import ProtocolFamily
    from cardshoe.drivers.errors import DeviceGone


    class TinyLink(DeviceLink):
        def __init__(self, url, timeout):
            super().__init__()
            self._url = url
            self._port = serial.serial_for_url(url, timeout=timeout)
            self._buffer = b""
            self._seq = 0

        url = property(lambda self: self._url)
        capabilities = property(lambda self: Capability.CUT_CARD_DETECTION)
        connected = property(lambda self: self._port.is_open)

        @property
        def identity(self):
            return DeviceIdentity(DeviceKind.SHOE, "TINY", "T-1", "1", b"", "tiny", "1")

        def set_journaled_seq(self, seq, epoch=None):
            self._seq = seq or 0

        def next_event(self, timeout=None):
            if not self._port.is_open:
                raise DeviceGone(f"{self._url} is closed")
            while b"\\n" not in self._buffer:
                self._port.timeout = timeout
                chunk = self._port.read(max(1, self._port.in_waiting))
                if not chunk:
                    return None
                self._buffer += chunk
            line, _, self._buffer = self._buffer.partition(b"\\n")
            self._seq += 1
            now = time.monotonic_ns() // 1_000_000
            text = line.strip().decode("ascii")
            if text == "CUT":
                return CutCardSeen(self._seq, now)
            card = CardId.parse(text)
            return CardSeen(self._seq, now, card, code=text)

        def ack(self, seq):
            pass

        def get_status(self):
            return DeviceStatus(GateState.UNKNOWN, None, None)

        def _close_link(self):
            self._port.close()


    def open_tiny(request):
        return TinyLink(request.url, request.timeout)


    FAMILY = ProtocolFamily("tiny", Capability.CUT_CARD_DETECTION, open_tiny)
    '''
)


def install_tiny_family(site: Path) -> None:
    """A distribution as pip leaves it: its module and a dist-info naming the entry point."""
    (site / "tiny_reader.py").write_text(TINY_FAMILY)
    info = site / "tiny_reader-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tiny-reader\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\ntiny = tiny_reader:FAMILY\n")
