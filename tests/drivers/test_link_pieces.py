"""The pieces carved out of the link (issue #19, item 3), each alone: the supervisor's
decisions and backoff, the command exchange, and the authentication decisions. The link
as a whole is tested by the contract suites over real transports."""

from __future__ import annotations

from dataclasses import replace

import pytest
from support.driver_testing import hello

from cardshoe.drivers.errors import (
    AuthenticationFailed,
    DeviceGone,
    DeviceTimeout,
    ProtocolDowngrade,
)
from cardshoe.drivers.link_auth import (
    Admission,
    Admit,
    admission,
    key_to_challenge_with,
    vouching_error,
)
from cardshoe.drivers.link_commands import PendingCommand, exchange, next_request_id
from cardshoe.drivers.link_supervision import Backoff, Observed, Watch, watch
from cardshoe.drivers.protocol.auth import Direction, LinkAuth, LinkKey
from cardshoe.drivers.protocol.message_codec import encode_message, hello_digest
from cardshoe.drivers.protocol.messages import (
    AuthResponse,
    Capability,
    Command,
    ErrorCode,
    GetStatus,
    Reply,
)

URL = "/dev/ttyUSB0"


@pytest.mark.parametrize(
    ("observed", "expected"),
    [
        (Observed("unplugged", 0.0, 0.0, True), (Watch.LOSE, "unplugged")),
        (Observed(None, 3.5, 0.0, True), (Watch.LOSE, "no frame from the device for 3.5 s")),
        (Observed(None, 1.0, 1.0, True), (Watch.REHANDSHAKE, "")),
        (Observed(None, 1.0, 1.0, False), (Watch.KEEPALIVE, "")),
        (Observed(None, 0.2, 0.2, False), (Watch.WAIT, "")),
    ],
)
def test_the_supervisor_loses_rehandshakes_polls_or_waits(
    observed: Observed, expected: tuple[Watch, str]
) -> None:
    assert watch(observed, link_down_after_s=3.0, poll_interval_s=1.0) == expected


def test_reconnection_backs_off_doubling_to_its_ceiling_and_starts_over_once_up() -> None:
    backoff = Backoff(0.1, 0.35)
    assert backoff.due(0.0)
    waits = []
    for now in range(5):
        backoff = backoff.failed(float(now))
        waits.append(backoff.next_at - now)
        assert not backoff.due(float(now)) and backoff.due(now + backoff.wait_s)
    assert waits == pytest.approx([0.1, 0.2, 0.35, 0.35, 0.35])
    assert backoff.reset() == Backoff(0.1, 0.35)


def test_request_ids_run_from_one_to_ffff_and_wrap_past_zero() -> None:
    assert [next_request_id(n) for n in (0, 1, 0xFFFE, 0xFFFF)] == [1, 2, 0xFFFF, 1]


def test_a_command_is_sent_again_until_answered_and_times_out_after_its_attempts() -> None:
    pending = PendingCommand(GetStatus(7))
    sent: list[Command] = []
    resends: list[int] = []

    def send(command: Command) -> None:
        sent.append(command)
        if len(sent) == 3:  # the device answers the third copy
            pending.complete(Reply(7, ErrorCode.OK))

    answer = exchange(
        pending,
        send,
        attempts=4,
        reply_timeout_s=0.02,
        resending=lambda: resends.append(1),
        url=URL,
    )
    assert answer == Reply(7, ErrorCode.OK)
    assert sent == [GetStatus(7)] * 3 and len(resends) == 2

    silent = PendingCommand(GetStatus(8))
    with pytest.raises(DeviceTimeout, match=r"/dev/ttyUSB0 did not answer GetStatus \(2 tries\)"):
        exchange(
            silent,
            lambda _: None,
            attempts=2,
            reply_timeout_s=0.01,
            resending=lambda: None,
            url=URL,
        )

    failed = PendingCommand(GetStatus(9))
    failed.fail(DeviceGone("unplugged"))
    with pytest.raises(DeviceGone, match="unplugged"):
        exchange(
            failed, lambda _: None, attempts=3, reply_timeout_s=1.0, resending=lambda: None, url=URL
        )


def unanswered(pending: PendingCommand, *, attempts: int, reply_timeout_s: float) -> None:
    """An exchange with a device that answers nothing."""
    exchange(
        pending,
        lambda _: None,
        attempts=attempts,
        reply_timeout_s=reply_timeout_s,
        resending=lambda: None,
        url=URL,
    )


PAIRED = hello(0, protocol_minor=3, capabilities=Capability.GATE | Capability.AUTH_REQUIRED)
KEY = LinkKey(bytes(range(32)), 2)


def test_which_devices_are_challenged_and_which_refused() -> None:
    unpaired = hello(0, protocol_minor=3)
    assert key_to_challenge_with(unpaired, None, URL) is None
    assert key_to_challenge_with(PAIRED, KEY, URL) is KEY
    with pytest.raises(AuthenticationFailed, match="is paired but this host holds no"):
        key_to_challenge_with(PAIRED, None, URL)
    with pytest.raises(AuthenticationFailed, match="does not ask for authentication"):
        key_to_challenge_with(unpaired, KEY, URL)
    with pytest.raises(ProtocolDowngrade, match=r"answers in protocol 1\.1, below the 1\.2"):
        key_to_challenge_with(replace(PAIRED, protocol_minor=1), KEY, URL)


def test_what_becomes_of_each_frame_on_a_keyed_link() -> None:
    hello_frame = encode_message(PAIRED)
    refusal = encode_message(Reply(3, ErrorCode.AUTH_REQUIRED))
    status = encode_message(GetStatus(4))
    auth = LinkAuth.start(KEY.secret, bytes(16), bytes(16), "PEER1", sends=Direction.DEVICE_TO_HOST)
    sealed = auth.seal(status)

    def admit(payload: bytes, keyed: bool, session: bool, challenging: bool) -> Admission:
        return admission(payload, device_keyed=keyed, in_session=session, challenging=challenging)

    assert admit(status, False, False, False).action is Admit.PASS
    assert admit(hello_frame, True, True, False).action is Admit.PASS
    assert admit(sealed, True, True, False).action is Admit.OPEN
    assert admit(sealed, True, False, True).action is Admit.OPEN_RESPONSE
    assert admit(refusal, True, False, True).action is Admit.PASS
    assert admit(status, True, True, False) == Admission(
        Admit.REJECT, "an unsealed frame on an authenticated link"
    )
    assert admit(sealed, True, False, False) == Admission(
        Admit.DROP, "a sealed frame outside a session"
    )
    assert admit(status, True, False, True) == Admission(
        Admit.DROP, "an unsealed frame before authentication"
    )


def test_an_auth_response_must_vouch_for_the_hello_it_follows() -> None:
    vouched = AuthResponse(1, bytes(16), PAIRED.firmware_hash, hello_digest(PAIRED))
    assert vouching_error(vouched, PAIRED, URL) is None
    other_firmware = replace(vouched, firmware_hash=bytes(32))
    assert "altered on the wire" in str(vouching_error(other_firmware, PAIRED, URL))
    silent = replace(vouched, hello_digest=None)
    assert "did not vouch for its HELLO" in str(vouching_error(silent, PAIRED, URL))
    assert vouching_error(silent, replace(PAIRED, protocol_minor=1), URL) is None
    altered = replace(PAIRED, next_seq=99)
    assert "is not the one the device vouched for" in str(vouching_error(vouched, altered, URL))
