"""The cardshoe protocol (COBS + CRC-32 frames, docs/protocol.md) as one DeviceLink family.

CardshoeLink wraps the wire-level Device of device.py and says everything it
reports in the neutral vocabulary of api/events.py: the translation is a table
of pure functions, one per wire message, so the core never sees a wire type.
Pairing, firmware update and the wire's own status stay on the wrapped device,
reached through family_extras().
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from cardshoe.drivers import link_events as wire_driver
from cardshoe.drivers.api import events as neutral
from cardshoe.drivers.api.device_link import SELF_TEST_TIMEOUT_S, Capability, DeviceLink
from cardshoe.drivers.api.protocols import OpenRequest, ProtocolFamily
from cardshoe.drivers.device import DealerDevice, ShoeDevice, open_device
from cardshoe.drivers.errors import CommandRefused, Refusal
from cardshoe.drivers.protocol import messages as wire
from cardshoe.drivers.protocol.error_codes import ErrorCode
from cardshoe.drivers.protocol.link_constants import PROTOCOL_MAJOR
from cardshoe.drivers.protocol.message_codec import message_from_json

FAMILY_NAME = "cardshoe"

_SENSOR_TO_READ = {
    wire.SensorFlag.ID_UNREADABLE: neutral.ReadFlag.UNREADABLE,
    wire.SensorFlag.LOW_CONFIDENCE: neutral.ReadFlag.LOW_CONFIDENCE,
    wire.SensorFlag.REVERSED: neutral.ReadFlag.REVERSED,
    wire.SensorFlag.DOUBLE_FEED_SUSPECTED: neutral.ReadFlag.DOUBLE_FEED_SUSPECTED,
    wire.SensorFlag.FEED_IN_ORDER: neutral.ReadFlag.FEED_IN_ORDER,
}
_OPERATIONS = {
    wire.MessageType.SHUFFLE: neutral.Operation.SHUFFLE,
    wire.MessageType.RETURN: neutral.Operation.RETURN,
}
_WIRE_CAPABILITIES = {
    wire.Capability.SHUFFLE: Capability.SHUFFLE,
    wire.Capability.RETURN: Capability.RETURN,
    wire.Capability.TAGGED_CARDS: Capability.PHYSICAL_IDS,
    wire.Capability.ORIENTATION: Capability.ORIENTATION,
    wire.Capability.DOUBLE_FEED_DETECTION: Capability.DOUBLE_FEED_DETECTION,
    wire.Capability.DEALER_BUTTON: Capability.DEALER_BUTTON,
    wire.Capability.CUT_CARD_DETECTION: Capability.CUT_CARD_DETECTION,
    wire.Capability.FIRMWARE_UPDATE: Capability.FIRMWARE_UPDATE,
}
FAMILY_CAPABILITIES = (
    Capability.ACKNOWLEDGED_DELIVERY
    | Capability.DRAW_CONTROL
    | Capability.AUTHENTICATED
    | Capability.DEVICE_COUNTS
    | Capability.SELF_TEST
    | Capability.PHYSICAL_IDS
    | Capability.SHUFFLE
    | Capability.RETURN
    | Capability.ORIENTATION
    | Capability.DOUBLE_FEED_DETECTION
    | Capability.DEALER_BUTTON
    | Capability.CUT_CARD_DETECTION
    | Capability.FIRMWARE_UPDATE
)


def neutral_fault(kind: wire.FaultKind) -> neutral.FaultKind:
    return neutral.FaultKind[kind.name]


def _read_flags(read: wire.CardRead) -> neutral.ReadFlag:
    misread = read.misread
    known = _READ_FLAGS.get((read.flags, misread))
    if known is not None:
        return known
    flags = neutral.ReadFlag(0)
    for bit, meaning in _SENSOR_TO_READ.items():
        if bit in read.flags:
            flags |= meaning
    if misread:
        flags |= neutral.ReadFlag.MISREAD
    _READ_FLAGS[(read.flags, misread)] = flags
    return flags


_READ_FLAGS: dict[tuple[wire.SensorFlag, bool], neutral.ReadFlag] = {}
"""Each wire flag set's translation, worked out once: a Flag's operators each make a new
member through Enum's call, five or six of them for every card."""
_ORIENTATIONS = {
    orientation: neutral.Orientation[orientation.name] for orientation in wire.Orientation
}


def _card(read: wire.CardRead) -> neutral.CardSeen:
    return neutral.CardSeen(
        seq=read.seq,
        device_time_ms=read.device_time_ms,
        card=read.card,
        flags=_read_flags(read),
        orientation=_ORIENTATIONS[read.orientation],
        feed_group=read.feed_group,
        feed_size=read.feed_size,
        code=read.card_code.hex(),
    )


