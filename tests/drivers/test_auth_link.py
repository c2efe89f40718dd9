"""The host link with a key store: paired devices are authenticated, everything else refused.

Two kinds of device on the other end: the simulator over every transport
(the right key, the wrong key, no key, a re-paired device after an unplug),
and a scripted peer that seals frames by hand so a test can put on the wire
what no honest device sends: a forged frame with a good CRC, a replayed
one, an unsealed one, an AUTH_RESPONSE that contradicts the HELLO.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from support.driver_testing import (
    FIRMWARE_HASH,
    QUIET,
    TRANSPORTS,
    WAIT_S,
    ScriptedPeer,
    attach_simulator,
    hello,
    next_of,
)

from cardshoe.drivers.device import ShoeDevice, open_device
from cardshoe.drivers.errors import AuthenticationFailed, CommandRefused
from cardshoe.drivers.link import LinkTiming
from cardshoe.drivers.link_events import AuthFailure, LinkLost, LinkRestored
from cardshoe.drivers.protocol.auth import (
    AuthError,
    Direction,
    LinkAuth,
    LinkKey,
    is_sealed,
    new_nonce,
    new_pairing_key,
)
from cardshoe.drivers.protocol.cardid import CardId, CardSuit
from cardshoe.drivers.protocol.error_codes import ErrorCode
from cardshoe.drivers.protocol.framing import encode_frame
from cardshoe.drivers.protocol.message_codec import encode_message
from cardshoe.drivers.protocol.messages import (
    Ack,
    AuthChallenge,
    AuthResponse,
    Capability,
    CardRead,
    GetInfo,
    Message,
    Orientation,
    Reply,
    SelfTestResult,
    SensorFlag,
)
from cardshoe.firmware_sim.devices import create_device

SERIAL = "PEER1"


def keys_for(serial: str, key: bytes | None) -> Any:
    """A key store holding at most one key, as the host's key files would."""
    return {serial: None if key is None else LinkKey(key)}.get


# --- against the simulator ----------------------------------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_right_key_authenticates_and_cards_flow_sealed(transport: str) -> None:
    key = new_pairing_key()
    core = create_device("cs-1", seed=5, pairing_key=key)
    with (
        attach_simulator(transport, core) as attached,
        attached.open(keys=keys_for(core.serial_number, key)) as device,
    ):
        assert isinstance(device, ShoeDevice)
        info = device.info
        assert info.authenticated and Capability.AUTH_REQUIRED in info.capabilities
        assert info.protocol_version == "1.3"
        next_of(device, SelfTestResult)
        device.release_one()
        assert core.pull_card()
        card = next_of(device, CardRead)
        assert card.card == core.shoe.dealt[0]
        assert device.get_status().cards_dealt == 1
        assert device.info.counters["auth_failures"] == 0
        assert core.link.auth_failures == 0


def test_the_wrong_key_is_refused_at_the_handshake() -> None:
    core = create_device("cs-1", pairing_key=new_pairing_key())
    with (
        attach_simulator("pty", core) as attached,
        pytest.raises(AuthenticationFailed, match="did not prove it holds") as refused,
    ):
        attached.open(keys=keys_for(core.serial_number, new_pairing_key()))
    assert core.serial_number in str(refused.value)
    assert "\n" not in str(refused.value)


def test_a_paired_device_with_no_key_here_is_refused() -> None:
    core = create_device("cs-1", pairing_key=new_pairing_key())
    with (
        attach_simulator("pty", core) as attached,
        pytest.raises(AuthenticationFailed, match="holds no pairing key"),
    ):
        attached.open(keys=keys_for("SOMEONE-ELSE", new_pairing_key()))


def test_an_unpaired_device_is_refused_where_this_host_holds_its_key() -> None:
    core = create_device("cs-1")
    with (
        attach_simulator("pty", core) as attached,
        pytest.raises(AuthenticationFailed, match="does not ask for authentication"),
    ):
        attached.open(keys=keys_for(core.serial_number, new_pairing_key()))


def test_an_unpaired_device_with_no_key_here_works_as_in_1_0() -> None:
    core = create_device("cs-1", seed=5)
    with (
        attach_simulator("pty", core) as attached,
        attached.open(keys=keys_for("SOMEONE-ELSE", new_pairing_key())) as device,
    ):
        assert not device.info.authenticated
        next_of(device, SelfTestResult)


