"""DeviceLink: the one interface the controller drives every device through.

To add a protocol family, subclass DeviceLink and implement:

- `identity` (a DeviceIdentity: kind SHOE or DEALER, model, serial, firmware,
  your family's registry name) and `capabilities` (the Capability flags below,
  declaring only what your device really guarantees: the controller holds the
  table or only judges where one is missing, docs/drivers.md);
- `next_event(timeout)`: the next events.Event in order, None on timeout, and
  DeviceGone once closed (or lost with reconnect off) after the last event;
  emit CardSeen / CutCardSeen / ButtonPressed / FaultRaised / FaultCleared /
  ShoeEmptied / SelfTestDone / OperationDone from the device (a FaultRaised
  with reports_end=False for a fault your device never reports ending, so
  that a supervisor may clear its hold), and the driver
  events LinkLost / LinkRestored (on an unplug and a reconnect) and
  ProtocolViolation (input your family cannot read, at most once per kind and
  interval) yourself;
- `set_journaled_seq(seq, epoch)` and `ack(seq)`: seqs are cumulative stream
  positions. With ACKNOWLEDGED_DELIVERY the device resends until acked; without
  it, number your events on the host from seq + 1 of the last set_journaled_seq
  (the journal's last), and use ack(seq) for whatever the device is told once a
  record is durable (a reply line), or nothing;
- `connected`, `close()`, and `counters()` (your own counts, JSON numbers);
- the commands your capabilities promise: `get_status()` (always; answer what you
  know, None where you count nothing), `self_test()` (SELF_TEST), `set_gate()` /
  `release_one()` (DRAW_CONTROL on a SHOE), `deal_next()` (DRAW_CONTROL on a
  DEALER), `shuffle()` / `return_cards()` (SHUFFLE / RETURN). The defaults here
  refuse with CommandRefused, so leave out what you cannot do.

Then register the family by name (drivers/api/protocols.py): a ProtocolFamily
whose open() builds your DeviceLink from an OpenRequest.
"""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from enum import Flag, auto
from types import TracebackType
from typing import Any, Self

from cardshoe.drivers.api.events import (
    DeviceIdentity,
    DeviceKind,
    DeviceStatus,
    Event,
    SelfTestDone,
)
from cardshoe.drivers.errors import CommandRefused, DeviceGone, Refusal

log = logging.getLogger(__name__)

SELF_TEST_TIMEOUT_S = 30.0
"""How long self_test() waits for the device's result by default."""


class Capability(Flag):
    """What a device guarantees; the table's behaviour follows from each one present or not.

    The first five are the guarantees docs/drivers.md tabulates per family; the rest
    say which optional commands and sensors a device has.
    """

    ACKNOWLEDGED_DELIVERY = auto()
    """The device keeps each event and resends it until the host acknowledges it, so a card
    sent while the controller was down is not lost."""
    DRAW_CONTROL = auto()
    """The host can stop cards: a gate (set_gate / release_one) or deal-next on a dealer."""
    AUTHENTICATED = auto()
    """Every event is proven to come from the paired device (a keyed link)."""
    DEVICE_COUNTS = auto()
    """The device counts the cards it dealt (and what is left), for reconciliation."""
    PHYSICAL_IDS = auto()
    """Each card carries its deck set and deck, not only rank and suit."""
    SELF_TEST = auto()
    SHUFFLE = auto()
    RETURN = auto()
    CUT_CARD_DETECTION = auto()
    DEALER_BUTTON = auto()
    DOUBLE_FEED_DETECTION = auto()
    ORIENTATION = auto()
    FIRMWARE_UPDATE = auto()


GUARANTEES = (
    Capability.ACKNOWLEDGED_DELIVERY,
    Capability.DRAW_CONTROL,
    Capability.AUTHENTICATED,
    Capability.DEVICE_COUNTS,
    Capability.PHYSICAL_IDS,
)
"""The capabilities a family's table in docs/drivers.md and `shoectl status` list first."""


def capability_names(capabilities: Capability) -> list[str]:
    """The members present, lower case, in declaration order: the JSON and status form."""
    return [str(member.name).lower() for member in Capability if member in capabilities]


def events_until_quiet(
    next_event: Callable[[float | None], Any], timeout: float | None
) -> Iterator[Any]:
    """Events until one wait of `timeout` brings none, or the device is gone."""
    while True:
        try:
            event = next_event(timeout)
        except DeviceGone:
            return
        if event is None:
            return
        yield event


def deliver_on_thread(
    next_event: Callable[[float | None], Any],
    callback: Callable[[Any], None],
    url: str,
) -> threading.Thread:
    """Hand every event to callback on a thread of its own until the device is gone; a
    callback that raises is logged, and its event stays unacknowledged."""

    def deliver() -> None:
        while True:
            try:
                event = next_event(None)
            except DeviceGone:
                return
            if event is None:
                continue
            try:
                callback(event)
            except Exception:
                log.exception("%s: the event callback failed on %r", url, event)

    thread = threading.Thread(target=deliver, name="cardshoe-device-events", daemon=True)
    thread.start()
    return thread


