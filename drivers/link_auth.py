"""The link's authentication decisions (protocol 1.1 to 1.3), as pure functions.

link.py runs the handshake and holds the session; these decide, from what the
device said and what this host holds, whether to challenge it, what to do with
each frame that arrives, and whether an AUTH_RESPONSE vouches for the HELLO it
follows. Each refusal is one line a technician can act on.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from cardshoe.drivers.errors import AuthenticationFailed, DriverError, ProtocolDowngrade
from cardshoe.drivers.protocol.auth import LinkKey, is_sealed
from cardshoe.drivers.protocol.link_constants import PROTOCOL_MAJOR, PROTOCOL_MINOR
from cardshoe.drivers.protocol.message_codec import hello_digest
from cardshoe.drivers.protocol.messages import AuthResponse, Capability, Hello, MessageType


def key_to_challenge_with(hello: Hello, key: LinkKey | None, url: str) -> LinkKey | None:
    """The key to challenge the device with, None to take it unauthenticated; or refuse.

    A paired device (AUTH_REQUIRED) needs this host's key for it; a device whose key
    this host holds must ask for authentication; and it must speak at least the minor
    it was paired at, since the version travels in clear.
    """
    device = f"device {hello.serial_number!r} at {url}"
    required = Capability.AUTH_REQUIRED in hello.capabilities
    if key is None:
        if required:
            raise AuthenticationFailed(
                f"{device} is paired but this host holds no pairing key for it: "
                "pair it with `shoectl pair` or install its key file"
            )
        return None
    if not required:
        raise AuthenticationFailed(
            f"{device} does not ask for authentication although this host holds its "
            "pairing key: an unpaired replacement or a spoof; check the device, then "
            "pair it again"
        )
    minor = min(PROTOCOL_MINOR, hello.protocol_minor)
    if minor < key.min_minor:
        raise ProtocolDowngrade(
            f"{device} answers in protocol {PROTOCOL_MAJOR}.{minor}, below the "
            f"{PROTOCOL_MAJOR}.{key.min_minor} it was paired at: a relay rewriting the "
            "version on the wire, or its firmware rolled back; check the cable and the "
            "firmware, and pair it again only if the older version is intended"
        )
    return key


class Admit(Enum):
    """What becomes of one frame's payload on a link with a key store."""

    PASS = "pass"
    """Decode it as it is."""
    OPEN = "open"
    """Open it with the session's key first."""
    OPEN_RESPONSE = "open_response"
    """The sealed AUTH_RESPONSE the challenge waits for: its nonce gives the key."""
    REJECT = "reject"
    """It failed authentication on an authenticated link: an alarm."""
    DROP = "drop"
    """Left over from a session before this one: only counted."""


@dataclass(frozen=True)
class Admission:
    action: Admit
    reason: str = ""


def admission(
    payload: bytes, *, device_keyed: bool, in_session: bool, challenging: bool
) -> Admission:
    """Whether a payload goes on to be decoded, when this host has a key store.

    An unsealed frame goes on only from a device this host holds no key for, or if
    it is a HELLO, or the refusal of our AUTH_CHALLENGE; a sealed frame only in a
    session (or as the AUTH_RESPONSE being waited for).
    """
    if is_sealed(payload):
        if in_session:
            return Admission(Admit.OPEN)
        if challenging:
            return Admission(Admit.OPEN_RESPONSE)
        return Admission(Admit.DROP, "a sealed frame outside a session")
    message_type = payload[1] if len(payload) > 1 else None
    if not device_keyed or message_type == MessageType.HELLO:
        return Admission(Admit.PASS)
    if in_session:
        return Admission(Admit.REJECT, "an unsealed frame on an authenticated link")
    if challenging and message_type == MessageType.REPLY:
        return Admission(Admit.PASS)
    return Admission(Admit.DROP, "an unsealed frame before authentication")


def vouching_error(response: AuthResponse, hello: Hello, url: str) -> DriverError | None:
    """Why the AUTH_RESPONSE does not vouch for the HELLO before it, or None when it does."""
    device = f"device {hello.serial_number!r} at {url}"
    if response.firmware_hash != hello.firmware_hash:
        return AuthenticationFailed(
            f"{device} reported firmware {hello.firmware_hash.hex()} in HELLO but "
            f"{response.firmware_hash.hex()} authenticated: altered on the wire"
        )
    if response.hello_digest is None and min(PROTOCOL_MINOR, hello.protocol_minor) >= 2:
        return AuthenticationFailed(
            f"{device} speaks protocol 1.{hello.protocol_minor} but did not vouch for "
            "its HELLO: altered on the wire"
        )
    if response.hello_digest is not None and response.hello_digest != hello_digest(hello):
        return AuthenticationFailed(
            f"{device}: the HELLO that arrived is not the one the device vouched for "
            "(stream position, capabilities or identity altered on the wire)"
        )
    return None