def test_without_a_key_store_a_paired_device_answers_nothing_but_the_handshake() -> None:
    core = create_device("cs-1", pairing_key=new_pairing_key())
    with attach_simulator("pty", core) as attached, attached.open() as device:
        assert not device.info.authenticated
        with pytest.raises(CommandRefused, match="AUTH_REQUIRED"):
            device.get_status()
        assert device.next_event(0.3) is None


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_an_unplug_ends_in_a_new_authenticated_session_and_no_card_is_lost(
    transport: str,
) -> None:
    key = new_pairing_key()
    core = create_device("cs-1", seed=5, pairing_key=key)
    timing = LinkTiming(backoff_initial_s=0.05, backoff_max_s=0.1)
    with (
        attach_simulator(transport, core) as attached,
        attached.open(keys=keys_for(core.serial_number, key), timing=timing) as device,
    ):
        assert isinstance(device, ShoeDevice)
        next_of(device, SelfTestResult)
        device.release_one()
        assert core.pull_card()
        core.unplug()
        seen: list[object] = []
        while not (
            any(isinstance(item, LinkRestored) for item in seen) and CardRead in map(type, seen)
        ):
            event = device.next_event(WAIT_S)
            assert event is not None, f"stalled after {seen}"
            if isinstance(event, LinkLost):
                core.replug()
            seen.append(event)
        assert device.info.authenticated
        (card,) = [item for item in seen if isinstance(item, CardRead)]
        assert card.card == core.shoe.dealt[0]
        device.ack(card.seq)
        after_restart = device.next_event(WAIT_S)
        assert isinstance(after_restart, SelfTestResult) and after_restart.seq == card.seq + 1
        assert device.info.counters["auth_failures"] == core.link.auth_failures == 0


def test_a_device_re_paired_with_another_key_while_unplugged_is_an_alarm() -> None:
    key = new_pairing_key()
    core = create_device("cs-1", seed=5, pairing_key=key)
    timing = LinkTiming(backoff_initial_s=0.05, backoff_max_s=0.1)
    with (
        attach_simulator("pty", core) as attached,
        attached.open(keys=keys_for(core.serial_number, key), timing=timing) as device,
    ):
        next_of(device, SelfTestResult)
        core.unplug()
        assert isinstance(device.next_event(WAIT_S), LinkLost)
        core.link.pairing_key = new_pairing_key()
        core.replug()
        failure = device.next_event(WAIT_S)
        assert isinstance(failure, AuthFailure)
        assert "did not prove it holds" in failure.reason
        assert not device.connected


def test_pair_needs_the_switch_and_then_the_new_key_authenticates() -> None:
    core = create_device("cs-1", seed=5)
    key = new_pairing_key()
    with attach_simulator("pty", core) as attached:
        with attached.open(reconnect=False) as device:
            with pytest.raises(CommandRefused, match="NOT_PAIRING"):
                device.pair(key)
            core.set_pairing_mode(True)
            device.pair(key)
        assert core.link.pairing_key == key
        with attached.open(keys=keys_for(core.serial_number, key)) as device:
            assert device.info.authenticated


# --- against a scripted peer that seals by hand ----------------------------------------


class SealingPeer(ScriptedPeer):
    """The scripted pty peer, sealing what it sends and opening what it receives once a
    session is up; frames of the host that fail to open are kept in `refused`."""

    def __init__(self, key: bytes) -> None:
        self.key = key
        self.auth: LinkAuth | None = None
        self.refused: list[str] = []
        super().__init__()

    def _take(self, payload: bytes) -> None:
        if is_sealed(payload) and self.auth is not None:
            try:
                payload = self.auth.open(payload)
            except AuthError as exc:
                self.refused.append(str(exc))
                return
        super()._take(payload)

    def sealed(self, message: Message) -> bytes:
        assert self.auth is not None
        return self.auth.seal(encode_message(message))

    def send_payload(self, payload: bytes) -> None:
        self.send_raw(encode_frame(payload))

    def send_sealed(self, message: Message) -> bytes:
        payload = self.sealed(message)
        self.send_payload(payload)
        return payload

    def connect_paired(self, host_key: bytes, **response_changes: Any) -> ShoeDevice:
        with ThreadPoolExecutor(1, thread_name_prefix="test-open") as pool:
            opening = pool.submit(
                open_device,
                self.path,
                timeout=WAIT_S,
                reconnect=False,
                timing=QUIET,
                keys=keys_for(SERIAL, host_key),
            )
            request = self.expect(GetInfo)
            capabilities = Capability.GATE | Capability.AUTH_REQUIRED
            self.send(hello(request.request_id, protocol_minor=1, capabilities=capabilities))
            challenge = self.expect(AuthChallenge)
            device_nonce = new_nonce()
            self.auth = LinkAuth.start(
                self.key, challenge.host_nonce, device_nonce, SERIAL, sends=Direction.DEVICE_TO_HOST
            )
            response = {"device_nonce": device_nonce, "firmware_hash": FIRMWARE_HASH}
            self.send_sealed(AuthResponse(challenge.request_id, **(response | response_changes)))
            device = opening.result(timeout=WAIT_S)
        assert isinstance(device, ShoeDevice)
        return device


def card(seq: int, rank: int = 1) -> CardRead:
    return CardRead(
        seq=seq,
        device_time_ms=1000 + seq,
        card_code=CardId(rank, CardSuit.SPADES, 0x00BC614E, 1).encode(),
        orientation=Orientation.FACE_DOWN,
        flags=SensorFlag(0),
        feed_group=0,
        feed_size=1,
    )


