"""The simulator's side of protocol 1.1 link authentication, driven in-process.

The host here is bare (the codec and drivers/protocol/auth.py, nothing of link.py),
so each test sees exactly which frames the device seals, opens and drops.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from support.sim_support import FakeClock

from cardshoe.drivers.protocol.auth import (
    AuthError,
    Direction,
    LinkAuth,
    is_sealed,
    new_nonce,
    new_pairing_key,
    unsealed,
)
from cardshoe.drivers.protocol.error_codes import ErrorCode
from cardshoe.drivers.protocol.framing import FrameDecoder, encode_frame
from cardshoe.drivers.protocol.link_constants import EVENT_RETRANSMIT_INTERVAL_S, PROTOCOL_MINOR
from cardshoe.drivers.protocol.message_codec import decode_message, encode_message
from cardshoe.drivers.protocol.messages import (
    Ack,
    AuthChallenge,
    AuthResponse,
    Capability,
    GateMode,
    GetInfo,
    GetStatus,
    Hello,
    Message,
    Pair,
    Reply,
    SelfTestResult,
    SetGate,
    Status,
)
from cardshoe.firmware_sim.core import FirmwareCore
from cardshoe.firmware_sim.devices import create_device


@dataclass
class AuthHost:
    """A host that seals what it sends once a session is up and opens what it receives."""

    core: FirmwareCore
    clock: FakeClock
    key: bytes | None
    auth: LinkAuth | None = None
    decoder: FrameDecoder = field(default_factory=FrameDecoder)
    sealed_payloads: list[bytes] = field(default_factory=list)
    next_request_id: int = 1

    def request_id(self) -> int:
        self.next_request_id += 1
        return self.next_request_id - 1

    def send(self, message: Message, *, seal: bool = True) -> bytes:
        payload = encode_message(message)
        if seal and self.auth is not None:
            payload = self.auth.seal(payload)
        self.send_payload(payload)
        return payload

    def send_payload(self, payload: bytes) -> None:
        self.core.feed(encode_frame(payload))

    def receive(self) -> list[Message]:
        self.core.tick()
        messages = []
        for payload in self.decoder.feed(self.core.take_output()):
            if is_sealed(payload):
                self.sealed_payloads.append(payload)
                assert self.auth is not None, "a sealed frame before the session"
                payload = self.auth.open(payload)
            messages.append(decode_message(payload))
        return messages

    def wait(self, seconds: float) -> list[Message]:
        self.clock.advance(seconds)
        return self.receive()

    def hello(self) -> Hello:
        self.receive()
        self.send(GetInfo(self.request_id(), 1), seal=False)
        self.auth = None
        (hello,) = [message for message in self.receive() if isinstance(message, Hello)]
        return hello

    def authenticate(self) -> tuple[AuthResponse, list[Message]]:
        """AUTH_CHALLENGE with a fresh nonce; the response opened, and what followed it."""
        assert self.key is not None
        hello = self.hello()
        host_nonce = new_nonce()
        self.send(AuthChallenge(self.request_id(), host_nonce), seal=False)
        self.core.tick()
        payloads = self.decoder.feed(self.core.take_output())
        response = decode_message(unsealed(payloads[0]))
        assert isinstance(response, AuthResponse)
        self.auth = LinkAuth.start(
            self.key,
            host_nonce,
            response.device_nonce,
            hello.serial_number,
            sends=Direction.HOST_TO_DEVICE,
        )
        assert decode_message(self.auth.open(payloads[0])) == response
        return response, [decode_message(self.auth.open(payload)) for payload in payloads[1:]]


def paired_host(key: bytes | None = None, *, device_key: bytes | None = None) -> AuthHost:
    pairing_key = new_pairing_key()
    clock = FakeClock()
    core = create_device("cs-1", clock=clock, seed=7, pairing_key=device_key or pairing_key)
    return AuthHost(core, clock, key or pairing_key)


def session(host: AuthHost) -> SelfTestResult:
    """Authenticate and acknowledge the power-up self-test that follows."""
    _response, after = host.authenticate()
    (result,) = after
    assert isinstance(result, SelfTestResult)
    host.send(Ack(result.seq))
    assert host.receive() == []
    return result


def test_an_unpaired_device_speaks_its_minor_without_asking_for_authentication() -> None:
    clock = FakeClock()
    host = AuthHost(create_device("cs-1", clock=clock, seed=7), clock, None)
    hello = host.hello()
    assert hello.protocol_minor == PROTOCOL_MINOR
    assert Capability.AUTH_REQUIRED not in hello.capabilities
    host.send(AuthChallenge(9, new_nonce()))
    assert host.receive() == [Reply(9, ErrorCode.UNSUPPORTED)]


def test_a_paired_device_says_so_and_sends_no_event_before_authentication() -> None:
    host = paired_host()
    hello = host.hello()
    assert Capability.AUTH_REQUIRED in hello.capabilities
    assert hello.capabilities & ~Capability.AUTH_REQUIRED == host.core.profile.capabilities
    assert host.wait(1.0) == []
    assert list(host.core.link.pending)


def test_a_paired_device_refuses_every_unsealed_command_and_ignores_an_unsealed_ack() -> None:
    host = paired_host()
    host.hello()
    pending_before = list(host.core.link.pending)
    host.send(SetGate(5, GateMode.OPEN))
    host.send(GetStatus(6))
    host.send(Ack(pending_before[0].seq))
    assert host.receive() == [Reply(5, ErrorCode.AUTH_REQUIRED), Reply(6, ErrorCode.AUTH_REQUIRED)]
    assert list(host.core.link.pending) == pending_before
    assert host.core.gate is GateMode.LOCKED


def test_the_handshake_proves_the_key_and_then_every_frame_is_sealed() -> None:
    host = paired_host()
    response, after = host.authenticate()
    assert response.firmware_hash == host.core.firmware_hash
    assert [type(message) for message in after] == [SelfTestResult]
    host.send(Ack(after[0].seq))
    host.send(SetGate(host.request_id(), GateMode.OPEN))
    status_request = host.request_id()
    host.send(GetStatus(status_request))
    reply, status = host.receive()
    assert reply == Reply(status_request - 1, ErrorCode.OK)
    assert isinstance(status, Status) and status.gate is GateMode.OPEN
    assert host.auth is not None and host.auth.received == 4
    assert len(host.sealed_payloads) == 2
    assert host.core.link.auth_failures == 0


def test_a_host_with_another_key_cannot_open_the_response() -> None:
    host = paired_host(key=new_pairing_key())
    with pytest.raises(AuthError, match="tag does not match"):
        host.authenticate()


def test_a_command_from_a_host_with_another_key_is_dropped_unanswered() -> None:
    host = paired_host()
    host.authenticate()
    assert host.auth is not None
    forger = LinkAuth(bytes(32), Direction.HOST_TO_DEVICE, sent=host.auth.sent)
    host.send_payload(forger.seal(encode_message(SetGate(40, GateMode.OPEN))))
    assert host.receive() == []
    assert host.core.gate is GateMode.LOCKED
    assert host.core.link.auth_failures == 1


def test_a_replayed_command_is_dropped_and_the_next_fresh_one_is_served() -> None:
    host = paired_host()
    session(host)
    gate_open = host.send(SetGate(host.request_id(), GateMode.OPEN))
    assert [type(message) for message in host.receive()] == [Reply]
    host.send(SetGate(host.request_id(), GateMode.LOCKED))
    host.receive()
    host.send_payload(gate_open)
    assert host.receive() == []
    assert host.core.gate is GateMode.LOCKED
    assert host.core.link.auth_failures == 1


def test_a_replayed_ack_cannot_make_the_device_drop_an_event() -> None:
    host = paired_host()
    session(host)
    host.core.press_button()
    (button,) = host.receive()
    stale_ack = host.send(Ack(button.seq - 1))
    host.send_payload(stale_ack)
    assert host.core.link.auth_failures == 1
    assert [event.seq for event in host.core.link.pending] == [button.seq]


def test_each_resend_of_an_event_is_sealed_with_a_new_counter() -> None:
    host = paired_host()
    session(host)
    host.core.press_button()
    first = host.receive()
    again = host.wait(EVENT_RETRANSMIT_INTERVAL_S)
    assert first == again
    assert host.sealed_payloads[-1] != host.sealed_payloads[-2]


def test_get_info_ends_the_session_so_its_frames_no_longer_open() -> None:
    host = paired_host()
    session(host)
    old = host.send(GetStatus(host.request_id()))
    host.receive()
    host.hello()
    host.send_payload(old)
    assert host.receive() == []
    assert host.core.link.auth_failures == 1


def test_pair_is_refused_unless_the_technician_turned_the_switch() -> None:
    clock = FakeClock()
    host = AuthHost(create_device("cs-1", clock=clock, seed=7), clock, None)
    host.hello()
    host.send(Pair(3, new_pairing_key()))
    assert host.receive() == [Reply(3, ErrorCode.NOT_PAIRING)]
    assert host.core.link.pairing_key is None


def test_pairing_mode_takes_one_key_then_turns_itself_off() -> None:
    clock = FakeClock()
    core = create_device("cs-1", clock=clock, seed=7, pairing_mode=True)
    host = AuthHost(core, clock, new_pairing_key())
    host.hello()
    assert host.key is not None
    host.send(Pair(3, host.key))
    host.send(Pair(3, host.key))
    host.send(Pair(4, new_pairing_key()))
    assert host.receive() == [
        Reply(3, ErrorCode.OK),
        Reply(3, ErrorCode.OK),
        Reply(4, ErrorCode.NOT_PAIRING),
    ]
    assert core.link.pairing_key == host.key and not core.link.pairing_mode
    session(host)


def test_a_paired_device_can_be_paired_again_only_at_the_switch() -> None:
    host = paired_host()
    session(host)
    new_key = new_pairing_key()
    host.send(Pair(host.request_id(), new_key))
    assert [reply.result for reply in host.receive()] == [ErrorCode.NOT_PAIRING]
    host.core.set_pairing_mode(True)
    host.send(Pair(host.request_id(), new_key))
    assert [reply.result for reply in host.receive()] == [ErrorCode.OK]
    host.key = new_key
    host.authenticate()


def test_a_repeated_challenge_gets_the_same_session_sealed_anew() -> None:
    host = paired_host()
    response, _ = host.authenticate()
    assert host.auth is not None
    host.send(AuthChallenge(host.next_request_id - 1, bytes(16)), seal=False)
    again, *_replayed_events = host.receive()
    assert again == response
    assert host.auth.received == 4
