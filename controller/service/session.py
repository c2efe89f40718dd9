"""The table session: device events in; journal, procedure, acknowledgement, draw control out.

For every device event, in this order:

1. one journal transaction holds the event and every fact it causes;
2. the transaction commits (SQLite WAL, synchronous=FULL);
3. the event is acknowledged to the device: only now, so a crash before
   this point makes the device send the event again, and the journal,
   which already holds it, lets the driver drop it as a duplicate;
4. the observers hear the facts;
5. draw control (draw_control.py) asks the device for what the new state
   needs: one card released or dealt for its named recipient, a RETURN, a
   SHUFFLE, or the counts for a shoe's reconciliation.

Operator commands (start a shoe, close bets, confirm a face-down card...)
take the same path without the acknowledgement, and may come from another
thread. Constructing a session only wires its parts; start() (or open(), which
does both) rebuilds its state from the journal (recovery.py), journals the start
and tells the driver which events it already holds (session_start.py).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import structlog

from cardshoe.controller.config import TableConfig
from cardshoe.controller.errors import UserError
from cardshoe.controller.journal.errors import JournalStorageError
from cardshoe.controller.journal.repeats import RepeatCounter
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.procedure.facts import (
    Alarm,
    Observer,
    ObserverHub,
    RefusedCommand,
    ShoeEnded,
    ShoeStarted,
)
from cardshoe.controller.procedure.holds import HoldReason
from cardshoe.controller.procedure.machine import State
from cardshoe.controller.procedure.operator_commands import (
    ClearHold,
    CloseBets,
    CutDone,
    EndShoe,
    EnterCard,
    OperatorCommand,
    ShoeLoaded,
    SignIn,
    StartShoe,
)
from cardshoe.controller.procedure.operator_input import (
    check_shoe_id,
    parse_deck_set,
    parse_entered_card,
)
from cardshoe.controller.procedure.refusals import clear_hold_needs_text
from cardshoe.controller.protection.watcher import ProtectionWatcher
from cardshoe.controller.record_kinds import (
    SESSION_COMMAND_DENIED,
    SESSION_DEVICE_RESYNC,
    SESSION_PACK_CUSTODY,
    SESSION_SUPERVISOR_SIGNED_IN,
    SOFTWARE_AUTHENTICATED,
    SOFTWARE_FIRMWARE_UPDATE,
)
from cardshoe.controller.service.count_watch import CountWatch
from cardshoe.controller.service.draw_control import DrawControl
from cardshoe.controller.service.feed_watch import stalled_feed
from cardshoe.controller.service.firmware_update import FirmwareAttempt, attempt_at_table
from cardshoe.controller.service.house_decisions import HouseDecisions
from cardshoe.controller.service.input_path import InputPath
from cardshoe.controller.service.logging_setup import SESSION_LOGGER
from cardshoe.controller.service.recovery import Recovered, recover
from cardshoe.controller.service.session_records import last_dealer, last_supervisor, pack_custody
from cardshoe.controller.service.session_repeats import (
    REPEAT_INTERVAL_S,
)
from cardshoe.controller.service.session_start import (
    check_device_kind,
    record_start,
    refuse_unapproved_firmware,
    take_up_device_stream,
)
from cardshoe.controller.service.software_identity import (
    SoftwareAnswer,
    authenticate,
    software_identity,
)
from cardshoe.controller.service.storage_care import StorageCare
from cardshoe.controller.service.table_snapshot import TableSnapshot, snapshot_of
from cardshoe.drivers.api.device_link import DeviceLink
from cardshoe.drivers.api.events import (
    CardSeen,
    SequenceGap,
    SequenceRegression,
)
from cardshoe.drivers.errors import CommandRefused, DeviceGone, DeviceTimeout

if TYPE_CHECKING:
    # Types only: cryptography's bindings cost ~7 MB resident (bench/bench_service.py),
    # which the service pays only when a firmware update runs (firmware_update.py).
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

log = structlog.get_logger(SESSION_LOGGER)


class ProcedureRefused(UserError):
    """An operator command the procedure does not allow now; it is journaled all the same."""


class TableSession(InputPath):
    """One table: its configuration, journal and device, and the procedure between them."""

    recovered: Recovered
    """What recovery found at start(): the model, the inputs replayed, any mismatch."""
    _watcher: ProtectionWatcher
    """Game protection (set by start(), which reads the journal and starts the pricing)."""

    def __init__(
        self,
        config: TableConfig,
        journal: Journal,
        device: DeviceLink,
        observers: Iterable[Observer] = (),
        *,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        """Wire the table's parts; nothing is read or written until start(), so that
        building a session does no I/O. open() builds and starts one."""
        self.config = config
        self.journal = journal
        self.device = device
        self._hub = ObserverHub(observers)
        self._clock = clock
        self._wall_clock = wall_clock
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self.device_serial = device.identity.serial_number
        self._last_seq = 0
        self._repeats = RepeatCounter(REPEAT_INTERVAL_S)
        self._storage = StorageCare(
            config,
            journal,
            lambda: self.model,
            self._repeats,
            clock,
            take=lambda item: self._publish(self._apply(item)),
            record_session=self._record_session,
            record_alarm=self._record_alarm,
        )
        self._failure: JournalStorageError | None = None
        """Set when the model could not be rebuilt after a failed transaction: the loop stops."""
        self._gap: SequenceGap | SequenceRegression | None = None
        self._last_ended: ShoeEnded | None = None
        self._house = HouseDecisions(config, device, clock=clock, wall_clock=wall_clock)
        self._draw = DrawControl(
            device,
            lambda: self.model,
            decks=config.game.decks,
            record_count=lambda count: self._publish(self._apply(count)),
            clock=clock,
        )
        self._last_card: CardSeen | None = None
        self._link_lost_reason = "lost before this session started"
        """Why the device's link was last lost, for the reason of a hold when it is back."""
        self._count_watch = CountWatch()
        self._count_checked_at = clock()
        self._last_event_at = clock()
        self._last_card_at = clock()
        self._operator: dict[str, Any] | None = None
        self.dealer: str | None = None
        """The dealer signed in at the table, as the journal last recorded (from start())."""
        self.supervisor: str | None = None
        """The supervisor signed in at the table, as the journal last recorded (from start())."""
        self.software: dict[str, str] = {}
        """The software that runs the table, as session.started and each pack's custody say."""

    @classmethod
    def open(
        cls,
        config: TableConfig,
        journal: Journal,
        device: DeviceLink,
        observers: Iterable[Observer] = (),
        *,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> TableSession:
        """A session built and started (start()): the one call most callers need."""
        session = cls(config, journal, device, observers, clock=clock, wall_clock=wall_clock)
        session.start()
        return session

    def start(self) -> None:
        """Rebuild the table from the journal and get ready to take the device's events.

        In this order: the device's kind, recovery, the game-protection watcher, who
        is signed in, session.started, the firmware allow-list, the device's stream,
        and a hold when a device that cannot resend went unheard (session_start.py).
        Raises UserError when the device is of another kind than config.device.kind,
        ConfigError when an open shoe started under other game options, and
        DeviceNotApproved when its firmware hash is not in device.allowed_firmware_hashes.
        """
        check_device_kind(self.config, self.device)
        self.recovered = recover(self.config, self.journal)
        self.model = self.recovered.model
        self._watcher = ProtectionWatcher(self.config, self.journal, self.device_serial)
        self._hub.subscribe(self._watcher)
        self._house.recover(self.journal, self.model)
        self.dealer = last_dealer(self.journal)
        self.supervisor = last_supervisor(self.journal)
        self.software = software_identity()
        record_start(
            self.config, self.journal, self.device, self.recovered, self.software, self._hub
        )
        refuse_unapproved_firmware(self.config, self.journal, self.device, self.model, self._hub)
        self._last_seq = take_up_device_stream(
            self.journal, self.device, lambda held: self._publish(self._apply(held))
        )
        self._hold_when_the_device_cannot_replay("while the controller was down")

    def subscribe(self, observer: Observer) -> None:
        """Add an observer (a display, a floor link) after the session has started."""
        self._hub.subscribe(observer)

    def watch_surveillance(self, listener: Callable[[Alarm], None]) -> None:
        """Hear the game-protection watcher's alarms, which observers never get (the table's
        displays must not show them): for a surveillance consumer such as the demo's output."""
        self._watcher.add_alarm_listener(listener)

    # --- what displays and the service read ---------------------------------------

    @property
    def state(self) -> State:
        return State(self.model.state)

    def snapshot(self) -> TableSnapshot:
        with self._lock:
            return snapshot_of(self.model)

    # --- operator commands ------------------------------------------------------------

    def start_shoe(self, shoe_id: str | None = None, deck_set: int | str | None = None) -> str:
        """Open a shoe; returns its id (by default table id and UTC time).

        deck_set as typed (0x00BC614E, or decimal) or as a number. UserError for
        an id outside the safe alphabet or one this journal already holds, and
        for a deck set that is no u32: nothing is journaled then.
        """
        shoe_id = shoe_id or f"{self.config.table_id}-{datetime.now(UTC):%Y%m%dT%H%M%S%fZ}"
        check_shoe_id(shoe_id)
        declared = None if deck_set is None else parse_deck_set(deck_set)
        with self._lock:
            if self.model.shoe is None and self._journal_has_shoe(shoe_id):
                raise UserError(
                    f"shoe {shoe_id} is already in the journal {self.journal.path}: "
                    "each shoe needs its own id (leave --shoe-id out for a generated one)"
                )
            self._command(StartShoe(shoe_id, declared))
            if self.model.shoe_id == shoe_id:
                self._record_session(SESSION_PACK_CUSTODY, self._pack_custody())
            if self.model.shoe_id == shoe_id and self.device.connected:
                with contextlib.suppress(CommandRefused, DeviceGone, DeviceTimeout):
                    dealt = self.device.get_status().cards_dealt
                    if dealt is not None:  # a device that counts nothing is not watched
                        self._count_watch.opened(shoe_id, dealt)
        return shoe_id

    def _pack_custody(self) -> dict[str, Any]:
        """The chain of custody of the pack a shoe opens with (session_records.py)."""
        opened_by = None if self._operator is None else self._operator.get("user")
        return pack_custody(
            self.config, self.device, (self.dealer, self.supervisor, opened_by), self.software
        )

    def _journal_has_shoe(self, shoe_id: str) -> bool:
        return (
            next(self.journal.records(shoe_id=shoe_id, kinds=(ShoeStarted.KIND,)), None) is not None
        )

    def operate(self, command: OperatorCommand, **arguments: Any) -> None:
        """An operator command whose procedure input is built from its arguments alone
        (operator_commands.py): journaled as an input, accepted or refused, like the
        dealer's button. ProcedureRefused says why the procedure refused it.

        The commands with methods of their own here need the session: new-shoe (the id,
        the pack's custody), sign-in and supervisor-sign-in (who holds the table),
        enter-card (the card checked, the operator named) and clear-hold (the device's
        stream taken up again).
        """
        self._command(command.make(arguments))

    def house_command(self, command: EndShoe | CloseBets) -> None:
        """The house's own decision (house_decisions.py), journaled as an input like an
        operator's command."""
        self._command(command)

    def enter_card(self, card: str, note: str | None = None) -> None:
        """A supervisor enters the card the reader could not read (Art. 10 correction).

        UserError for text that is not one card, before anything is journaled;
        the procedure refuses it unless a misread card awaits correction. The
        operator giving the command is named in the correction it records.
        """
        entered = parse_entered_card(card)
        with self._lock:
            self._command(EnterCard(str(entered), note, self._operator))

    def clear_hold(self, reason: str | None = None, note: str | None = None) -> None:
        """Resolve a hold only a person can resolve: a sequence gap or regression, a deck set
        that is not the declared one, a pack of the wrong count. reason names the hold;
        note is the person's own words.

        A gap: the lost events are given up, the driver resumes with the event
        after them. A regression: the table re-synchronises to the device's
        stream as it now is (a new epoch, or a counter that went back), after the
        device's own last acknowledged seq, so every event it still holds is
        taken; the re-sync is journaled with the clear, in one transaction.
        UserError, before anything is journaled, when no hold is named: it lists the
        active holds a person clears.
        """
        if reason is None:
            raise UserError(clear_hold_needs_text(self.model.clearable_holds()))
        gap, resync = self._gap, None
        accepted = None
        if reason == HoldReason.SEQUENCE_GAP and isinstance(gap, SequenceGap):
            accepted = gap.got - 1
        if reason == HoldReason.SEQUENCE_REGRESSION and isinstance(gap, SequenceRegression):
            accepted = gap.device_acked_seq
            resync = (
                SESSION_DEVICE_RESYNC,
                {
                    "from_epoch": gap.host_epoch,
                    "to_epoch": self.device.identity.epoch,
                    "host_seq": gap.host_seq,
                    "resumed_after": accepted,
                },
            )
        with self._lock:
            self._draw.reread()
            self._command(ClearHold(reason, accepted, note), also=resync)
            if isinstance(gap, SequenceRegression) and accepted is not None:
                self.device.resync(accepted)
                self._draw.restart(self.device.counters()["next_seq"] - 1)
            elif accepted is not None:
                self.device.set_journaled_seq(accepted)
            if accepted is not None:
                self._last_seq = accepted
                self._gap = None

    @contextmanager
    def acting_as(self, operator: Mapping[str, Any]) -> Iterator[None]:
        """Commands given inside are journaled with who gave them (a session.operator record
        in the command's own transaction)."""
        with self._lock:
            self._operator = dict(operator)
            try:
                yield
            finally:
                self._operator = None

    def record_denied(self, command: str, operator: Mapping[str, Any], needs: str) -> None:
        """Journal a command refused for its giver's role; it never reaches the procedure.

        A client can repeat a denied command as fast as it can send, so like any other
        refusal it is journaled once per command and uid per interval and otherwise counted:
        who was denied what still shows for each person.
        """
        kind = (
            f"{SESSION_COMMAND_DENIED}.{command}.uid-{operator.get('uid')}.{operator.get('user')}"
        )
        with self._lock:
            if self._repeats.admit(kind, self._clock()):
                self._record_session(
                    SESSION_COMMAND_DENIED, {**operator, "command": command, "needs": needs}
                )

    def record_console(self, kind: str, payload: dict[str, object]) -> None:
        """Journal what happened at the table's console (console_access.py): a PIN given,
        a sign-out. Not an input: it changes no card's way."""
        with self._lock:
            self._record_session(kind, payload)

    def authenticate_software(self, seed: bytes, operator: Mapping[str, Any]) -> SoftwareAnswer:
        """Answer a regulator's seed from the files on disk now, and journal the answer."""
        answer = authenticate(seed)
        with self._lock:
            self._record_session(
                SOFTWARE_AUTHENTICATED,
                {"seed": answer.seed, "digest": answer.digest, "operator": dict(operator)},
            )
        return answer

    def update_firmware(
        self, data: bytes, house_key: Ed25519PublicKey, operator: Mapping[str, Any]
    ) -> FirmwareAttempt:
        """Install a signed image on the table's device while no shoe is open, and journal
        the attempt whatever its outcome (firmware_update.py)."""
        with self._lock:
            attempt = attempt_at_table(
                self.device, data, house_key, self.config.device, self.model.shoe_id
            )
            self._record_session(SOFTWARE_FIRMWARE_UPDATE, attempt.payload(operator))
        return attempt

    def supervisor_sign_in(self) -> str | None:
        """The supervisor giving the command takes the table; returns the one relieved.

        A session record, not a procedure input: the supervisor changes no card's way,
        only who witnesses the packs loaded from now on (each shoe's custody names them).
        """
        with self._lock:
            operator = self._operator or {}
            relieved = self.supervisor
            supervisor = str(operator.get("user", "")) or None
            self._record_session(
                SESSION_SUPERVISOR_SIGNED_IN, {"supervisor": supervisor, "relieves": relieved}
            )
            self.supervisor = supervisor
            return relieved

    def sign_in(self) -> str | None:
        """The dealer giving the command takes the table; returns the dealer relieved.

        Journaled as an input (command.sign_in), since under game.relief_burn a
        relief in the middle of a shoe makes the house burn before the next deal.
        """
        with self._lock:
            operator = self._operator or {}
            relieved = self.dealer
            dealer = str(operator.get("user", "")) or None
            self._command(SignIn(dealer, relieved))
            self.dealer = dealer
            return relieved

    def _command(self, command: object, also: tuple[str, dict[str, Any]] | None = None) -> None:
        with self._lock, self._log_context():
            facts = self._apply(command, also)
            self._publish(facts)
            refusals = [
                fact.event.reason for fact in facts if isinstance(fact.event, RefusedCommand)
            ]
            self._draw.drive(self._last_seq)
        if refusals:
            log.info("operator command refused", reason="; ".join(refusals))
            raise ProcedureRefused("; ".join(refusals))

    # --- the loop -----------------------------------------------------------------------

    def step(self, timeout: float = 0.1) -> bool:
        """Handle the next device event, waiting up to timeout; True when one was handled.

        Device commands go out only when no event is waiting, so they always
        follow from everything the device has already reported.
        """
        with self._lock, self._log_context():
            if self._failure is not None:
                raise self._failure
            self._storage.look_after()
        event = self.device.next_event(0)
        if event is None:
            with self._lock, self._log_context():
                idle_s = self._clock() - self._last_card_at
                self._find(stalled_feed(self.model, self._last_card, idle_s))
                self._check_count()
                self._draw.drive(self._last_seq)
            event = self.device.next_event(timeout)
        if event is None:
            return False
        with self._lock, self._log_context():
            self._handle(event)
        return True

    def run_shoe(
        self,
        *,
        shoe_id: str | None = None,
        deck_set: int | None = None,
        rounds: int | None = None,
        betting_time_s: float | None = None,
        poll_s: float = 0.05,
        on_step: Callable[[], None] | None = None,
    ) -> ShoeEnded | None:
        """Run one shoe to its reconciliation; None when stop() ended the run first.

        With no shoe open, open one (a manual shoe counts as loaded and cut:
        call this once the dealer has done both). A shoe that recovery found
        open simply goes on. rounds: the house ends the shoe after that many
        rounds (the automatic machine has no cut card). betting_time_s: close
        bets by command that long after each round opens; None waits for the
        dealer button or no-more-bets. on_step: called in this loop after every
        step; a service pings its watchdog there, so a stuck loop stops the pings.
        """
        self._stop.clear()
        self._last_ended = None
        opened = False
        try:
            while not self._stop.is_set():
                with self._lock:
                    if self.state is State.IDLE and self._last_ended is not None:
                        return self._last_ended
                    if self.state is State.IDLE and not opened:
                        self._open_shoe(shoe_id, deck_set)
                        opened = True
                    self._house.decide(self, rounds, betting_time_s)
                self.step(poll_s)
                if on_step is not None:
                    on_step()
            return None
        finally:
            # The journal may close once the run ends: the last rounds' pricings go in first.
            self._watcher.drain()

    def fresh_pack_loaded(self) -> bool:
        """Whether a new shoe may open by itself (house_decisions.py)."""
        return self._house.fresh_pack_loaded()

    def _open_shoe(self, shoe_id: str | None, deck_set: int | None) -> None:
        self.start_shoe(shoe_id, deck_set)
        if self.config.uses_cut_card_and_burn:
            self._command(ShoeLoaded())
            self._command(CutDone())

    def stop(self) -> None:
        """Make run_shoe return after the step under way (from any thread)."""
        self._stop.set()

    def wait_for_surveillance(self) -> None:
        """Return once every round so far is priced and its alarms journaled.

        The watcher journals from its own thread a few milliseconds after a
        round; a reader that needs the journal to stand still between two
        steps (a check after every round) waits for it here.
        """
        self._watcher.drain()