class DeviceLink(ABC):
    """One open device of any protocol family (see the module docstring)."""

    def __init__(self) -> None:
        self._callback_thread: threading.Thread | None = None

    # --- who, what it can do ----------------------------------------------------------

    @property
    @abstractmethod
    def url(self) -> str:
        """Where the device was opened (a pyserial URL, usb://VID:PID[/SERIAL], ...)."""

    @property
    @abstractmethod
    def identity(self) -> DeviceIdentity:
        """Who the device said it is at the latest (re)connection."""

    @property
    @abstractmethod
    def capabilities(self) -> Capability:
        """What this device guarantees (never more than its family can)."""

    @property
    def kind(self) -> DeviceKind:
        return self.identity.kind

    @property
    @abstractmethod
    def connected(self) -> bool:
        """False while the link is down (reconnecting) or closed."""

    def counters(self) -> dict[str, int]:
        """The stream's position and the family's own counts (frames, bad lines, ...).

        The controller reads three keys when present: last_acked_seq (what the device
        holds acknowledged, at the handshake), next_seq (its next new event's seq) and
        delivered_seq (the last seq handed to next_event's caller).
        """
        return {}

    def describe(self) -> dict[str, Any]:
        """The device as the journal's session records and `shoectl status` show it (JSON)."""
        identity = self.identity
        capabilities = self.capabilities
        return {
            "url": self.url,
            "protocol": identity.protocol,
            "protocol_version": identity.protocol_version,
            "kind": identity.kind.value,
            "model": identity.model,
            "serial_number": identity.serial_number,
            "firmware_version": identity.firmware_version,
            "firmware_hash": identity.firmware_hash.hex(),
            "epoch": identity.epoch,
            "capabilities": capability_names(capabilities),
            "authenticated": Capability.AUTHENTICATED in capabilities,
            "counters": self.counters(),
        }

    # --- events -------------------------------------------------------------------------

    @abstractmethod
    def set_journaled_seq(self, seq: int | None, epoch: int | None = None) -> None:
        """The highest seq the journal holds for this device (None: it holds none).

        Events at or below it are duplicates: acknowledged and dropped. A family
        without device seqs numbers its next event seq + 1.
        """

    def resync(self, after: int) -> None:
        """End a SequenceRegression: take the device's stream after seq `after`."""
        self.set_journaled_seq(after)

    @abstractmethod
    def next_event(self, timeout: float | None = None) -> Event | None:
        """The next event in order, or None on timeout; DeviceGone once closed or lost."""

    @abstractmethod
    def ack(self, seq: int) -> None:
        """Every event up to seq is journaled: call only after the journal's commit."""

    def events(self, timeout: float | None = None) -> Iterator[Event]:
        """Events until one wait of `timeout` brings none, or the device is gone."""
        return events_until_quiet(self.next_event, timeout)

    def on_event(self, callback: Callable[[Event], None]) -> None:
        """Deliver every event to callback on a driver thread, until close().

        The callback journals and acks; if it raises, the error is logged and the
        event stays unacknowledged.
        """
        if self._callback_thread is not None:
            raise RuntimeError("on_event is already set for this device")
        self._callback_thread = deliver_on_thread(self.next_event, callback, self.url)

    # --- what the table can ask ---------------------------------------------------------

    @abstractmethod
    def get_status(self) -> DeviceStatus:
        """What the device reports now (None in the counts it does not keep)."""

    def self_test(self, timeout: float = SELF_TEST_TIMEOUT_S) -> SelfTestDone:
        """Run the self-test; its result is also delivered as an event (SELF_TEST)."""
        raise CommandRefused("SELF_TEST", Refusal.UNSUPPORTED)

    def set_gate(self, locked: bool) -> None:
        """Lock the shoe's gate, or open it for free drawing (DRAW_CONTROL, SHOE)."""
        raise CommandRefused("GATE", Refusal.UNSUPPORTED)

    def release_one(self) -> None:
        """Let exactly one card be drawn, then lock again (DRAW_CONTROL, SHOE)."""
        raise CommandRefused("GATE", Refusal.UNSUPPORTED)

    def deal_next(self) -> None:
        """Deliver one card, which arrives as a CardSeen (DRAW_CONTROL, DEALER)."""
        raise CommandRefused("DEAL_NEXT", Refusal.UNSUPPORTED)

    def shuffle(self, decks: int) -> int:
        """Shuffle into a new shoe; OperationDone with the returned request id follows."""
        raise CommandRefused("SHUFFLE", Refusal.UNSUPPORTED)

    def return_cards(self, count: int) -> int:
        """Take the round's cards back; OperationDone with the returned request id follows."""
        raise CommandRefused("RETURN", Refusal.UNSUPPORTED)

    def reset(self) -> None:
        """Restart the device and reconnect."""
        raise CommandRefused("RESET", Refusal.UNSUPPORTED)

    def family_extras(self) -> Any:
        """The family's own servicing surface (pairing, firmware update) or None.

        Commands that only one family has reach it here, so the interface stays the
        table's and no servicing command leaks into every family.
        """
        return None

    # --- lifetime -----------------------------------------------------------------------

    @abstractmethod
    def _close_link(self) -> None:
        """Close the device's transport and end next_event() with DeviceGone."""

    def close(self) -> None:
        self._close_link()
        thread = self._callback_thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