def neutral_kind(kind: wire.DeviceKind) -> neutral.DeviceKind:
    if kind is wire.DeviceKind.MANUAL_SHOE:
        return neutral.DeviceKind.SHOE
    return neutral.DeviceKind.DEALER


def identity_of(hello: wire.Hello, protocol_minor: int) -> neutral.DeviceIdentity:
    """Who a HELLO says the device is, in the neutral words."""
    return neutral.DeviceIdentity(
        kind=neutral_kind(hello.device_kind),
        model=hello.model,
        serial_number=hello.serial_number,
        firmware_version=hello.firmware_version,
        firmware_hash=hello.firmware_hash,
        protocol=FAMILY_NAME,
        protocol_version=f"{PROTOCOL_MAJOR}.{protocol_minor}",
        epoch=hello.epoch,
        next_seq=hello.next_seq,
        last_acked_seq=hello.last_acked_seq,
    )


def _operation_done(done: wire.OperationDone) -> neutral.OperationDone:
    return neutral.OperationDone(
        seq=done.seq,
        device_time_ms=done.device_time_ms,
        request_id=done.request_id,
        operation=_OPERATIONS[done.operation],
        ok=done.result is ErrorCode.OK,
        result=done.result.name.lower(),
        card_count=done.card_count,
    )


def _self_test(result: wire.SelfTestResult) -> neutral.SelfTestDone:
    return neutral.SelfTestDone(
        seq=result.seq,
        device_time_ms=result.device_time_ms,
        checks_run=result.checks_run,
        failures=tuple(neutral_fault(kind) for kind in result.failures),
        firmware_hash=result.firmware_hash,
    )


_TRANSLATIONS: Mapping[type, Callable[[Any], neutral.Event]] = {
    wire.CardRead: _card,
    wire.CutCard: lambda cut: neutral.CutCardSeen(cut.seq, cut.device_time_ms),
    wire.ShoeEmpty: lambda empty: neutral.ShoeEmptied(
        empty.seq, empty.device_time_ms, empty.cards_dealt
    ),
    wire.ButtonPressed: lambda press: neutral.ButtonPressed(
        press.seq, press.device_time_ms, press.button
    ),
    wire.Fault: lambda fault: neutral.FaultRaised(
        fault.seq, fault.device_time_ms, neutral_fault(fault.kind), fault.detail
    ),
    wire.FaultCleared: lambda cleared: neutral.FaultCleared(
        cleared.seq, cleared.device_time_ms, neutral_fault(cleared.kind)
    ),
    wire.SelfTestResult: _self_test,
    wire.OperationDone: _operation_done,
}


def neutral_device_event(event: wire.Event) -> neutral.Event:
    """A device event off the wire in the neutral vocabulary (a card decoded, its code kept)."""
    return _TRANSLATIONS[type(event)](event)


def neutral_status(status: wire.Status) -> neutral.DeviceStatus:
    flags = status.flags
    return neutral.DeviceStatus(
        gate=neutral.GateState[status.gate.name],
        cards_dealt=status.cards_dealt,
        cards_remaining=status.cards_remaining,
        active_faults=tuple(neutral_fault(kind) for kind in status.active_faults),
        shoe_loaded=wire.StatusFlag.SHOE_LOADED in flags,
        door_open=wire.StatusFlag.DOOR_OPEN in flags,
        busy=wire.StatusFlag.BUSY in flags,
        extra={"flags": [str(member.name) for member in wire.StatusFlag if member in flags]},
    )


def read_version_1_record(message_type: str | None, payload: Mapping[str, Any]) -> neutral.Event:
    """A journal record of version 1 (before the device seam: the wire form) as the neutral
    event it stands for: a device event of the wire message type given, or with None, the
    link's restoration, whose payload holds the device's HELLO."""
    if message_type is None:
        hello = message_from_json(payload["hello"])
        if not isinstance(hello, wire.Hello):
            raise ValueError(f"a version 1 link restoration holds a {type(hello).__name__}")
        return neutral.LinkRestored(identity_of(hello, hello.protocol_minor))
    message = message_from_json({"type": message_type.upper(), "fields": dict(payload)})
    if type(message) not in _TRANSLATIONS or not isinstance(message, wire.Event):
        raise ValueError(f"a version 1 {message_type} record is no device event of protocol 1")
    return neutral_device_event(message)


