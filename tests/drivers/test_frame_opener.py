"""The tap's opener follows a handshake on the wire and checks each sealed frame.

The frames are sealed here by the protocol's own LinkAuth, as the device and
the host seal them, and fed through the FrameTap as bytes; tests/cli/
test_paired_servicing.py runs the same through `shoectl dump` against the
simulator.
"""

from __future__ import annotations

from typing import Any

from support.driver_testing import hello

from cardshoe.drivers.frame_opener import NO_KEY, RX, TX
from cardshoe.drivers.frame_tap import FrameTap
from cardshoe.drivers.protocol.auth import (
    Direction,
    LinkAuth,
    LinkKey,
    new_nonce,
    new_pairing_key,
)
from cardshoe.drivers.protocol.framing import encode_frame
from cardshoe.drivers.protocol.message_codec import encode_message
from cardshoe.drivers.protocol.messages import (
    Ack,
    AuthChallenge,
    AuthResponse,
    ButtonPressed,
    Capability,
    GetInfo,
)

SERIAL = "PEER1"
KEY = new_pairing_key()


def keys(serial_number: str) -> LinkKey | None:
    return LinkKey(KEY) if serial_number == SERIAL else None


class Wire:
    """One authenticated session as both ends would put it on the wire, into a tap."""

    def __init__(self, tap_keys: Any = keys, device_key: bytes = KEY) -> None:
        self.shown: list[dict[str, Any]] = []
        self.tap = FrameTap(self.shown.append, tap_keys)
        host_nonce, device_nonce = new_nonce(), new_nonce()
        self.device = LinkAuth.start(
            device_key, host_nonce, device_nonce, SERIAL, sends=Direction.DEVICE_TO_HOST
        )
        self.host = LinkAuth.start(
            device_key, host_nonce, device_nonce, SERIAL, sends=Direction.HOST_TO_DEVICE
        )
        paired = hello(7, capabilities=Capability.GATE | Capability.AUTH_REQUIRED)
        self.send(TX, encode_message(GetInfo(7, 2)))
        self.send(RX, encode_message(paired))
        self.send(TX, encode_message(AuthChallenge(8, host_nonce)))
        response = AuthResponse(8, device_nonce, bytes(32))
        self.send(RX, self.device.seal(encode_message(response)))

    def send(self, direction: str, payload: bytes) -> dict[str, Any]:
        self.tap.feed(direction, encode_frame(payload))
        return self.shown[-1]

    def event(self, seq: int) -> bytes:
        return self.device.seal(encode_message(ButtonPressed(seq, 100 * seq, 0)))


def verdicts(wire: Wire) -> list[tuple[str, str | None, int | None]]:
    return [
        (
            record["frame"],
            record["message"] and record["message"]["type"],
            record["sealed"] and record["sealed"]["counter"],
        )
        for record in wire.shown
    ]


def test_the_handshake_gives_the_session_key_and_each_sealed_frame_opens() -> None:
    wire = Wire()
    wire.send(RX, wire.event(1))
    wire.send(TX, wire.host.seal(encode_message(Ack(1))))
    assert verdicts(wire) == [
        ("ok", "GET_INFO", None),
        ("ok", "HELLO", None),
        ("ok", "AUTH_CHALLENGE", None),
        ("ok", "AUTH_RESPONSE", 1),
        ("ok", "BUTTON", 2),
        ("ok", "ACK", 1),
    ]


def test_a_forged_a_replayed_and_a_cut_short_frame_fail_and_the_genuine_ones_still_open() -> None:
    wire = Wire()
    genuine = wire.event(1)
    forged = bytearray(genuine)
    forged[8] ^= 0x01  # one body byte changed, the tag left as it was
    failed = [
        wire.send(RX, bytes(forged)),
        wire.send(RX, genuine[:6]),
    ]
    assert wire.send(RX, genuine)["sealed"] == {"counter": 2}
    failed.append(wire.send(RX, genuine))
    assert [(record["frame"], record["message"], record["error"]) for record in failed] == [
        ("auth_failed", None, "the tag does not match: forged, altered, or another key"),
        ("auth_failed", None, "a 6-byte sealed payload is too short for its trailer"),
        ("auth_failed", None, "counter 2 is not above 2: a replayed frame"),
    ]
    assert wire.send(RX, wire.event(2))["sealed"] == {"counter": 3}


def test_with_another_key_even_the_auth_response_fails() -> None:
    wire = Wire(device_key=new_pairing_key())
    assert verdicts(wire)[-1] == ("auth_failed", None, None)
    assert wire.send(RX, wire.event(1))["frame"] == "auth_failed"


def test_without_keys_a_sealed_frame_stays_sealed_and_nothing_is_decoded_from_it() -> None:
    wire = Wire(tap_keys=None)
    wire.send(RX, wire.event(1))
    assert verdicts(wire)[3:] == [("sealed", None, None), ("sealed", None, None)]
    assert {record["error"] for record in wire.shown[3:]} == {NO_KEY}


def test_a_new_get_info_ends_the_session_so_its_frames_no_longer_open() -> None:
    """The device ends any session at GET_INFO: a frame of the old one, seen after it (a
    late retransmission), is sealed outside the session followed, not a forgery."""
    wire = Wire()
    late = wire.event(1)
    wire.send(TX, encode_message(GetInfo(9, 2)))
    record = wire.send(RX, late)
    assert (record["frame"], record["error"]) == (
        "sealed",
        "sealed outside the session this tap followed",
    )
