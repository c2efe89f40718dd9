"""The device API the controller calls: typed commands and ordered event delivery.

open_device(url) connects over whichever transport the URL names, performs
the GET_INFO handshake and returns a ShoeDevice (manual shoe) or a
DealerDevice (automatic shuffler-dealer), chosen by the kind the device
reports. Events arrive in seq order through next_event(), events() or
on_event(), interleaved with the driver's own events (LinkLost,
SequenceGap, ...). Nothing is acknowledged until the controller calls
ack(seq) after its journal commit. A refused command raises CommandRefused
carrying the device's ErrorCode; other failures are the exceptions of
errors.py.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from types import TracebackType
from typing import Any, Self, TypeVar

from cardshoe.drivers.api.device_link import deliver_on_thread, events_until_quiet
from cardshoe.drivers.errors import CommandRefused, DeviceTimeout, LinkProtocolError
from cardshoe.drivers.link import Link, LinkTiming
from cardshoe.drivers.link_events import DeviceEvent
from cardshoe.drivers.link_supervision import LinkState
from cardshoe.drivers.protocol.auth import KeyLookup
from cardshoe.drivers.protocol.error_codes import ErrorCode
from cardshoe.drivers.protocol.firmware_image import SignedImage
from cardshoe.drivers.protocol.link_constants import (
    FIRMWARE_CHUNK_SIZE,
    FIRMWARE_UPDATE_FROM_1_3,
    PROTOCOL_MAJOR,
)
from cardshoe.drivers.protocol.messages import (
    Answer,
    Capability,
    Command,
    DealNext,
    DeviceKind,
    FirmwareBegin,
    FirmwareChunk,
    FirmwareCommit,
    GateMode,
    GetStatus,
    Hello,
    Pair,
    Reply,
    Reset,
    ReturnCards,
    SelfTest,
    SelfTestResult,
    SetGate,
    Shuffle,
    Status,
)
from cardshoe.drivers.transports.registry import open_transport

log = logging.getLogger(__name__)

SELF_TEST_TIMEOUT_S = 30.0
"""How long self_test() waits for the device's SELF_TEST_RESULT after accepting the command."""


@dataclass(frozen=True)
class DeviceInfo:
    """What a technician and the journal need to know about the device on the link."""

    url: str
    model: str
    kind: DeviceKind
    serial_number: str
    firmware_version: str
    firmware_hash: bytes
    """SHA-256 of the running image, as the device reports it."""
    protocol_version: str
    """The negotiated version, "major.minor"."""
    capabilities: Capability
    epoch: int | None
    """The device's stream epoch (protocol 1.2), None from a 1.0/1.1 device."""
    stream_epoch: int | None
    """The epoch the host's acknowledged seqs count in: the journal's, until a re-sync."""
    authenticated: bool
    """The device proved it holds its pairing key in this session (protocol 1.1)."""
    counters: dict[str, int]
    """The event stream's position (last_acked_seq and next_seq on the device as far as
    the host knows, delivered_seq to the controller) and the link's frame and event counters."""

    def to_json(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "model": self.model,
            "kind": self.kind.name,
            "serial_number": self.serial_number,
            "firmware_version": self.firmware_version,
            "firmware_hash": self.firmware_hash.hex(),
            "protocol_version": self.protocol_version,
            "capabilities": [member.name for member in Capability if member in self.capabilities],
            "epoch": self.epoch,
            "stream_epoch": self.stream_epoch,
            "authenticated": self.authenticated,
            "counters": dict(self.counters),
        }


