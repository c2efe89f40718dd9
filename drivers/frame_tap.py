"""Every frame on a device link, both ways, raw and decoded: what `shoectl dump` shows.

TappedTransport wraps a real transport and hands each chunk of bytes to a
FrameTap before passing it on unchanged, as pyserial's spy:// does for
native ports only. The tap cuts each direction at the 0x00 delimiters and
judges every frame with the drivers' own FrameDecoder and decode_message,
so a frame the link drops (bad COBS, CRC mismatch, oversize, undecodable) is
shown with the reason it was dropped, and nothing here decodes a second way.
Given the pairing keys, a FrameOpener (frame_opener.py) opens the sealed
frames of an authenticated link and checks each one as its receiver does.
It uses only the wire protocol, so it lives with the drivers; a record
carries no time: whoever shows it (controller/cli/dump_cmd.py) stamps it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from cardshoe.drivers.frame_opener import RX, TX, FrameOpener, Verdict
from cardshoe.drivers.protocol.auth import KeyLookup
from cardshoe.drivers.protocol.errors import MessageError
from cardshoe.drivers.protocol.framing import DELIMITER, MAX_ENCODED, FrameDecoder
from cardshoe.drivers.protocol.message_codec import decode_message, message_to_json
from cardshoe.drivers.transports.base import Transport

__all__ = ["RX", "TX", "FrameTap", "TappedTransport", "frame_record"]


def frame_record(
    direction: str, raw: bytes, *, delimited: bool = True, opener: FrameOpener | None = None
) -> dict[str, Any]:
    """One frame as the link would take it: raw is its bytes before the delimiter, or
    (delimited False) a run too long to be a frame, cut off where it became one.

    A sealed frame is opened with the opener's keys (sealed: its counter), or
    shown as "sealed" (nothing to open it with) or "auth_failed" (with why).
    """
    record: dict[str, Any] = {
        "direction": direction,
        "hex": (raw + DELIMITER if delimited else raw).hex(" "),
        "frame": "ok",
        "message": None,
        "error": None,
        "sealed": None,
    }
    if not delimited:
        record["frame"] = "oversize"
        return record
    if not raw:
        record["frame"] = "delimiter"
        return record
    decoder = FrameDecoder()
    payloads = decoder.feed(raw + DELIMITER)
    if not payloads:
        counters = decoder.counters
        record["frame"] = "bad_cobs" if counters.cobs_errors else "bad_crc"
        return record
    opening = (opener or FrameOpener(None)).open(direction, payloads[0])
    if opening.payload is None:
        record["frame"], record["error"] = opening.verdict.value, opening.reason
        return record
    if opening.verdict is Verdict.OPENED:
        record["sealed"] = {"counter": opening.counter}
    try:
        message = decode_message(opening.payload)
    except MessageError as exc:
        record["frame"] = "undecodable"
        record["error"] = str(exc)
        return record
    if opener is not None:
        opener.follow(direction, message)
    record["message"] = message_to_json(message)
    return record


class FrameTap:
    """Cuts each direction's bytes into frames and passes each frame's record to `show`.

    Called from the link's reader thread (rx) and from whichever thread
    writes (tx); `show` runs under one lock, so lines never interleave.
    """

    def __init__(
        self, show: Callable[[dict[str, Any]], None], keys: KeyLookup | None = None
    ) -> None:
        """keys: the pairing keys (as open_device takes them) that open sealed frames."""
        self._show = show
        self._lock = threading.Lock()
        self._pending = {TX: bytearray(), RX: bytearray()}
        self._opener = FrameOpener(keys)

    def feed(self, direction: str, data: bytes) -> None:
        with self._lock:
            pending = self._pending[direction]
            for byte in data:
                if byte == DELIMITER[0]:
                    self._show(frame_record(direction, bytes(pending), opener=self._opener))
                    pending.clear()
                    continue
                pending.append(byte)
                if len(pending) > MAX_ENCODED:
                    self._show(frame_record(direction, bytes(pending), delimited=False))
                    pending.clear()


class TappedTransport(Transport):
    def __init__(self, inner: Transport, tap: FrameTap) -> None:
        self._inner = inner
        self._tap = tap
        self.url = inner.url

    def read(self) -> bytes:
        data = self._inner.read()
        if data:
            self._tap.feed(RX, data)
        return data

    def write(self, data: bytes) -> None:
        self._tap.feed(TX, data)
        self._inner.write(data)

    def close(self) -> None:
        self._inner.close()