@pytest.fixture
def peer() -> Iterator[SealingPeer]:
    peer = SealingPeer(new_pairing_key())
    yield peer
    peer.unplug()


def test_the_host_seals_every_frame_after_the_handshake(peer: SealingPeer) -> None:
    with peer.connect_paired(peer.key) as device:
        assert device.info.authenticated
        peer.send_sealed(card(1))
        assert next_of(device, CardRead) == card(1)
        assert peer.expect(Ack) == Ack(1)
        assert peer.auth is not None and peer.auth.received == 1
        assert peer.refused == []


def test_a_forged_frame_with_a_good_crc_is_dropped_and_raises_an_alarm(peer: SealingPeer) -> None:
    with peer.connect_paired(peer.key) as device:
        assert peer.auth is not None
        forger = LinkAuth(bytes(32), Direction.DEVICE_TO_HOST, sent=peer.auth.sent)
        peer.send_payload(forger.seal(encode_message(card(1, rank=9))))
        alarm = device.next_event(WAIT_S)
        assert isinstance(alarm, AuthFailure) and "tag does not match" in alarm.reason
        peer.send_sealed(card(1))
        assert device.next_event(WAIT_S) == card(1)
        assert device.info.counters["auth_failures"] == 1


def test_a_replayed_frame_is_dropped_and_raises_an_alarm(peer: SealingPeer) -> None:
    with peer.connect_paired(peer.key) as device:
        first = peer.send_sealed(card(1))
        assert next_of(device, CardRead) == card(1)
        peer.expect(Ack)
        peer.send_payload(first)
        alarm = device.next_event(WAIT_S)
        assert isinstance(alarm, AuthFailure) and "replayed" in alarm.reason
        assert device.next_event(0.3) is None
        assert device.info.counters["duplicates"] == 0
        assert peer.received_now() == []


def test_an_unsealed_frame_on_an_authenticated_link_is_dropped(peer: SealingPeer) -> None:
    with peer.connect_paired(peer.key) as device:
        peer.send(card(1))
        alarm = device.next_event(WAIT_S)
        assert isinstance(alarm, AuthFailure) and "unsealed" in alarm.reason
        assert device.next_event(0.3) is None


def test_the_same_bad_frame_again_and_again_is_one_alarm_but_every_drop_counts(
    peer: SealingPeer,
) -> None:
    with peer.connect_paired(peer.key) as device:
        forged = LinkAuth(bytes(32), Direction.DEVICE_TO_HOST).seal(encode_message(card(1)))
        for _ in range(3):
            peer.send_payload(forged)
        assert isinstance(device.next_event(WAIT_S), AuthFailure)
        assert device.next_event(0.3) is None
        assert device.info.counters["auth_failures"] == 3


def test_a_response_under_another_key_refuses_the_device(peer: SealingPeer) -> None:
    with pytest.raises(AuthenticationFailed, match="did not prove it holds"):
        peer.connect_paired(new_pairing_key())


def test_a_response_that_contradicts_the_hello_refuses_the_device(peer: SealingPeer) -> None:
    with pytest.raises(AuthenticationFailed, match="altered on the wire"):
        peer.connect_paired(peer.key, firmware_hash=bytes(32))


def test_a_refused_challenge_refuses_the_device(peer: SealingPeer) -> None:
    with ThreadPoolExecutor(1, thread_name_prefix="test-open") as pool:
        opening = pool.submit(
            open_device,
            peer.path,
            timeout=WAIT_S,
            reconnect=False,
            timing=QUIET,
            keys=keys_for(SERIAL, peer.key),
        )
        request = peer.expect(GetInfo)
        peer.send(
            hello(request.request_id, protocol_minor=1, capabilities=Capability.AUTH_REQUIRED)
        )
        challenge = peer.expect(AuthChallenge)
        peer.send(Reply(challenge.request_id, ErrorCode.UNSUPPORTED))
        with pytest.raises(AuthenticationFailed, match="refused authentication"):
            opening.result(timeout=WAIT_S)


def test_resets_raced_by_the_restart_hello_all_end_in_one_authenticated_session() -> None:
    """After RESET the device restarts and says HELLO unasked while the host is already
    handshaking again; the supervisor's own handshake must wait for that one to finish,
    not cut its challenge short (the device would then hold one session, the host
    another, and every frame after would fail authentication)."""
    key = new_pairing_key()
    core = create_device("cs-1", seed=5, pairing_key=key)
    timing = LinkTiming(supervise_tick_s=0.005)
    with (
        attach_simulator("pty", core) as attached,
        attached.open(keys=keys_for(core.serial_number, key), timing=timing) as device,
    ):
        for _ in range(12):
            device.reset()
            assert device.get_status() is not None
        assert device.info.authenticated
        assert device.info.counters["auth_failures"] == core.link.auth_failures == 0