class CardshoeLink(DeviceLink):
    """A device speaking the cardshoe protocol, seen through the neutral interface."""

    def __init__(self, device: ShoeDevice | DealerDevice) -> None:
        super().__init__()
        self._device = device

    def neutral_event(self, event: wire_driver.DeviceEvent) -> neutral.Event:
        if isinstance(event, wire_driver.LinkRestored):
            return neutral.LinkRestored(identity_of(event.hello, self._device.protocol_minor))
        if isinstance(event, neutral.DriverEvent):
            return event  # the link raises the neutral driver events itself
        return neutral_device_event(event)

    @property
    def url(self) -> str:
        return self._device.info.url

    @property
    def identity(self) -> neutral.DeviceIdentity:
        info = self._device.info
        return neutral.DeviceIdentity(
            kind=neutral_kind(info.kind),
            model=info.model,
            serial_number=info.serial_number,
            firmware_version=info.firmware_version,
            firmware_hash=info.firmware_hash,
            protocol=FAMILY_NAME,
            protocol_version=info.protocol_version,
            epoch=info.epoch,
            next_seq=info.counters.get("next_seq", 1),
            last_acked_seq=info.counters.get("last_acked_seq", 0),
        )

    @property
    def capabilities(self) -> Capability:
        info = self._device.info
        declared = info.capabilities
        found = Capability.ACKNOWLEDGED_DELIVERY | Capability.DEVICE_COUNTS | Capability.SELF_TEST
        is_shoe = isinstance(self._device, ShoeDevice)
        draw = wire.Capability.GATE if is_shoe else wire.Capability.DEAL_NEXT
        if draw in declared:
            found |= Capability.DRAW_CONTROL
        if info.authenticated:
            found |= Capability.AUTHENTICATED
        for bit, meaning in _WIRE_CAPABILITIES.items():
            if bit in declared:
                found |= meaning
        return found

    @property
    def connected(self) -> bool:
        return self._device.connected

    def counters(self) -> dict[str, int]:
        return self._device.info.counters

    def describe(self) -> dict[str, Any]:
        """The neutral description, with the wire's own capabilities and stream epoch."""
        wire_form = self._device.info.to_json()
        return super().describe() | {
            "stream_epoch": wire_form["stream_epoch"],
            "device_capabilities": wire_form["capabilities"],
        }

    def set_journaled_seq(self, seq: int | None, epoch: int | None = None) -> None:
        self._device.set_journaled_seq(seq, epoch)

    def resync(self, after: int) -> None:
        self._device.resync(after)

    def next_event(self, timeout: float | None = None) -> neutral.Event | None:
        event = self._device.next_event(timeout)
        return None if event is None else self.neutral_event(event)

    def ack(self, seq: int) -> None:
        self._device.ack(seq)

    def get_status(self) -> neutral.DeviceStatus:
        return neutral_status(self._device.get_status())

    def self_test(self, timeout: float = SELF_TEST_TIMEOUT_S) -> neutral.SelfTestDone:
        return _self_test(self._device.self_test(timeout))

    def set_gate(self, locked: bool) -> None:
        self._shoe("GATE").set_gate(locked)

    def release_one(self) -> None:
        self._shoe("GATE").release_one()

    def deal_next(self) -> None:
        self._dealer("DEAL_NEXT").deal_next()

    def shuffle(self, decks: int) -> int:
        return self._dealer("SHUFFLE").shuffle(decks)

    def return_cards(self, count: int) -> int:
        return self._dealer("RETURN").return_cards(count)

    def reset(self) -> None:
        self._device.reset()

    def family_extras(self) -> ShoeDevice | DealerDevice:
        """The wire-level device: pairing, firmware update, the raw STATUS and HELLO."""
        return self._device

    def _close_link(self) -> None:
        self._device.close()

    def _shoe(self, command: str) -> ShoeDevice:
        if isinstance(self._device, ShoeDevice):
            return self._device
        raise CommandRefused(command, Refusal.UNSUPPORTED)

    def _dealer(self, command: str) -> DealerDevice:
        if isinstance(self._device, DealerDevice):
            return self._device
        raise CommandRefused(command, Refusal.UNSUPPORTED)


def _open(request: OpenRequest) -> CardshoeLink:
    device = open_device(
        request.url,
        usb_backend=request.usb_backend,
        timeout=request.timeout,
        reconnect=request.reconnect,
        timing=request.timing,
        keys=request.keys,
    )
    return CardshoeLink(device)


FAMILY = ProtocolFamily(
    name=FAMILY_NAME,
    capabilities=FAMILY_CAPABILITIES,
    open=_open,
    summary="cardshoe's own COBS + CRC-32 link: acknowledged, gated, optionally authenticated",
)
