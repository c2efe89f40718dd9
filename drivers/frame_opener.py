"""Opening the sealed frames a tap sees on an authenticated link, with the pairing key.

After the handshake of an authenticated link (protocol 1.1) every frame is
sealed: the session key that tags it comes from the pairing key and two
nonces that cross the wire in the handshake (drivers/protocol/auth.py). A
tap that holds the pairing key can therefore follow the handshake as it
passes, derive the same session key, and open and check every later frame
exactly as its receiver does: the tag, and a counter above the last one
accepted in that direction. So `shoectl dump` shows what a sealed frame
holds and whether it is genuine, and a forged, altered or replayed frame is
shown as failing authentication, not decoded as if it were the device's.

It checks the wire independently of the link it watches: it keeps its own
counters, so it never changes what the link accepts.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from cardshoe.drivers.protocol.auth import (
    AuthError,
    Direction,
    KeyLookup,
    LinkAuth,
    derive_session_key,
    is_sealed,
    unsealed,
)
from cardshoe.drivers.protocol.errors import MessageError
from cardshoe.drivers.protocol.message_codec import decode_message
from cardshoe.drivers.protocol.messages import AuthChallenge, AuthResponse, GetInfo, Hello, Message

TX = "tx"
"""Host to device."""
RX = "rx"
"""Device to host."""
NO_KEY = "no pairing key given"
"""Why a sealed frame stays closed when the tap was given no keys: said once, not per frame."""


class Verdict(StrEnum):
    """What the tap could make of one frame's payload."""

    CLEAR = "clear"
    """Not sealed: the handshake, or a link that does not authenticate."""
    OPENED = "opened"
    """Sealed, and its tag and counter check out under the session's key."""
    SEALED = "sealed"
    """Sealed, and nothing here can open it: no pairing key, or another session's frame."""
    AUTH_FAILED = "auth_failed"
    """Sealed, and it fails authentication in the session followed: forged, altered,
    replayed or cut short. Its contents are not to be believed, so they are not shown."""


@dataclass(frozen=True)
class Opening:
    verdict: Verdict
    payload: bytes | None
    """The message payload to decode; None unless the verdict is clear or opened."""
    counter: int | None = None
    """The sealed frame's counter, once opened."""
    reason: str | None = None
    """Why a sealed frame was not opened."""


@dataclass
class _Handshake:
    serial_number: str | None = None
    pairing_key: bytes | None = None
    host_nonce: bytes | None = None
    openers: dict[str, LinkAuth] | None = None
    """Per direction, the state that opens that direction's frames, once a session began."""


class FrameOpener:
    """Follows one link's handshakes and opens its sealed frames; keys as open_device takes.

    Called by the tap under its lock, for each direction's frames in order.
    """

    def __init__(self, keys: KeyLookup | None) -> None:
        self.keys = keys
        self._handshake = _Handshake()

    def open(self, direction: str, payload: bytes) -> Opening:
        """What to decode of one frame's payload, and whether it was sealed and genuine."""
        if not is_sealed(payload):
            return Opening(Verdict.CLEAR, payload)
        if self.keys is None:
            return Opening(Verdict.SEALED, None, reason=NO_KEY)
        handshake = self._handshake
        if handshake.openers is None and direction == RX:
            self._start_session(payload)
        if handshake.openers is None:
            return Opening(
                Verdict.SEALED, None, reason="sealed outside the session this tap followed"
            )
        opener = handshake.openers[direction]
        try:
            inner = opener.open(payload)
        except AuthError as exc:
            return Opening(Verdict.AUTH_FAILED, None, reason=str(exc))
        return Opening(Verdict.OPENED, inner, counter=opener.received)

    def follow(self, direction: str, message: Message) -> None:
        """Take what the handshake says in clear: who the device is, the host's nonce."""
        if self.keys is None:
            return
        handshake = self._handshake
        if direction == TX and isinstance(message, GetInfo):
            self._handshake = _Handshake()  # the device ends any session at GET_INFO
        elif direction == RX and isinstance(message, Hello):
            if message.serial_number != handshake.serial_number:
                handshake.serial_number = message.serial_number
                handshake.pairing_key = self._key_for(message.serial_number)
        elif (
            direction == TX
            and isinstance(message, AuthChallenge)
            and message.host_nonce != handshake.host_nonce  # a repeated challenge keeps it
        ):
            handshake.host_nonce, handshake.openers = message.host_nonce, None

    def _key_for(self, serial_number: str) -> bytes | None:
        """The pairing key, or None; the lookup itself answers None for an unusable key
        file, which is the link's to report (controller/cli/dump_cmd.py: _tap_keys)."""
        if self.keys is None:
            return None
        key = self.keys(serial_number)
        return None if key is None else key.secret

    def _start_session(self, payload: bytes) -> None:
        """The sealed AUTH_RESPONSE answering the challenge: its nonce gives the session key."""
        handshake = self._handshake
        key, serial, host_nonce = (
            handshake.pairing_key,
            handshake.serial_number,
            handshake.host_nonce,
        )
        if key is None or serial is None or host_nonce is None:
            return
        try:
            response = decode_message(unsealed(payload))
        except (AuthError, MessageError):
            return
        if not isinstance(response, AuthResponse):
            return
        session_key = derive_session_key(key, host_nonce, response.device_nonce, serial)
        # Each opener opens the frames the other side seals.
        handshake.openers = {
            RX: LinkAuth(session_key, sends=Direction.HOST_TO_DEVICE),
            TX: LinkAuth(session_key, sends=Direction.DEVICE_TO_HOST),
        }
