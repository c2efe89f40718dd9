"""Link authentication (protocol 1.1): pairing keys, session keys and frame tags.

Field exploits of shufflers used one key shared by every device and a link
anyone could talk on. Here each device holds its own random pairing key,
and every connection derives a fresh session key from it and two random
nonces, one chosen by each side:

    session key = HMAC-SHA256(pairing key,
                              "cardshoe-link-v1" ‖ host nonce ‖ device nonce ‖ serial number)

After the handshake every frame is sealed: header flag AUTH_TAG is set and
the payload ends with a trailer

    counter (u32 little-endian) ‖ tag (16 bytes)
    tag = first 16 bytes of HMAC-SHA256(session key, direction ‖ payload up to the tag)

The counter counts the sender's sealed frames in this session, from 1, one
counter per direction. A receiver accepts only a counter above the highest
it has accepted, so a frame copied off the wire and sent again (a replay)
is refused as surely as a forged one; the direction byte stops a frame
being reflected back to its sender. A new session (new nonces) starts both
counters again with a new key, so old frames are worthless in it.

Pure: no I/O, no clock. The host link (link.py) and the simulated device
(firmware_sim/device_link.py) both use LinkAuth. docs/protocol.md
("Link authentication") is the specification, with worked examples that
tests/drivers/test_auth_doc_examples.py checks against this module.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import struct
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum

from cardshoe.drivers.protocol.errors import ProtocolError
from cardshoe.drivers.protocol.link_constants import AUTHENTICATED_FROM_1_1
from cardshoe.drivers.protocol.message_codec import HEADER
from cardshoe.drivers.protocol.messages import NONCE_SIZE, PAIRING_KEY_SIZE, HeaderFlag

TAG_SIZE = 16
COUNTER = struct.Struct("<I")
TRAILER_SIZE = COUNTER.size + TAG_SIZE
SESSION_LABEL = b"cardshoe-link-v1"
_FLAGS_OFFSET = 2
_LAST_COUNTER = 0xFFFFFFFF


@dataclass(frozen=True)
class LinkKey:
    """What a host holds for one paired device: the pairing key, and the protocol minor
    pinned when it was paired.

    The minor is the floor: HELLO and GET_INFO travel in clear, so a relay that
    rewrites both minors down would otherwise talk a paired link out of what
    later minors bind (the HELLO digest, the stream epoch). A host refuses a
    device that answers below its floor.
    """

    secret: bytes
    min_minor: int = AUTHENTICATED_FROM_1_1


KeyLookup = Callable[[str], LinkKey | None]
"""The host's link key for a device serial number, or None when it holds none."""


class Direction(IntEnum):
    """Which way a sealed frame travels; the first byte the tag covers."""

    HOST_TO_DEVICE = 0x01
    DEVICE_TO_HOST = 0x02


class AuthError(ProtocolError):
    """A sealed frame that fails authentication: wrong tag, old counter, or cut short."""


def new_pairing_key() -> bytes:
    """A random per-device key; never a constant, never shared between devices."""
    return secrets.token_bytes(PAIRING_KEY_SIZE)


def new_nonce() -> bytes:
    return secrets.token_bytes(NONCE_SIZE)


def key_id(pairing_key: bytes) -> str:
    """A short name for a key that reveals nothing of it, for logs and `shoectl pair`."""
    return hashlib.sha256(pairing_key).hexdigest()[:16]


def derive_session_key(
    pairing_key: bytes, host_nonce: bytes, device_nonce: bytes, serial_number: str
) -> bytes:
    """The key of one session; both nonces must be fresh, so no two sessions share it."""
    if len(pairing_key) != PAIRING_KEY_SIZE:
        raise ValueError(f"a pairing key is {PAIRING_KEY_SIZE} bytes, not {len(pairing_key)}")
    if len(host_nonce) != NONCE_SIZE or len(device_nonce) != NONCE_SIZE:
        raise ValueError(f"each nonce is {NONCE_SIZE} bytes")
    context = SESSION_LABEL + host_nonce + device_nonce + serial_number.encode("utf-8")
    return hmac.new(pairing_key, context, hashlib.sha256).digest()


def frame_tag(session_key: bytes, direction: Direction, covered: bytes) -> bytes:
    """The truncated HMAC over the direction byte and the payload up to the tag."""
    return hmac.new(session_key, bytes([direction]) + covered, hashlib.sha256).digest()[:TAG_SIZE]


def is_sealed(payload: bytes) -> bool:
    """Whether the header says a trailer follows the body (AUTH_TAG is set)."""
    return len(payload) > _FLAGS_OFFSET and bool(payload[_FLAGS_OFFSET] & HeaderFlag.AUTH_TAG)


def unsealed(payload: bytes) -> bytes:
    """The message payload inside a sealed one, NOT verified: the flag cleared, the trailer cut.

    Only for reading the device nonce out of AUTH_RESPONSE, which the session
    key (and so the check) depends on; everything else goes through LinkAuth.open.
    """
    if len(payload) < HEADER.size + TRAILER_SIZE:
        raise AuthError(f"a {len(payload)}-byte sealed payload is too short for its trailer")
    flags = payload[_FLAGS_OFFSET] & ~HeaderFlag.AUTH_TAG
    return payload[:_FLAGS_OFFSET] + bytes([flags]) + payload[_FLAGS_OFFSET + 1 : -TRAILER_SIZE]


@dataclass
class LinkAuth:
    """One side's state in one authenticated session: the key and both counters."""

    session_key: bytes
    sends: Direction
    """The direction of the frames this side seals; it opens the other direction's."""
    sent: int = 0
    """Counter of the last frame sealed."""
    received: int = 0
    """Highest counter accepted; anything at or below it is a replay."""

    @classmethod
    def start(
        cls,
        pairing_key: bytes,
        host_nonce: bytes,
        device_nonce: bytes,
        serial_number: str,
        *,
        sends: Direction,
    ) -> LinkAuth:
        key = derive_session_key(pairing_key, host_nonce, device_nonce, serial_number)
        return cls(key, sends)

    def seal(self, payload: bytes) -> bytes:
        """The payload with AUTH_TAG set and the counter and tag appended."""
        if self.sent == _LAST_COUNTER:
            raise AuthError("this session has sealed 2**32 - 1 frames: start a new one")
        self.sent += 1
        flags = payload[_FLAGS_OFFSET] | HeaderFlag.AUTH_TAG
        covered = (
            payload[:_FLAGS_OFFSET]
            + bytes([flags])
            + payload[_FLAGS_OFFSET + 1 :]
            + COUNTER.pack(self.sent)
        )
        return covered + frame_tag(self.session_key, self.sends, covered)

    def open(self, payload: bytes) -> bytes:
        """The message payload of a sealed frame from the other side, or AuthError.

        A frame is accepted only with the right tag and a counter above every
        counter accepted before; only then does the counter move.
        """
        inner = unsealed(payload)
        covered, tag = payload[:-TAG_SIZE], payload[-TAG_SIZE:]
        expected = frame_tag(self.session_key, _other(self.sends), covered)
        if not hmac.compare_digest(tag, expected):
            raise AuthError("the tag does not match: forged, altered, or another key")
        (counter,) = COUNTER.unpack_from(covered, len(covered) - COUNTER.size)
        if counter <= self.received:
            raise AuthError(f"counter {counter} is not above {self.received}: a replayed frame")
        self.received = counter
        return inner


def _other(direction: Direction) -> Direction:
    return (
        Direction.DEVICE_TO_HOST
        if direction is Direction.HOST_TO_DEVICE
        else Direction.HOST_TO_DEVICE
    )