class Device:
    """Common to both kinds: identity, events, acknowledgement, status, self-test, reset."""

    def __init__(self, link: Link) -> None:
        self._link = link
        self._callback_thread: threading.Thread | None = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def info(self) -> DeviceInfo:
        """Identity from the latest handshake, with the counters as they stand now."""
        hello = self._link.hello
        return DeviceInfo(
            url=self._link.url,
            model=hello.model,
            kind=hello.device_kind,
            serial_number=hello.serial_number,
            firmware_version=hello.firmware_version,
            firmware_hash=hello.firmware_hash,
            protocol_version=f"{PROTOCOL_MAJOR}.{self._link.protocol_minor}",
            capabilities=hello.capabilities,
            epoch=hello.epoch,
            stream_epoch=self._link.stream_epoch,
            authenticated=self._link.authenticated,
            counters=self._link.counter_values(),
        )

    @property
    def protocol_minor(self) -> int:
        """The minor both ends speak: min(host minor, device minor); `shoectl pair` pins it."""
        return self._link.protocol_minor

    @property
    def connected(self) -> bool:
        """False while the link is down (reconnecting) or closed."""
        return self._link.state is LinkState.UP

    # --- events ----------------------------------------------------------------

    def set_journaled_seq(self, seq: int | None, epoch: int | None = None) -> None:
        """The highest seq the journal holds for this device (None: trust the device).

        Call it right after opening, with the journal's last seq for
        info.serial_number and the stream epoch those seqs count in (None when
        the journal knows none). Events at or below it are duplicates:
        acknowledged and dropped. After a SequenceGap(expected, got) that an
        operator has resolved, set_journaled_seq(got - 1) resumes delivery.
        """
        self._link.set_journaled_seq(seq, epoch)

    def resync(self, after: int) -> None:
        """End a SequenceRegression: take the device's current stream after seq `after`.

        Journal the re-synchronisation first; then the device's epoch is the
        stream epoch and its events above `after` arrive as new ones.
        """
        self._link.resync(after)

    def next_event(self, timeout: float | None = None) -> DeviceEvent | None:
        """The next new event in seq order, or None on timeout.

        Raises DeviceGone once the device is closed, or lost with reconnect off,
        and every event before that has been returned.
        """
        if self._callback_thread is not None:
            raise RuntimeError("events go to the on_event callback; do not also read them")
        return self._link.next_event(timeout)

    def events(self, timeout: float | None = None) -> Iterator[DeviceEvent]:
        """Events until one wait of `timeout` brings none, or the device is gone."""
        return events_until_quiet(self.next_event, timeout)

    def on_event(self, callback: Callable[[DeviceEvent], None]) -> None:
        """Deliver every event to callback on a driver thread, until close().

        The callback journals and acks; if it raises, the error is logged and
        the event stays unacknowledged on the device.
        """
        if self._callback_thread is not None:
            raise RuntimeError("on_event is already set for this device")
        self._callback_thread = deliver_on_thread(self._link.next_event, callback, self._link.url)

    def ack(self, seq: int) -> None:
        """Acknowledge every event up to seq; only after the journal has committed it."""
        self._link.ack(seq)

    # --- commands --------------------------------------------------------------

    def get_status(self) -> Status:
        answer = self._link.command(GetStatus)
        return _expect(answer, Status, "GET_STATUS")

    def self_test(self, timeout: float = SELF_TEST_TIMEOUT_S) -> SelfTestResult:
        """Run the self-test and return its result event.

        The result is also delivered as an event, to be journaled and acked
        like any other. The device sends it only after every earlier event is
        acknowledged, so keep consuming events (on_event) while this waits.
        """
        mark = self._link.event_mark()
        self._run(SelfTest, "SELF_TEST")
        result = self._link.wait_for_event(
            lambda event: isinstance(event, SelfTestResult), after=mark, timeout=timeout
        )
        if not isinstance(result, SelfTestResult):
            raise DeviceTimeout(f"{self._link.url} sent no SELF_TEST_RESULT within {timeout:g} s")
        return result

    def pair(self, pairing_key: bytes, house_public_key: bytes | None = None) -> None:
        """Give the device its pairing key (protocol 1.1), replacing any it held, and from
        protocol 1.3 the house's public key (raw Ed25519) it checks firmware images with.

        The device takes it only while its pairing switch is on: otherwise
        CommandRefused with NOT_PAIRING. Store the key on the host only once
        this has returned. A device below 1.3 is given no house key.
        """
        if self._link.protocol_minor < 1:
            raise CommandRefused("PAIR", ErrorCode.UNKNOWN_MESSAGE)
        if self._link.protocol_minor < FIRMWARE_UPDATE_FROM_1_3:
            house_public_key = None
        self._run(lambda request_id: Pair(request_id, pairing_key, house_public_key), "PAIR")

    @property
    def updatable(self) -> bool:
        """Whether the device takes firmware over the link (protocol 1.3, FIRMWARE_UPDATE)."""
        return (
            self._link.protocol_minor >= FIRMWARE_UPDATE_FROM_1_3
            and Capability.FIRMWARE_UPDATE in self._link.hello.capabilities
        )

    def update_firmware(self, signed: SignedImage) -> Hello:
        """Send a signed image to the device's inactive slot, switch, and reconnect.

        The device checks the signature and the version at FIRMWARE_BEGIN and the
        whole image at FIRMWARE_COMMIT, and refuses with a FIRMWARE_* code
        (CommandRefused) while it stays on its firmware. On success it restarts
        on the new image; the returned HELLO is the new handshake's.
        """
        if not self.updatable:
            raise CommandRefused("FIRMWARE_BEGIN", ErrorCode.UNSUPPORTED)
        image = signed.image
        self._run(
            lambda request_id: FirmwareBegin(
                request_id, signed.version, len(image), signed.sha256, signed.signature
            ),
            "FIRMWARE_BEGIN",
        )
        for offset in range(0, len(image), FIRMWARE_CHUNK_SIZE):
            data = image[offset : offset + FIRMWARE_CHUNK_SIZE]
            self._run(partial(FirmwareChunk, offset=offset, data=data), "FIRMWARE_CHUNK")
        self._run(FirmwareCommit, "FIRMWARE_COMMIT")
        return self._link.handshake()

    def reset(self) -> None:
        """Restart the device's firmware and reconnect; its queue and counter survive."""
        self._run(Reset, "RESET")
        self._link.handshake()

    def close(self) -> None:
        self._link.close()
        thread = self._callback_thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _run(self, build: Callable[[int], Command], name: str) -> int:
        """Send a command answered by REPLY; return its request id, raise if refused."""
        answer = self._link.command(build)
        reply = _expect(answer, Reply, name)
        if reply.result is not ErrorCode.OK:
            raise CommandRefused(name, reply.result)
        return reply.request_id

    def _require(self, capability: Capability, name: str) -> None:
        """Refuse locally what the device has said it cannot do, as it would itself."""
        if capability not in self._link.hello.capabilities:
            raise CommandRefused(name, ErrorCode.UNSUPPORTED)


