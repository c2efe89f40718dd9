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
from typing import Any, ClassVar, ParamSpec, TypeVar

from cardshoe.drivers.protocol.cardid import CardId
from cardshoe.drivers.protocol.error_codes import ErrorCode
from cardshoe.drivers.protocol.link_constants import (
    EVENT_QUEUE_MIN_CAPACITY,
)
from cardshoe.drivers.protocol.messages import (
    Capability,
    CardRead,
    Command,
    CutCard,
    Event,
    Fault,
    FaultCleared,
    FaultKind,
    GateMode,
    MessageType,
    Orientation,
    SelfTestResult,
    SensorFlag,
    ShoeEmpty,
    Status,
)
from cardshoe.firmware_sim import device_answers
from cardshoe.firmware_sim.device_link import Clock, DeviceLink, first_epoch
from cardshoe.firmware_sim.errors import SimConfigError
from cardshoe.firmware_sim.fault_effects import (
    EFFECTS,
    Release,
    Stage,
    check_injections,
    duration_of,
    stage_of,
)
from cardshoe.firmware_sim.faults import FaultPlan, Injection, InjectionKind
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

MAX_FEED_GROUP = 255


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
        self.link = self._new_link(clock, queue_capacity, pairing_key, pairing_mode)
        # Non-volatile state: it survives resets, power cycles and re-plugs.
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
        self._start_card_path()
        self._first_power_up()

    def _new_link(
        self, clock: Clock, queue_capacity: int, pairing_key: bytes | None, pairing_mode: bool
    ) -> DeviceLink:
        """The protocol engine, answering through device_answers; the pairing key and the
        pairing switch are non-volatile: they survive resets, power cycles and re-plugs."""
        link = DeviceLink(
            execute=functools.partial(device_answers.execute, self),
            hello=functools.partial(device_answers.hello, self),
            clock=clock,
            on_output=self._notify,
            queue_capacity=queue_capacity,
            epoch=first_epoch(self.profile.serial_number),
        )
        link.pairing_key = pairing_key
        link.pairing_mode = pairing_mode
        return link

    def _start_card_path(self) -> None:
        """What the path a card takes out of the device keeps from one card to the next."""
        self._cards_in_round = 0
        self._feed_group = 0
        self._misread: tuple[CardId, Orientation, bool] | None = None
        """The latest card that left unread: the card, which way up, and whether a re-read
        can read it."""
        self.feed_overcount = 0
        """A faulty reader: each double feed is announced with this many cards more than left."""

    def _first_power_up(self) -> None:
        """The injections placed at power-up strike, then the firmware starts."""
        for injection in self.plan.take_at_power_up():
            self._strike(injection, Release(self.FACE))
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
        check_injections(injections, profile, self.FORBIDDEN_INJECTIONS)

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
        return device_answers.status(self, 0)

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
        """Let the next card (or a double feed) leave; False when nothing could leave.

        The injections due strike stage by stage (fault_effects.Stage): a blocking one
        keeps the card in; the others shape what leaves and change the shoe, in the
        order they were placed, then strike the transmission of its event."""
        if not self.plugged or self.door_open or FaultKind.JAM in self.active_faults:
            return False
        if not self.shoe.remaining:
            return False
        first_in_round = self.round > 0 and self._cards_in_round == 0
        due = self.plan.take_due(len(self.shoe.dealt) + 1, self.round, first_in_round)
        release = Release(orientation)
        blocking = [injection for injection in due if stage_of(injection) is Stage.BLOCK]
        if blocking:
            self.plan.injections[:0] = [i for i in due if stage_of(i) is not Stage.BLOCK]
            for injection in blocking:
                self._strike(injection, release)
            return False
        for injection in due:
            if stage_of(injection) is Stage.SHAPE:
                EFFECTS[injection.kind].act(self, injection, release)
            elif stage_of(injection) is not Stage.WIRE:
                self._strike(injection, release)
        release.seq = self.link.next_seq
        for injection in due:
            if stage_of(injection) is Stage.WIRE:
                log.info(
                    "simulator %s: injected fault %s on event %d",
                    self.serial_number,
                    injection,
                    release.seq,
                )
                EFFECTS[injection.kind].act(self, injection, release)
        self._cards_in_round += len(
            self._queue_cards(
                min(release.feed_size, self.shoe.remaining),
                release.orientation,
                in_order=release.in_order,
                unread=release.unread,
            )
        )
        if self.shoe.cut_card_at_exit:
            self._report_cut_card()
        if not self.shoe.remaining:
            self._queue(ShoeEmpty, cards_dealt=min(len(self.shoe.dealt), 0xFFFF))
        if release.unplug is not None:
            self.unplug()
            self._schedule(duration_of(release.unplug), self.replug)
        return True

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
            self._schedule(duration_of(injection), self.reread_card)

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

    def _strike(self, injection: Injection, release: Release) -> None:
        """Make an injected fault happen to the card about to leave (or at power-up)."""
        log.info("simulator %s: injected fault %s", self.serial_number, injection)
        EFFECTS[injection.kind].act(self, injection, release)

    def _cards_out(self) -> list[CardId]:
        """Cards dealt and not yet taken back in: a manual shoe takes none back."""
        return self.shoe.dealt

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

    def _notify(self) -> None:
        for listener in list(self._listeners):
            listener()
