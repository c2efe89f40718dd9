"""The link's handshake: connecting a transport, GET_INFO, the challenge, adopting a HELLO.

A mixin of Link (link.py), apart because it is one job: taking a device's
identity and stream position at the start of each session, on the first
connection and every reconnection, and proving with the pairing key that
the device is the one paired (protocol 1.1). `_handshake` holds the command
lock across the whole of it (GET_INFO, then AUTH_CHALLENGE): a second
handshake begun between the two, as the supervisor starts on a restart
HELLO, would replace the challenge the device is answering and leave it and
this host in different sessions. The decisions (whom to challenge, whether
an AUTH_RESPONSE vouches for its HELLO, what a HELLO does to the stream
position) are link_auth.py's and link_sequencing.py's, pure; this module
carries them out on the Link's state, under its lock.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from cardshoe.drivers import link_sequencing as sequencing
from cardshoe.drivers.errors import (
    AuthenticationFailed,
    CommandRefused,
    DriverError,
    LinkProtocolError,
)
from cardshoe.drivers.link_auth import key_to_challenge_with, vouching_error
from cardshoe.drivers.link_commands import PendingCommand
from cardshoe.drivers.link_events import LinkRestored
from cardshoe.drivers.link_stream import EventStream, LinkCounters
from cardshoe.drivers.link_supervision import LinkState
from cardshoe.drivers.protocol.auth import KeyLookup, LinkAuth, LinkKey, new_nonce
from cardshoe.drivers.protocol.error_codes import ErrorCode
from cardshoe.drivers.protocol.framing import DELIMITER, FrameDecoder
from cardshoe.drivers.protocol.link_constants import PROTOCOL_MAJOR, PROTOCOL_MINOR
from cardshoe.drivers.protocol.messages import (
    Answer,
    AuthChallenge,
    AuthResponse,
    Capability,
    Command,
    GetInfo,
    Hello,
    Reply,
)
from cardshoe.drivers.transports.base import Transport


class LinkHandshake:
    """Link's handshake; the state it works on is the Link's (see Link.__init__)."""

    url: str
    counters: LinkCounters
    _stream: EventStream
    _connect_transport: Callable[[], Transport]
    _decoder: FrameDecoder
    _cond: threading.Condition
    _command_lock: threading.RLock
    _state: LinkState
    _transport: Transport | None
    _reader: threading.Thread | None
    _reader_stop: threading.Event
    _reader_error: str | None
    _pending: PendingCommand | None
    _hello: Hello | None
    _lost: bool
    _reported_failures: set[str]
    _last_rx: float
    _keys: KeyLookup | None
    _key: LinkKey | None
    _key_looked_up: bool
    _auth: LinkAuth | None
    _challenge: tuple[bytes, Hello, bytes] | None

    if TYPE_CHECKING:
        # Link's own, and the reader's (link_reader.py).
        def _read_loop(self, transport: Transport, stop: threading.Event) -> None: ...
        def _write(self, data: bytes) -> None: ...
        def _exchange(self, build: Callable[[int], Command], attempts: int) -> Answer: ...
        def _drop_transport(self) -> None: ...

    def _connect(self, attempts: int) -> Hello:
        transport = self._connect_transport()
        stop = threading.Event()
        with self._cond:
            self._state = LinkState.CONNECTING
            self._transport = transport
            self._reader_stop = stop
            self._reader_error = None
            self._last_rx = time.monotonic()
        self._decoder.reset()
        self._reader = threading.Thread(
            target=self._read_loop,
            args=(transport, stop),
            name=f"cardshoe-link-reader {self.url}",
            daemon=True,
        )
        self._reader.start()
        try:
            self._write(DELIMITER)
            return self._handshake(attempts)
        except Exception:
            # A DriverError, or the key store's own error (an unusable key file).
            self._drop_transport()
            with self._cond:
                if self._state is LinkState.CONNECTING:
                    self._state = LinkState.DOWN
            raise

    def _handshake(self, attempts: int) -> Hello:
        with self._command_lock:
            return self._handshake_locked(attempts)

    def _handshake_locked(self, attempts: int) -> Hello:
        with self._cond:
            self._auth = None
            self._challenge = None
        answer = self._exchange(lambda request_id: GetInfo(request_id, PROTOCOL_MINOR), attempts)
        if isinstance(answer, Reply):
            if answer.result is ErrorCode.VERSION_MISMATCH:
                raise LinkProtocolError(
                    f"{self.url} does not speak protocol {PROTOCOL_MAJOR}.x (VERSION_MISMATCH)"
                )
            raise CommandRefused("GET_INFO", answer.result)
        if not isinstance(answer, Hello):
            raise LinkProtocolError(f"{self.url} answered GET_INFO with {type(answer).__name__}")
        if self._keys is not None:
            self._authenticate(answer, attempts, self._keys)
        return answer

    def _authenticate(self, hello: Hello, attempts: int, keys: KeyLookup) -> None:
        """Prove the device holds the pairing key this host holds for it, or refuse it."""
        if not self._key_looked_up:
            self._key = keys(hello.serial_number)
            self._key_looked_up = True
        key = key_to_challenge_with(hello, self._key, self.url)
        if key is None:
            return
        device = f"device {hello.serial_number!r} at {self.url}"
        host_nonce = new_nonce()
        with self._cond:
            self._challenge = (host_nonce, hello, key.secret)
        answer = self._exchange(lambda request_id: AuthChallenge(request_id, host_nonce), attempts)
        if isinstance(answer, Reply):
            raise AuthenticationFailed(f"{device} refused authentication ({answer.result.name})")
        if not isinstance(answer, AuthResponse):
            raise LinkProtocolError(
                f"{self.url} answered AUTH_CHALLENGE with {type(answer).__name__}"
            )

    def _adopt_hello(self, hello: Hello) -> tuple[DriverError | None, int | None]:
        """Take a HELLO answering our GET_INFO (reader thread, lock held).

        Returns an error if another device answered, and the seq to
        acknowledge again if the device lost our last ACK.
        """
        previous = self._hello
        if previous is not None and (previous.serial_number, previous.device_kind) != (
            hello.serial_number,
            hello.device_kind,
        ):
            return (
                LinkProtocolError(
                    f"another device answered on {self.url}: {hello.device_kind.name} "
                    f"{hello.serial_number!r}, not {previous.device_kind.name} "
                    f"{previous.serial_number!r}"
                ),
                None,
            )
        self._hello = hello
        if previous is None and self._stream.epoch is None:
            self._stream.epoch = hello.epoch
        self._stream.position = sequencing.from_hello(
            self._stream.position, hello.last_acked_seq, hello.next_seq, first=previous is None
        )
        self._stream.verify_beyond()
        if self._lost:
            self._lost = False
            self.counters.reconnects += 1
            self._stream.queue.append(LinkRestored(hello))
        self._check_position()
        if self._state is not LinkState.GONE:
            self._state = LinkState.UP
        self._reported_failures.clear()
        self._cond.notify_all()
        return None, sequencing.ack_to_repeat(self._stream.position)

    def _check_position(self) -> None:
        """Queue a gap or regression if the device's stream and ours disagree (lock held)."""
        self._stream.check_position(None if self._hello is None else self._hello.epoch)
        self._cond.notify_all()

    def _authenticates(self, hello: Hello) -> bool:
        """Whether this HELLO waits for AUTH_RESPONSE before it is taken (lock held)."""
        if self._keys is None:
            return False
        return self._key is not None or Capability.AUTH_REQUIRED in hello.capabilities

    def _adopt_authenticated(
        self, response: AuthResponse, hello: Hello
    ) -> tuple[DriverError | None, int | None]:
        """Take the HELLO the device has just vouched for with its key (lock held)."""
        self._challenge = None
        error = vouching_error(response, hello, self.url)
        if error is not None:
            return error, None
        return self._adopt_hello(hello)