class ShoeDevice(Device):
    """A manual dealing shoe: the dealer draws; the host controls the gate."""

    def set_gate(self, locked: bool) -> None:
        """Lock the gate, or open it for free drawing."""
        self._require(Capability.GATE, "GATE")
        mode = GateMode.LOCKED if locked else GateMode.OPEN
        self._run(lambda request_id: SetGate(request_id, mode), "GATE")

    def release_one(self) -> None:
        """Let exactly one card be drawn; the shoe locks the gate again by itself."""
        self._require(Capability.GATE, "GATE")
        self._run(lambda request_id: SetGate(request_id, GateMode.RELEASE_ONE), "GATE")


class DealerDevice(Device):
    """An automatic shuffler-dealer: the host asks for each card."""

    def deal_next(self) -> None:
        """Deliver one card; it arrives as a CardRead event.

        If this raises DeviceGone the device may have dealt: wait for the
        event after LinkRestored rather than asking again.
        """
        self._require(Capability.DEAL_NEXT, "DEAL_NEXT")
        self._run(DealNext, "DEAL_NEXT")

    def shuffle(self, decks: int) -> int:
        """Shuffle the loaded cards into a new shoe; OperationDone with this request id follows."""
        self._require(Capability.SHUFFLE, "SHUFFLE")
        return self._run(lambda request_id: Shuffle(request_id, decks), "SHUFFLE")

    def return_cards(self, count: int) -> int:
        """Take the round's `count` cards back; OperationDone with this request id follows."""
        self._require(Capability.RETURN, "RETURN")
        return self._run(lambda request_id: ReturnCards(request_id, count), "RETURN")


def open_device(
    url: str,
    *,
    usb_backend: Any = None,
    timeout: float = 2.0,
    reconnect: bool = True,
    timing: LinkTiming | None = None,
    keys: KeyLookup | None = None,
) -> ShoeDevice | DealerDevice:
    """Connect to the device at url and handshake within timeout seconds.

    url: any pyserial URL (/dev/ttyUSB0, /dev/serial/by-id/..., socket://HOST:PORT,
    sim://...) or usb://VID:PID[/SERIAL]. reconnect: after an unplug, keep
    reconnecting with backoff (LinkLost / LinkRestored events) instead of
    ending the session. keys: the host's pairing key for a serial number (None: it
    holds none); with it, a paired device is authenticated at every handshake and
    refused (AuthenticationFailed) when it cannot prove it holds that key, and a
    device whose key this host holds is refused if it does not ask for
    authentication. Without keys the link is protocol 1.0, unauthenticated.
    """
    link = Link(
        lambda: open_transport(url, usb_backend=usb_backend),
        url=url,
        timing=timing or LinkTiming(),
        reconnect=reconnect,
        keys=keys,
    )
    hello = link.open(timeout)
    device_class = ShoeDevice if hello.device_kind is DeviceKind.MANUAL_SHOE else DealerDevice
    return device_class(link)


AnswerT = TypeVar("AnswerT", bound=Answer)


def _expect(answer: Answer, wanted: type[AnswerT], name: str) -> AnswerT:
    if isinstance(answer, wanted):
        return answer
    if isinstance(answer, Reply):
        raise CommandRefused(name, answer.result)
    raise LinkProtocolError(f"the device answered {name} with {type(answer).__name__}")
