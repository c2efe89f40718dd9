"""Byte-stream framing for the shoe link: COBS, a CRC-32, and a 0x00 delimiter.

On the wire a frame is COBS(payload + CRC-32 of payload, little-endian)
followed by one 0x00. COBS leaves no 0x00 inside a frame, so a receiver that
lost a byte, read garbage or came in half-way through a frame is back in step
at the next 0x00; the CRC-32 (zlib's, the IEEE 802.3 polynomial) rejects any
frame that was damaged on the way. Pure: no I/O, so the same code serves
serial ports, USB bulk pipes and the simulator.
"""

from __future__ import annotations

import logging
import struct
import zlib
from dataclasses import dataclass

from cobs import cobs

from cardshoe.drivers.protocol.errors import FrameTooLarge

log = logging.getLogger(__name__)

DELIMITER = b"\x00"
MAX_PAYLOAD = 256
"""The largest payload a frame may carry; the largest message is far below it."""
_CRC = struct.Struct("<I")
MAX_ENCODED = cobs.max_encoded_length(MAX_PAYLOAD + _CRC.size)
"""The longest run of bytes between two delimiters that can be a valid frame."""


def encode_frame(payload: bytes) -> bytes:
    """The wire bytes for one payload, delimiter included."""
    if not 1 <= len(payload) <= MAX_PAYLOAD:
        raise FrameTooLarge(f"a payload must be 1..{MAX_PAYLOAD} bytes, not {len(payload)}")
    checked = bytes(payload) + _CRC.pack(zlib.crc32(payload))
    encoded: bytes = cobs.encode(checked)
    return encoded + DELIMITER


@dataclass
class FrameCounters:
    """What the decoder has seen, for link-quality monitoring."""

    frames_ok: int = 0
    crc_errors: int = 0
    """Frames whose CRC did not match, including frames too short to hold one."""
    cobs_errors: int = 0
    oversize: int = 0
    """Runs of bytes longer than MAX_ENCODED without a delimiter."""
    bytes_discarded: int = 0
    """Bytes that belonged to no valid frame."""

    @property
    def bad_frames(self) -> int:
        return self.crc_errors + self.cobs_errors + self.oversize


class FrameDecoder:
    """Turns an arbitrarily split byte stream back into the payloads of good frames.

    Bad frames are counted and logged, never raised: a noisy line must not
    crash the driver, and the protocol's retransmission recovers the loss.
    """

    def __init__(self) -> None:
        self.counters = FrameCounters()
        self._pending = bytearray()
        self._overflowed = False

    def feed(self, data: bytes) -> list[bytes]:
        """Add received bytes; return the payloads of the frames they completed."""
        payloads: list[bytes] = []
        start = 0
        while (end := data.find(DELIMITER, start)) >= 0:
            self._collect(data[start:end])
            payload = self._finish_frame()
            if payload is not None:
                payloads.append(payload)
            start = end + 1
        self._collect(data[start:])
        return payloads

    def reset(self) -> None:
        """Drop a partial frame, for example when the port is reopened."""
        self.counters.bytes_discarded += len(self._pending)
        self._pending.clear()
        self._overflowed = False

    def _collect(self, chunk: bytes) -> None:
        if self._overflowed:
            self.counters.bytes_discarded += len(chunk)
            return
        self._pending += chunk
        if len(self._pending) > MAX_ENCODED:
            self.counters.oversize += 1
            self.counters.bytes_discarded += len(self._pending)
            log.warning(
                "shoe link: dropped %d bytes with no frame delimiter (oversize #%d)",
                len(self._pending),
                self.counters.oversize,
            )
            self._pending.clear()
            self._overflowed = True

    def _finish_frame(self) -> bytes | None:
        encoded = bytes(self._pending)
        self._pending.clear()
        if self._overflowed:
            self._overflowed = False
            return None
        if not encoded:
            return None
        try:
            checked: bytes = cobs.decode(encoded)
        except cobs.DecodeError as exc:
            self._reject(encoded, "cobs_errors", f"bad COBS ({exc})")
            return None
        if len(checked) <= _CRC.size:
            self._reject(encoded, "crc_errors", "too short to hold a CRC")
            return None
        payload, (crc,) = checked[: -_CRC.size], _CRC.unpack(checked[-_CRC.size :])
        if crc != zlib.crc32(payload):
            self._reject(encoded, "crc_errors", "CRC mismatch")
            return None
        self.counters.frames_ok += 1
        return payload

    def _reject(self, encoded: bytes, counter: str, reason: str) -> None:
        setattr(self.counters, counter, getattr(self.counters, counter) + 1)
        self.counters.bytes_discarded += len(encoded) + 1
        log.warning(
            "shoe link: dropped a %d-byte frame: %s (%s #%d)",
            len(encoded),
            reason,
            counter,
            getattr(self.counters, counter),
        )
        log.debug("shoe link: dropped frame bytes %s", encoded.hex())
