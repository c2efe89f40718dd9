"""The firmware and hardware of one simulated device, without any I/O.

FirmwareCore holds what every model shares: the protocol engine
(DeviceLink), the self-test and firmware hash, active faults, the door,
the cards in the shoe and the path a card takes out of it, where the
injected faults strike. ManualShoe and ShufflerDealer add what differs
(the gate and the dealer's hand; DEAL_NEXT, SHUFFLE and RETURN).

Host bytes come in with feed(), device bytes go out with take_output(),
and tick() runs the timers; an attachment (pty, TCP, sim://, USB) calls
them from one background thread while a test or the demo acts on the
device (press_button, pull_card, open_door, unplug...) from another, so
every public method takes the device's lock.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any, ClassVar, ParamSpec, TypeVar

from cardshoe.drivers.protocol.cardid import CardId, CardSuit
from cardshoe.drivers.protocol.error_codes import ErrorCode
from cardshoe.drivers.protocol.link_constants import (
    EVENT_QUEUE_MIN_CAPACITY,
    FIRMWARE_UPDATE_FROM_1_3,
    PROTOCOL_MINOR,
)
from cardshoe.drivers.protocol.messages import (
    Answer,
    Capability,
    CardRead,
    Command,
    CutCard,
    DealNext,
    Event,
    Fault,
    FaultCleared,
    FaultKind,
    FirmwareBegin,
    FirmwareChunk,
    FirmwareCommit,
    GateMode,
    GetStatus,
    Hello,
    MessageType,
    Orientation,
    Reply,
    Reset,
    ReturnCards,
    SelfTest,
    SelfTestResult,
    SensorFlag,
    SetGate,
    ShoeEmpty,
    Shuffle,
    Status,
    StatusFlag,
)
from cardshoe.firmware_sim.device_link import Clock, DeviceLink, first_epoch
from cardshoe.firmware_sim.errors import SimConfigError
from cardshoe.firmware_sim.faults import (
    DEFAULT_DURATION_S,
    LINE_ONLY_KINDS,
    FaultPlan,
    Injection,
    InjectionKind,
)
from cardshoe.firmware_sim.firmware_slots import FACTORY_VERSION, FirmwareSlot, FirmwareSlots
from cardshoe.firmware_sim.profiles import DeviceProfile
from cardshoe.firmware_sim.shoe import (
    DEFAULT_CUT_CARD_DEPTH,
    DEFAULT_DECK_SET,
    DEFAULT_DECKS,
    CardPack,
    build_decks,
    make_rng,
)
from cardshoe.firmware_sim.shuffles import FAIR, ShuffleMethod
from cardshoe.firmware_sim.timing import INSTANT, Timing
from cardshoe.firmware_sim.virtual_dealer import VirtualDealer

log = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")

REQUIRED_CAPABILITY: dict[type[Command], Capability] = {
    SetGate: Capability.GATE,
    DealNext: Capability.DEAL_NEXT,
    Shuffle: Capability.SHUFFLE,
    ReturnCards: Capability.RETURN,
}

INJECTION_NEEDS: dict[InjectionKind, Capability] = {
    InjectionKind.FOREIGN_CARD: Capability.TAGGED_CARDS,
    InjectionKind.DUPLICATE_CARD: Capability.TAGGED_CARDS,
    InjectionKind.DOOR_OPEN: Capability.DOOR_SENSOR,
    InjectionKind.EARLY_CUT_CARD: Capability.CUT_CARD_DETECTION,
    InjectionKind.DOUBLE_FEED_IN_ORDER: Capability.DOUBLE_FEED_DETECTION,
}
"""An injection the device could not even notice is a mistake in the scenario."""

BLOCKING_INJECTIONS = frozenset(
    {InjectionKind.JAM, InjectionKind.DOOR_OPEN, InjectionKind.BAD_FIRMWARE_HASH}
)
"""Injections that stop the card from leaving when they strike."""

WIRE_INJECTIONS = frozenset(
    {
        InjectionKind.CORRUPT_BYTES,
        InjectionKind.DROP_FRAME,
        InjectionKind.DUPLICATE_FRAME,
        InjectionKind.DELAY_ACK,
        InjectionKind.UNPLUG,
    }
)
"""Injections that strike the transmission of the card's event, not the card itself."""

