"""The link's reader thread: every frame as it arrives, admitted, decoded and dispatched.

A mixin of Link (link.py), apart because it is one job, the one thread that
reads the transport: it cuts frames, admits each one on an authenticated
link (opened if sealed, or dropped and reported: link_auth.admission
decides), decodes it, and hands an event to the stream's seq rules or an
answer to the waiting command. Bad frames and undecodable payloads are
counted and logged, never raised. It runs for every frame, so it does no
more per frame than it must.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from cardshoe.drivers.api.events import AuthFailure, ProtocolViolation
from cardshoe.drivers.errors import AuthenticationFailed, DeviceGone, LinkProtocolError
from cardshoe.drivers.link_auth import Admit, admission
from cardshoe.drivers.link_handshake import LinkHandshake
from cardshoe.drivers.link_supervision import LinkState
from cardshoe.drivers.protocol.auth import AuthError, Direction, LinkAuth, unsealed
from cardshoe.drivers.protocol.errors import MessageError, UnsupportedVersion
from cardshoe.drivers.protocol.link_constants import PROTOCOL_MAJOR
from cardshoe.drivers.protocol.message_codec import LAYOUTS, decode_message
from cardshoe.drivers.protocol.messages import (
    Answer,
    AuthResponse,
    Event,
    GetInfo,
    Hello,
    MessageType,
)
from cardshoe.drivers.transports.base import Transport

if TYPE_CHECKING:
    import threading

log = logging.getLogger("cardshoe.drivers.link")  # the link's own log: one logger per device link


class LinkReader(LinkHandshake):
    """Link's reader thread; the state it works on is the Link's (see Link.__init__)."""

    _rehandshake_wanted: bool
    _last_bad_payload: bytes | None
    _last_rejected: bytes | None

    if TYPE_CHECKING:
        # Link's own.
        def _send_ack(self, seq: int) -> None: ...

    def _read_loop(self, transport: Transport, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                data = transport.read()
            except DeviceGone as exc:
                if not stop.is_set():
                    self._mark_failed(str(exc))
                return
            for payload in self._decoder.feed(data) if data else ():
                self._dispatch(payload)

    def _dispatch(self, payload: bytes) -> None:
        with self._cond:
            admitted = self._admit(payload)
        if admitted is None:
            return
        payload = admitted
        self._last_rx = time.monotonic()
        try:
            message = decode_message(payload)
        except MessageError as exc:
            self._on_undecodable(payload, exc)
            return
        resend: int | None = None
        with self._cond:
            if isinstance(message, Event):
                if self._state is LinkState.UP and self._stream.classify(message):
                    resend = self._stream.position.acked
                self._cond.notify_all()
            elif isinstance(message, Answer):
                resend = self._on_answer(message)
            else:
                self.counters.undecodable += 1
                log.warning("%s: dropped a host message from the device: %r", self.url, message)
        if resend is not None:
            self._send_ack(resend)

    def _admit(self, payload: bytes) -> bytes | None:
        """The payload to decode, opened if sealed; None when it is dropped (lock held).

        Without a key store every payload goes on, as in protocol 1.0. With one,
        an unsealed frame goes on only from an unpaired device, or if it is a
        HELLO, or the refusal of our AUTH_CHALLENGE; and a sealed frame only if
        it opens. A frame that fails in an authenticated session is an alarm;
        one that comes between sessions (a previous session's last frames) is
        only counted.
        """
        if self._keys is None:
            return payload
        decided = admission(
            payload,
            device_keyed=self._key is not None,
            in_session=self._auth is not None,
            challenging=self._challenge is not None,
        )
        if decided.action is Admit.PASS:
            return payload
        if decided.action is Admit.OPEN and self._auth is not None:
            try:
                return self._auth.open(payload)
            except AuthError as exc:
                self._reject(payload, str(exc))
                return None
        if decided.action is Admit.OPEN_RESPONSE and self._challenge is not None:
            return self._open_response(payload, *self._challenge)
        if decided.action is Admit.REJECT:
            self._reject(payload, decided.reason)
        else:
            self._drop_between_sessions(decided.reason)
        return None

    def _open_response(
        self, payload: bytes, host_nonce: bytes, hello: Hello, key: bytes
    ) -> bytes | None:
        """Open what should be the sealed AUTH_RESPONSE: the session key needs its nonce."""
        try:
            response = decode_message(unsealed(payload))
        except (AuthError, MessageError):
            self._drop_between_sessions("an unreadable sealed frame during the handshake")
            return None
        if not isinstance(response, AuthResponse):
            self._drop_between_sessions("a sealed frame before AUTH_RESPONSE")
            return None
        auth = LinkAuth.start(
            key,
            host_nonce,
            response.device_nonce,
            hello.serial_number,
            sends=Direction.HOST_TO_DEVICE,
        )
        try:
            opened = auth.open(payload)
        except AuthError as exc:
            self.counters.auth_failures += 1
            if self._pending is not None:
                self._pending.fail(
                    AuthenticationFailed(
                        f"device {hello.serial_number!r} at {self.url} did not prove it holds "
                        f"this host's pairing key ({exc}): paired with another key, or a spoof; "
                        "pair it again if it is ours"
                    )
                )
            return None
        self._auth = auth
        return opened

    def _reject(self, payload: bytes, reason: str) -> None:
        """Drop a frame that failed authentication and raise the alarm once per payload."""
        self.counters.auth_failures += 1
        log.error("%s: dropped a frame that failed authentication: %s", self.url, reason)
        if payload == self._last_rejected:
            return None
        self._last_rejected = payload
        self._stream.queue.append(AuthFailure(f"a frame failed authentication: {reason}"))
        self._cond.notify_all()
        return None

    def _drop_between_sessions(self, reason: str) -> None:
        self.counters.auth_failures += 1
        log.info("%s: dropped %s", self.url, reason)

    def _on_answer(self, answer: Answer) -> int | None:
        pending = self._pending
        if isinstance(answer, Hello) and answer.request_id == 0:
            if self._state is LinkState.UP:
                log.info("%s: unsolicited HELLO, the device restarted its session", self.url)
                self._rehandshake_wanted = True
            return None
        if pending is None or answer.request_id != pending.command.request_id:
            self.counters.unmatched_answers += 1
            log.debug("%s: answer to no waiting command: %r", self.url, answer)
            return None
        resend = None
        if isinstance(answer, Hello) and isinstance(pending.command, GetInfo):
            if self._authenticates(answer):
                pending.complete(answer)
                return None
            error, resend = self._adopt_hello(answer)
        elif isinstance(answer, AuthResponse) and self._challenge is not None:
            error, resend = self._adopt_authenticated(answer, self._challenge[1])
        else:
            error = None
        if error is not None:
            pending.fail(error)
            return None
        pending.complete(answer)
        return resend

    def _on_undecodable(self, payload: bytes, exc: MessageError) -> None:
        with self._cond:
            self.counters.undecodable += 1
            pending = self._pending
            if (
                isinstance(exc, UnsupportedVersion)
                and exc.message_type == MessageType.HELLO
                and pending is not None
                and isinstance(pending.command, GetInfo)
            ):
                pending.fail(
                    LinkProtocolError(
                        f"{self.url} speaks protocol {exc.major}.x, "
                        f"this host speaks {PROTOCOL_MAJOR}.x"
                    )
                )
            log.warning("%s: undecodable payload (%s): %s", self.url, exc, payload.hex())
            if payload == self._last_bad_payload:
                return
            self._last_bad_payload = payload
            self._stream.queue.append(
                ProtocolViolation(f"undecodable message: {exc}", _event_tag(exc))
            )
            self._cond.notify_all()

    def _mark_failed(self, reason: str) -> None:
        """The transport failed: wake the waiting command; the supervisor does the rest."""
        with self._cond:
            self._reader_error = reason
            pending = self._pending
            self._cond.notify_all()
        if pending is not None:
            pending.fail(DeviceGone(f"the link to {self.url} went down: {reason}"))


_EVENT_TYPES = frozenset(layout.type for layout in LAYOUTS if issubclass(layout.cls, Event))


def _event_tag(exc: MessageError) -> int | None:
    """The seq of an undecodable device event, when its header was readable."""
    return exc.tag if exc.message_type in _EVENT_TYPES else None