MISREAD_INJECTIONS = frozenset({InjectionKind.MISREAD_CARD, InjectionKind.UNREADABLE_CARD})
"""Injections that keep the reader from reading the card as it leaves."""

MAX_FEED_GROUP = 255
ALTERED_IMAGE_SUFFIX = b"\x00altered"


def locked(method: Callable[P, R]) -> Callable[P, R]:
    """Run a public method under the device's lock (attachments call from their own thread)."""

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with args[0]._lock:  # type: ignore[attr-defined]
            return method(*args, **kwargs)

    return wrapper


class FirmwareCore(ABC):
    """One simulated device; build it with cardshoe.firmware_sim.devices.create_device."""

    SUPPORTED: ClassVar[Capability]
    """Capabilities this model's firmware implements; a profile may list fewer."""
    FORBIDDEN_INJECTIONS: ClassVar[frozenset[InjectionKind]]
    """Injections that make no sense for this kind of device."""
    FACE: ClassVar[Orientation]
    """How a card normally lies as it leaves."""
    HAS_CUT_CARD: ClassVar[bool]
    """A continuous shuffler has no cut card, whatever depth is asked for."""

    def __init__(
        self,
        profile: DeviceProfile,
        *,
        seed: int | None = None,
        decks: int = DEFAULT_DECKS,
        deck_set: int = DEFAULT_DECK_SET,
        cut_card_depth: int | None = DEFAULT_CUT_CARD_DEPTH,
        injections: Iterable[Injection] = (),
        timing: Timing = INSTANT,
        clock: Clock = time.monotonic,
        queue_capacity: int = EVENT_QUEUE_MIN_CAPACITY,
        pairing_key: bytes | None = None,
        pairing_mode: bool = False,
        shuffle: ShuffleMethod = FAIR,
        previous_order: Sequence[CardId] | None = None,
    ) -> None:
        self._check_settings(profile, decks, deck_set, list(injections))
        self._lock = threading.RLock()
        self._clock = clock
        self._listeners: list[Callable[[], None]] = []
        self._timers: list[tuple[float, Callable[[], object]]] = []
        self.profile = profile
        self.timing = timing
        self.rng = make_rng(seed)
        self.decks = decks
        self.deck_set = deck_set
        self.cut_card_depth = cut_card_depth
        self.plan = FaultPlan(list(injections))
        self.dealer = VirtualDealer(pull_interval_s=timing.pull_interval_s)
        self.link = DeviceLink(
            execute=self._execute,
            hello=self._hello,
            clock=clock,
            on_output=self._notify,
            queue_capacity=queue_capacity,
            epoch=first_epoch(profile.serial_number),
        )
        # Non-volatile state: it survives resets, power cycles and re-plugs.
        self.link.pairing_key = pairing_key
        self.link.pairing_mode = pairing_mode
        self.firmware = FirmwareSlots(
            FirmwareSlot(profile.firmware_image, FACTORY_VERSION, profile.firmware_version)
        )
        self.firmware_image = profile.firmware_image
        """The image as the device reads it now: its active slot's, unless bad-firmware-hash
        altered it."""
        self._power_cut: Injection | None = None
        """An armed firmware-power-cut: strikes half-way through the next transfer."""
        self.active_faults: dict[FaultKind, int] = {}
        """Each active fault and the seq of the FAULT event that raised it."""
        self.shuffle = shuffle
        self.shoe = self._new_shoe(decks, previous_order)
        self.round = 0
        # Hardware state.
        self.door_open = False
        self.plugged = True
        # Volatile state, set by _start_firmware.
        self.gate = GateMode.LOCKED
        self.self_test_passed: bool | None = None
        self._operation: tuple[int, MessageType] | None = None
        self._operation_count = 0
        self._cards_in_round = 0
        self._feed_group = 0
        self._misread: tuple[CardId, Orientation, bool] | None = None
        """The latest card that left unread: the card, which way up, and whether a re-read
        can read it."""
        self.feed_overcount = 0
        """A faulty reader: each double feed is announced with this many cards more than left."""
        for injection in self.plan.take_at_power_up():
            self._strike(injection)
        self._start_firmware()

    # --- construction checks --------------------------------------------------------

    def _check_settings(
        self, profile: DeviceProfile, decks: int, deck_set: int, injections: list[Injection]
    ) -> None:
        extra = profile.capabilities & ~self.SUPPORTED
        if extra:
            raise SimConfigError(
                f"profile {profile.name}: a {profile.kind.name} cannot have {extra!r}"
            )
        if not 1 <= decks <= 255:
            raise SimConfigError(f"decks must be 1..255, not {decks}")
        if not 1 <= deck_set <= 0xFFFFFFFF:
            raise SimConfigError(f"the deck-set serial must be 1..0xFFFFFFFF, not {deck_set}")
        for injection in injections:
            if injection.kind in self.FORBIDDEN_INJECTIONS | LINE_ONLY_KINDS:
                raise SimConfigError(
                    f"{injection} cannot happen on a {profile.kind.name} (profile {profile.name})"
                )
            needed = INJECTION_NEEDS.get(injection.kind)
            if needed is not None and not profile.has(needed):
                raise SimConfigError(
                    f"{injection}: profile {profile.name} lacks {needed.name}, "
                    "so the device could not notice it"
                )

    # --- for attachments: bytes and time --------------------------------------------

    @locked
    def feed(self, data: bytes) -> None:
        """Bytes from the host; ignored while the device is unplugged."""
        if self.plugged:
            self.link.feed(data)

    @locked
    def take_output(self) -> bytes:
        """Bytes for the host since the last call; nothing from a device without power (an
        answer made in the instant the power failed never leaves)."""
        output = self.link.take_output()
        return output if self.plugged else b""

    @locked
    def tick(self) -> None:
        """Run whatever is due: timers, the link's retransmissions, the model's own work."""
        now = self._clock()
        due = sorted((timer for timer in self._timers if timer[0] <= now), key=lambda t: t[0])
        for timer in due:
            self._timers.remove(timer)
            timer[1]()
        if not self.plugged:
            return
        backlog_seq = self.active_faults.get(FaultKind.EVENT_BACKLOG)
        if backlog_seq is not None and backlog_seq <= self.link.last_acked_seq:
            self._clear_fault(FaultKind.EVENT_BACKLOG)
        self.link.tick()
        self._tick_model(now)

    @locked
    def link_opened(self) -> None:
        """An attachment has a new host connection: start it with a 0x00."""
        if self.plugged:
            self.link.link_opened()

    def add_listener(self, listener: Callable[[], None]) -> None:
        """Call `listener` (from any thread) when output is waiting or the plug changes."""
        with self._lock:
            self._listeners.append(listener)

    def remove_listener(self, listener: Callable[[], None]) -> None:
        with self._lock:
            self._listeners.remove(listener)

    # --- the physical world: what a person (or a test) does to the device -------------

    @locked
    def open_door(self) -> None:
        self.door_open = True
        if self.profile.has(Capability.DOOR_SENSOR):
            self._raise_fault(FaultKind.DOOR_OPEN)

    @locked
    def close_door(self) -> None:
        self.door_open = False
        self._clear_fault(FaultKind.DOOR_OPEN)

    @locked
    def clear_jam(self) -> None:
        """A technician frees the stuck card."""
        self._clear_fault(FaultKind.JAM)

    @locked
    def unplug(self) -> None:
        """Pull the cable: the device loses power; its non-volatile state stays."""
        if not self.plugged:
            return
        log.info("simulator %s: unplugged", self.serial_number)
        self.plugged = False
        self.link.take_output()
        self._notify()

    @locked
    def replug(self) -> None:
        """Plug the cable back: the firmware starts again (0x00, self-test, HELLO)."""
        if self.plugged:
            return
        log.info("simulator %s: plugged back in", self.serial_number)
        self.plugged = True
        self._start_firmware()
        self._notify()

    @locked
    def load_pack(self) -> None:
        """The dealer takes out the cards left and loads a freshly shuffled pack: STATUS then
        shows SHOE_LOADED with cards_dealt 0, which a host waits for before a new shoe."""
        log.info("simulator %s: a new pack loaded", self.serial_number)
        self.shoe = self._new_shoe(self.decks, self.shoe.order)
        self.dealer.locked_since = None

    @locked
    def wipe_memory(self) -> None:
        """A repair wiped the non-volatile memory and powered the device back up: its event
        queue, counter and stream epoch start afresh under the same serial number."""
        log.info("simulator %s: memory wiped", self.serial_number)
        self.link.wipe_memory()
        self._start_firmware()
        self._notify()

    @locked
    def set_pairing_mode(self, on: bool) -> None:
        """The technician turns the pairing key switch: PAIR is accepted only while it is on."""
        self.link.pairing_mode = on

    @locked
    def status(self) -> Status:
        """What GET_STATUS would answer now (request id 0)."""
        return self._status(0)

    @property
    def serial_number(self) -> str:
        return self.profile.serial_number

    @property
    def firmware_hash(self) -> bytes:
        """SHA-256 of the running image; differs from the profile's after bad-firmware-hash."""
        return hashlib.sha256(self.firmware_image).digest()

    # --- for the models -------------------------------------------------------------

    @abstractmethod
    def press_button(self) -> bool:
        """The dealer presses the button; False when the device has none or is unplugged."""

    @abstractmethod
    def pull_card(self) -> bool:
        """The dealer pulls the card at the exit; False when nothing leaves."""

    @abstractmethod
    def _tick_model(self, now: float) -> None:
        """The model's own periodic work (the virtual dealer, a pending deal)."""

    @abstractmethod
    def _model_command(self, command: Command) -> ErrorCode:
        """Execute a command only this model has (GATE, DEAL_NEXT, SHUFFLE, RETURN)."""

    def _cards_remaining(self) -> int | None:
        return self.shoe.remaining

    def _new_shoe(self, decks: int, previous: Sequence[CardId] | None) -> CardPack:
        """A new shoe shuffled by self.shuffle from the previous shoe's order (None: none)."""
        tagged = self.profile.has(Capability.TAGGED_CARDS)
        cut_depth = self.cut_card_depth if self.HAS_CUT_CARD else None
        cards = build_decks(decks, self.deck_set, tagged)
        return CardPack(self.shuffle.arrange(cards, previous, self.rng), cut_depth)

    def _start_round(self) -> None:
        self.round += 1
        self._cards_in_round = 0
        log.debug("simulator %s: round %d begins", self.serial_number, self.round)

    def _deal_refusal(self) -> ErrorCode | None:
        """Why the device will not let a card go now, or None when it will."""
        if self._operation is not None:
            return ErrorCode.BUSY
        if self.self_test_passed is None:
            return ErrorCode.NOT_READY
        if not self.self_test_passed:
            return ErrorCode.SELF_TEST_FAILED
        if self.door_open:
            return ErrorCode.DOOR_OPEN
        if FaultKind.EVENT_BACKLOG in self.active_faults:
            return ErrorCode.EVENT_BACKLOG
        if self.active_faults:
            return ErrorCode.FAULT_ACTIVE
        if not self.shoe.remaining:
            return ErrorCode.SHOE_EMPTY
        return None

    def _release_cards(self, orientation: Orientation) -> bool:
        """Let the next card (or a double feed) leave; False when nothing could leave."""
        if not self.plugged or self.door_open or FaultKind.JAM in self.active_faults:
            return False
        if not self.shoe.remaining:
            return False
        first_in_round = self.round > 0 and self._cards_in_round == 0
        due = self.plan.take_due(len(self.shoe.dealt) + 1, self.round, first_in_round)
        blocking = [injection for injection in due if injection.kind in BLOCKING_INJECTIONS]
        if blocking:
            self.plan.injections[:0] = [i for i in due if i.kind not in BLOCKING_INJECTIONS]
            for injection in blocking:
                self._strike(injection)
            return False
        feed_size, orientation = self._shape_feed(due, orientation)
        card_seq = self.link.next_seq
        for injection in due:
            if injection.kind in WIRE_INJECTIONS:
                self._strike_transmission(injection, card_seq)
        kinds = {injection.kind for injection in due}
        unread = next((i for i in due if i.kind in MISREAD_INJECTIONS), None)
        self._cards_in_round += len(
            self._queue_cards(
                min(feed_size, self.shoe.remaining),
                orientation,
                in_order=InjectionKind.DOUBLE_FEED_IN_ORDER in kinds,
                unread=unread,
            )
        )
        if self.shoe.cut_card_at_exit:
            self._report_cut_card()
        if not self.shoe.remaining:
            self._queue(ShoeEmpty, cards_dealt=min(len(self.shoe.dealt), 0xFFFF))
        unplug = next((i for i in due if i.kind is InjectionKind.UNPLUG), None)
        if unplug is not None:
            self.unplug()
            self._schedule(unplug.duration_s or DEFAULT_DURATION_S[unplug.kind], self.replug)
        return True

    def _shape_feed(
        self, due: list[Injection], orientation: Orientation
    ) -> tuple[int, Orientation]:
        """Apply the injections that change what leaves: how many cards, which, which way up."""
        feed_size = 1
        for injection in due:
            if injection.kind in (InjectionKind.DOUBLE_FEED, InjectionKind.DOUBLE_FEED_IN_ORDER):
                feed_size = 2
            elif injection.kind is InjectionKind.REVERSED_CARD:
                orientation = Orientation.FACE_UP
            elif injection.kind is InjectionKind.FACE_DOWN:
                orientation = Orientation.FACE_DOWN
            elif injection.kind not in WIRE_INJECTIONS | MISREAD_INJECTIONS:
                self._strike(injection)
        return feed_size, orientation

    def _queue_cards(
        self,
        count: int,
        orientation: Orientation,
        *,
        in_order: bool = False,
        unread: Injection | None = None,
    ) -> list[Event]:
        """The CARD events of `count` cards leaving together; `unread`: the first is not read."""
        detected = count > 1 and self.profile.has(Capability.DOUBLE_FEED_DETECTION)
        flags = SensorFlag(0)
        if detected:
            self._feed_group = self._feed_group % MAX_FEED_GROUP + 1
            flags = SensorFlag.DOUBLE_FEED_SUSPECTED
            if in_order:
                flags |= SensorFlag.FEED_IN_ORDER
        if not self.profile.has(Capability.ORIENTATION):
            orientation = Orientation.UNKNOWN
        events = []
        for index in range(count):
            card = self.shoe.take()
            misread = unread is not None and index == 0
            events.append(
                self._queue(
                    CardRead,
                    card_code=bytes(8) if misread else card.encode(),
                    orientation=orientation,
                    flags=flags | SensorFlag.ID_UNREADABLE if misread else flags,
                    feed_group=self._feed_group if detected else 0,
                    feed_size=min(count + self.feed_overcount, 0xFF) if detected else 1,
                )
            )
            if misread and unread is not None:
                self._leave_unread(unread, card, orientation)
        return events

    def _leave_unread(self, injection: Injection, card: CardId, orientation: Orientation) -> None:
        """The card left unread; a misread-card injection's dealer re-reads it after a while."""
        readable = injection.kind is InjectionKind.MISREAD_CARD
        self._misread = (card, orientation, readable)
        log.info("simulator %s: injected fault %s", self.serial_number, injection)
        if readable:
            delay = injection.duration_s or DEFAULT_DURATION_S[injection.kind]
            self._schedule(delay, self.reread_card)

    @property
    def unread_card(self) -> CardId | None:
        """The card in the dealer's hand that the reader could not read, as a person sees it."""
        return None if self._misread is None else self._misread[0]

    @locked
    def reread_card(self) -> bool:
        """The dealer passes the latest unread card through the reader again: one more CARD
        event for the same physical card, which leaves nothing and counts nothing (the host
        awaits it: docs/protocol.md, re-reading a misread card). A damaged code
        (unreadable-card) reads as unreadable again. False when no card left unread."""
        if self._misread is None:
            return False
        card, orientation, readable = self._misread
        if readable:
            self._misread = None
        self._queue(
            CardRead,
            card_code=card.encode() if readable else bytes(8),
            orientation=orientation,
            flags=SensorFlag(0) if readable else SensorFlag.ID_UNREADABLE,
            feed_group=0,
            feed_size=1,
        )
        self._notify()
        return True

    def _report_cut_card(self) -> None:
        self.shoe.cut_card_seen = True
        if self.profile.has(Capability.CUT_CARD_DETECTION):
            self._queue(CutCard)

    def _queue(self, cls: type[Event], **fields: Any) -> Event:
        event = self.link.queue_event(cls, **fields)
        log.debug("simulator %s: queued %s", self.serial_number, event)
        if self.link.backlogged:
            self._raise_fault(FaultKind.EVENT_BACKLOG)
        return event

    def _raise_fault(self, kind: FaultKind, detail: int = 0) -> None:
        if kind in self.active_faults:
            return
        self.active_faults[kind] = self.link.next_seq
        self.gate = GateMode.LOCKED
        self._queue(Fault, kind=kind, detail=detail)

    def _clear_fault(self, kind: FaultKind) -> None:
        if self.active_faults.pop(kind, None) is not None:
            self._queue(FaultCleared, kind=kind)

    def _schedule(self, delay_s: float, action: Callable[[], object]) -> None:
        self._timers.append((self._clock() + delay_s, action))

    def _start_operation(
        self, operation: MessageType, duration_s: float, finish: Callable[[], None]
    ) -> None:
        """A long operation: BUSY until `finish` runs, unless the firmware restarts first."""
        self._operation_count += 1
        token = (self._operation_count, operation)
        self._operation = token

        def complete() -> None:
            if self._operation == token:
                self._operation = None
                finish()

        self._schedule(duration_s, complete)

    # --- injected faults ------------------------------------------------------------

    def _strike(self, injection: Injection) -> None:
        """Make an injected fault happen to the card about to leave (or at power-up)."""
        log.info("simulator %s: injected fault %s", self.serial_number, injection)
        kind = injection.kind
        duration = injection.duration_s or DEFAULT_DURATION_S.get(kind, 0.0)
        if kind is InjectionKind.FOREIGN_CARD:
            self.shoe.put_on_top(self._foreign_card())
        elif kind is InjectionKind.DUPLICATE_CARD:
            copied = self._card_still_out()
            if copied is None:
                # Nothing out to copy yet (a round's first card on the automatic machine,
                # which took every earlier card back): strike at the next card instead.
                later = replace(injection, round=None, card=len(self.shoe.dealt) + 2)
                self.plan.injections.append(later)
            else:
                self.shoe.put_on_top(copied)
        elif kind is InjectionKind.EARLY_CUT_CARD:
            self._report_cut_card()
        elif kind is InjectionKind.OUT_OF_CARDS:
            self.shoe.keep_only(1)
            self.shoe.cut_card_depth = None
        elif kind is InjectionKind.JAM:
            self._raise_fault(FaultKind.JAM, detail=1)
            self._schedule(duration, self.clear_jam)
        elif kind is InjectionKind.DOOR_OPEN:
            self.open_door()
            self._schedule(duration, self.close_door)
        elif kind is InjectionKind.BAD_FIRMWARE_HASH:
            self.firmware_image += ALTERED_IMAGE_SUFFIX
            if not injection.at_power_up:
                self._start_self_test()
        elif kind is InjectionKind.FIRMWARE_POWER_CUT:
            self._power_cut = injection

    def _strike_transmission(self, injection: Injection, seq: int) -> None:
        """Make an injected fault happen to the transmission of the event with this seq."""
        log.info("simulator %s: injected fault %s on event %d", self.serial_number, injection, seq)
        wire = self.link.wire_faults
        kind = injection.kind
        if kind is InjectionKind.CORRUPT_BYTES:
            wire.corrupt.add(seq)
        elif kind is InjectionKind.DROP_FRAME:
            wire.drop.add(seq)
        elif kind is InjectionKind.DUPLICATE_FRAME:
            wire.duplicate.add(seq)
        elif kind is InjectionKind.DELAY_ACK:
            wire.ack_delay_s[seq] = injection.duration_s or DEFAULT_DURATION_S[kind]

    def _card_still_out(self) -> CardId | None:
        """A card dealt and not taken back, for a duplicate: only while both copies are
        out can the host tell the intruder from its genuine card. This round's latest card,
        or between rounds the shoe's first; None when every card dealt is back in."""
        out = self._cards_out()
        if not out:
            return None
        return out[-1] if self._cards_in_round else out[0]

    def _cards_out(self) -> list[CardId]:
        """Cards dealt and not yet taken back in: a manual shoe takes none back."""
        return self.shoe.dealt

    def _foreign_card(self) -> CardId:
        """A card of another deck set: it belongs to some other table's shoe."""
        other_set = self.deck_set % 0xFFFFFFFF + 1
        return CardId(self.rng.randint(1, 13), CardSuit(self.rng.randint(0, 3)), other_set, 1)

    # --- firmware: start-up, self-test, commands ------------------------------------

    def _start_firmware(self) -> None:
        """Power-up or reset: 0x00, then the power-up self-test; HELLO until GET_INFO.

        It boots the active slot; a transfer that was under way is lost."""
        self.firmware.abandon()
        self.gate = GateMode.LOCKED
        self.self_test_passed = None
        self._operation = None
        self.link.power_up()
        self._start_self_test()

    def _start_self_test(self) -> None:
        self.self_test_passed = None
        self.gate = GateMode.LOCKED
        self._start_operation(
            MessageType.SELF_TEST, self.timing.self_test_s, self._finish_self_test
        )

    def _finish_self_test(self) -> None:
        failures = (
            ()
            if self.firmware_image == self.firmware.active.image
            else (FaultKind.FIRMWARE_HASH_MISMATCH,)
        )
        self.self_test_passed = not failures
        self._queue(
            SelfTestResult,
            checks_run=self.profile.self_test_checks,
            failures=failures,
            firmware_hash=self.firmware_hash,
        )

    def _execute(self, command: Command) -> Answer:
        if isinstance(command, GetStatus):
            return self._status(command.request_id)
        result = self._command_result(command)
        log.debug("simulator %s: %s -> %s", self.serial_number, command, result.name)
        return Reply(command.request_id, result)

    def _command_result(self, command: Command) -> ErrorCode:
        required = REQUIRED_CAPABILITY.get(type(command))
        if required is not None and not self.profile.has(required):
            return ErrorCode.UNSUPPORTED
        if isinstance(command, Reset):
            self._schedule(0.0, self._start_firmware)
            return ErrorCode.OK
        if isinstance(command, SelfTest):
            if self._operation is not None:
                return ErrorCode.BUSY
            self._start_self_test()
            return ErrorCode.OK
        if isinstance(command, FirmwareBegin | FirmwareChunk | FirmwareCommit):
            return self._firmware_command(command)
        return self._model_command(command)

    def _firmware_command(
        self, command: FirmwareBegin | FirmwareChunk | FirmwareCommit
    ) -> ErrorCode:
        """Protocol 1.3's transfer into the inactive slot, and the switch to it."""
        if self.link.host_minor < FIRMWARE_UPDATE_FROM_1_3:
            return ErrorCode.UNKNOWN_MESSAGE
        if self._operation is not None:
            return ErrorCode.BUSY
        house_key = self.link.house_public_key
        if isinstance(command, FirmwareBegin):
            return self.firmware.begin(command, house_key)
        if isinstance(command, FirmwareChunk):
            result = self.firmware.write(command)
            transfer = self.firmware.transfer
            half_way = transfer is not None and 2 * len(transfer.received) >= transfer.begin.size
            if result is ErrorCode.OK and half_way and self._power_cut is not None:
                self._cut_power(self._power_cut)
            return result
        result = self.firmware.commit(house_key)
        if result is ErrorCode.OK:
            self.firmware_image = self.firmware.active.image
            log.info(
                "simulator %s: switched to firmware version %d",
                self.serial_number,
                self.firmware.active.version,
            )
            self._schedule(0.0, self._start_firmware)
        return result

    def _cut_power(self, injection: Injection) -> None:
        """The injected power cut: off now, mid-transfer, and back after the duration."""
        log.info("simulator %s: injected fault %s", self.serial_number, injection)
        self._power_cut = None
        self.unplug()
        self._schedule(injection.duration_s or DEFAULT_DURATION_S[injection.kind], self.replug)

    def _hello(self, request_id: int) -> Hello:
        return Hello(
            request_id=request_id,
            protocol_minor=PROTOCOL_MINOR,
            device_kind=self.profile.kind,
            capabilities=self.profile.capabilities
            | (Capability.AUTH_REQUIRED if self.link.pairing_key is not None else Capability(0))
            | (
                Capability.FIRMWARE_UPDATE
                if self.link.host_minor >= FIRMWARE_UPDATE_FROM_1_3
                else Capability(0)
            ),
            last_acked_seq=self.link.last_acked_seq,
            next_seq=self.link.next_seq,
            firmware_hash=self.firmware_hash,
            model=self.profile.model,
            serial_number=self.profile.serial_number,
            firmware_version=self.firmware.active.label,
            epoch=self.link.announced_epoch(),
        )

    def _status(self, request_id: int) -> Status:
        conditions = {
            StatusFlag.DOOR_OPEN: self.door_open,
            StatusFlag.CARD_AT_EXIT: bool(self.shoe.remaining)
            and FaultKind.JAM not in self.active_faults,
            StatusFlag.SHOE_LOADED: bool(self.shoe.remaining),
            StatusFlag.BUSY: self._operation is not None,
            StatusFlag.SELF_TEST_PASSED: bool(self.self_test_passed),
            StatusFlag.CUT_CARD_SEEN: self.shoe.cut_card_seen,
        }
        flags = StatusFlag(0)
        for flag, holds in conditions.items():
            if holds:
                flags |= flag
        return Status(
            request_id=request_id,
            flags=flags,
            gate=self.gate,
            cards_dealt=min(len(self.shoe.dealt), 0xFFFF),
            cards_remaining=self._cards_remaining(),
            active_faults=tuple(self.active_faults)[:16],
        )

    def _notify(self) -> None:
        for listener in list(self._listeners):
            listener()
