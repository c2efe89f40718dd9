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
thread. On start the session rebuilds its state from the journal
(recovery.py) and tells the driver which events it already holds.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import structlog
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from cardshoe.controller.config import DeviceMode, TableConfig
from cardshoe.controller.errors import UserError
from cardshoe.controller.journal.errors import JournalStorageError
from cardshoe.controller.journal.repeats import RepeatCounter
from cardshoe.controller.journal.storage_watch import StorageProblem
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.journal.transaction import Transaction
from cardshoe.controller.procedure.facts import (
    Alarm,
    AlarmKind,
    CardCorrected,
    CorrectionMethod,
    Observer,
    ObserverHub,
    RefusedCommand,
    ShoeEnded,
    ShoeEnding,
    ShoeStarted,
)
from cardshoe.controller.procedure.holds import HoldReason
from cardshoe.controller.procedure.inputs import (
    HostFinding,
    JournalBehindDevice,
    StorageFault,
    StorageLow,
    StorageRecovered,
    record_kind,
    to_record,
)
from cardshoe.controller.procedure.machine import SHOE_OPEN, State
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
from cardshoe.controller.procedure.shoe import CardDue, Fact
from cardshoe.controller.procedure.table import TableModel
from cardshoe.controller.protection.watcher import ProtectionWatcher
from cardshoe.controller.record_kinds import (
    COMMAND_PREFIX,
    COMMAND_SIGN_IN,
    SESSION_COMMAND_DENIED,
    SESSION_DEVICE_REFUSED,
    SESSION_DEVICE_RESYNC,
    SESSION_OPERATOR,
    SESSION_PACK_CUSTODY,
    SESSION_REPEATED,
    SESSION_REREAD_BY,
    SESSION_STARTED,
    SESSION_STORAGE_ALARM,
    SESSION_SUPERVISOR_SIGNED_IN,
    SOFTWARE_AUTHENTICATED,
    SOFTWARE_FIRMWARE_UPDATE,
)
from cardshoe.controller.rules.cards import Card
from cardshoe.controller.service.count_watch import CHECK_INTERVAL_S, QUIET_S, CountWatch
from cardshoe.controller.service.draw_control import DrawControl
from cardshoe.controller.service.feed_watch import stalled_feed
from cardshoe.controller.service.firmware_update import (
    FirmwareAttempt,
    Outcome,
    install,
    read_signed_image,
)
from cardshoe.controller.service.recovery import (
    Recovered,
    journaled_apply,
    recover,
)
from cardshoe.controller.service.shoe_endings import next_machine_ending
from cardshoe.controller.service.software_identity import (
    SoftwareAnswer,
    authenticate,
    software_identity,
)
from cardshoe.drivers.api.device_link import Capability, DeviceLink
from cardshoe.drivers.api.events import (
    CardSeen,
    DeviceEvent,
    DeviceKind,
    LinkLost,
    LinkRestored,
    SequenceGap,
    SequenceRegression,
)
from cardshoe.drivers.errors import CommandRefused, DeviceGone, DeviceTimeout

log = structlog.get_logger(__name__)

PACK_POLL_S = 0.5
"""While --auto-shoe waits for a freshly loaded pack, ask the device this often."""
REPEAT_INTERVAL_S = 10.0
"""At most one record of each refused or rejected kind per this many seconds."""
REPEATABLE_ALARMS = frozenset({AlarmKind.PROCEDURE_VIOLATION, AlarmKind.DEVICE_FAULT})
"""An input whose only facts are these alarms changed nothing: a refusal, a rejected frame."""

ROUND_UNDER_WAY = frozenset({State.ROUND_BURN, State.DEALING})
"""Where the house's end-shoe lets the round finish and makes it the last (Art. 3.2)."""

_DEVICE_KINDS = {
    DeviceMode.SHOE: DeviceKind.SHOE,
    DeviceMode.AUTO: DeviceKind.DEALER,
}
_KIND_WORDS = {DeviceKind.SHOE: "manual shoe", DeviceKind.DEALER: "auto dealer"}


class ProcedureRefused(UserError):
    """An operator command the procedure does not allow now; it is journaled all the same."""


class DeviceNotApproved(UserError):
    """The device may not deal at this table (software verification); already journaled."""

    exit_code = 3


def last_dealer(journal: Journal) -> str | None:
    """The dealer the journal last recorded signing in, so a restart keeps who deals."""
    signed = None
    for record in journal.records(kinds=(COMMAND_SIGN_IN,)):
        signed = record.payload.get("dealer")
    return signed


def last_supervisor(journal: Journal) -> str | None:
    """The supervisor the journal last recorded signing in, so a restart keeps the witness."""
    signed = None
    for record in journal.records(kinds=(SESSION_SUPERVISOR_SIGNED_IN,)):
        signed = record.payload.get("supervisor")
    return signed


def journaled_stream_epoch(journal: Journal, device_serial: str) -> int | None:
    """The stream epoch the journal's seqs for this device count in; None if none is known.

    The latest of: a re-sync's new epoch, or the epoch a session started with.
    """
    epoch = None
    for record in journal.records(kinds=[SESSION_STARTED, SESSION_DEVICE_RESYNC]):
        if record.device_serial != device_serial:
            continue
        if record.kind == SESSION_DEVICE_RESYNC:
            epoch = record.payload.get("to_epoch")
        else:
            epoch = record.payload.get("device", {}).get("stream_epoch")
    return epoch


def record_device_refusal(
    journal: Journal,
    alarm: Alarm,
    *,
    device_serial: str | None,
    shoe_id: str | None = None,
    round_no: int | None = None,
) -> None:
    """Journal why a device was refused, as a session record that recovery passes over."""
    with journal.transaction() as transaction:
        transaction.append(
            SESSION_DEVICE_REFUSED,
            alarm.payload(),
            shoe_id=shoe_id,
            round_no=round_no,
            device_serial=device_serial,
        )


@dataclass(frozen=True)
class TableSnapshot:
    """What a display shows: where the procedure stands and the round on the table."""

    state: State
    held_state: State | None
    holds: tuple[str, ...]
    shoe_id: str | None
    round_no: int | None
    demo: bool
    player: tuple[Card, ...]
    banker: tuple[Card, ...]
    card_due: CardDue | None
    """What the next card is for: a hand, a burn, or None when no card may leave."""
    dealt: int
    burned: int
    rounds_finished: int
    last_round: int | None
    relief_burn_due: bool
    """A dealer relieved another: game.relief_burn cards burn after the next no more bets."""
    possible: tuple[str, ...] = ()
    """The operator commands the table accepts now (refusals.possible_commands)."""


class TableSession:
    """One table: its configuration, journal and device, and the procedure between them."""

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
        """Rebuild the table from the journal and get ready to take the device's events.

        Raises UserError when the device is of another kind than config.device.kind,
        ConfigError when an open shoe started under other game options, and
        DeviceNotApproved when its firmware hash is not in device.allowed_firmware_hashes.
        """
        self.config = config
        self.journal = journal
        self.device = device
        self._hub = ObserverHub(observers)
        self._clock = clock
        self._wall_clock = wall_clock
        self._lock = threading.RLock()
        self._stop = threading.Event()
        identity = device.identity
        self.device_serial = identity.serial_number
        expected_kind = _DEVICE_KINDS[config.device.kind]
        if identity.kind is not expected_kind:
            raise UserError(
                f"device.kind is {config.device.kind!s} but {device.url} is a "
                f"{_KIND_WORDS[identity.kind]}: correct device.kind or the device"
            )
        self.recovered: Recovered = recover(config, journal)
        self.model: TableModel = self.recovered.model
        self._watcher = ProtectionWatcher(config, journal, self.device_serial)
        self._hub.subscribe(self._watcher)
        self._last_seq = 0
        self._repeats = RepeatCounter(REPEAT_INTERVAL_S)
        self._space_low_told = False
        """StorageLow was applied (held, or refused where no hold is possible): once is enough."""
        self._failure: JournalStorageError | None = None
        """Set when the model could not be rebuilt after a failed transaction: the loop stops."""
        self._gap: SequenceGap | SequenceRegression | None = None
        self._last_ended: ShoeEnded | None = None
        self._machine_end_due = self._clock_ending_of_open_shoe()
        """When shoe.machine_end_at ends the open machine shoe, after the round under way."""
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
        self._pack_polled_at = -PACK_POLL_S
        self._count_watch = CountWatch()
        self._count_checked_at = clock()
        self._last_event_at = clock()
        self._last_card_at = clock()
        self._round_opened_at: float | None = None
        self._operator: dict[str, Any] | None = None
        self.dealer: str | None = last_dealer(journal)
        """The dealer signed in at the table, as the journal last recorded."""
        self.supervisor: str | None = last_supervisor(journal)
        """The supervisor signed in at the table, as the journal last recorded."""
        self.software = software_identity()
        """The software that runs the table, as session.started and each pack's custody say."""
        self._record_start()
        self._refuse_unapproved_firmware()
        self._take_up_device_stream()
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
            model, shoe, current = self.model, self.model.shoe, self.model.round
            return TableSnapshot(
                state=self.state,
                held_state=model.held_state,
                holds=tuple(model.holds),
                shoe_id=model.shoe_id,
                round_no=model.round_no,
                demo=current is not None and current.demo,
                player=() if current is None else current.deal.player,
                banker=() if current is None else current.deal.banker,
                card_due=model.card_due(),
                dealt=0 if shoe is None else shoe.dealt,
                burned=0 if shoe is None else shoe.burned,
                rounds_finished=0 if shoe is None else shoe.rounds_finished,
                last_round=None if shoe is None else shoe.last_round,
                relief_burn_due=shoe is not None and shoe.relief_burn_due,
                possible=tuple(model.possible_commands()),
            )

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
        """Who loaded the pack and who witnessed it, on which device under which software:
        the chain of custody a pack receipt (scoreboard/pack_receipt.py) prints."""
        info = self.device.identity
        return {
            "loaded_by": self.dealer,
            "witnessed_by": self.supervisor,
            "opened_by": None if self._operator is None else self._operator.get("user"),
            "device": {
                "maker": self.config.device.maker,
                "model": info.model,
                "serial_number": info.serial_number,
                "firmware_version": info.firmware_version,
                "firmware_hash": info.firmware_hash.hex(),
            },
            "software": self.software,
        }

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
            raise UserError(clear_hold_needs_text(self.model.holds))
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
        uid, user = operator.get("uid"), operator.get("user")
        kind = f"{SESSION_COMMAND_DENIED}.{command}.uid-{uid}.{user}"
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
            read = read_signed_image(data)
            if isinstance(read, FirmwareAttempt):
                attempt = read
            elif self.model.shoe_id is not None:
                attempt = FirmwareAttempt(
                    read.sha256.hex(),
                    read.version,
                    Outcome.REFUSED,
                    f"shoe {self.model.shoe_id} is open: end or abandon it first",
                )
            else:
                attempt = install(self.device, read, house_key, self.config.device)
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
            self._look_after_storage()
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
                    self._house_decisions(rounds, betting_time_s)
                self.step(poll_s)
                if on_step is not None:
                    on_step()
            return None
        finally:
            # The journal may close once the run ends: the last rounds' pricings go in first.
            self._watcher.drain()

    def fresh_pack_loaded(self) -> bool:
        """Whether a new shoe may open by itself: on a manual shoe, only once the device
        reports a freshly loaded pack (SHOE_LOADED, no card drawn since), so the cards left
        behind the last shoe's cut card are never taken for the next shoe's burn.

        An automatic machine makes its own shoe (SHUFFLE): always True. The device is
        asked at most every PACK_POLL_S.
        """
        if not self.config.uses_cut_card_and_burn:
            return True
        now = self._clock()
        if now < self._pack_polled_at + PACK_POLL_S:
            return False
        self._pack_polled_at = now
        try:
            status = self.device.get_status()
        except (CommandRefused, DeviceGone, DeviceTimeout):
            return False
        return bool(status.shoe_loaded) and status.cards_dealt == 0

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

    def _house_decisions(self, rounds: int | None, betting_time_s: float | None) -> None:
        shoe, round_no = self.model.shoe, self.model.round_no
        last_wanted = rounds is not None and round_no is not None and round_no >= rounds
        if self.state is State.DEALING and last_wanted and shoe and shoe.last_round is None:
            self._command(EndShoe())
        due = self._machine_end_due
        if due is not None and self.state in ROUND_UNDER_WAY and self._wall_clock() >= due:
            self._machine_end_due = None
            if shoe and shoe.last_round is None:
                self._command(EndShoe(ShoeEnding.MACHINE_END_AT))
        if self.state is not State.BETTING:
            self._round_opened_at = None
            return
        now = self._clock()
        if self._round_opened_at is None:
            self._round_opened_at = now
        if betting_time_s is not None and now - self._round_opened_at >= betting_time_s:
            self._command(CloseBets())

    # --- one input: journal, apply, commit, acknowledge, tell --------------------------

    def _handle(self, event: object) -> None:
        seq = event.seq if isinstance(event, DeviceEvent) else None
        if isinstance(event, SequenceGap | SequenceRegression):
            self._gap = event
        self._last_event_at = self._clock()
        self._draw.note(event)
        facts = self._apply(event)
        if seq is not None:
            self.device.ack(seq)
            self._last_seq = seq
        self._publish(facts)
        if isinstance(event, CardSeen):
            self._last_card, self._last_card_at = event, self._clock()
        elif isinstance(event, LinkLost):
            self._link_lost_reason = event.reason
        elif isinstance(event, LinkRestored):
            self._hold_when_the_device_cannot_replay(
                f"while its link was down ({self._link_lost_reason})"
            )

    def _check_count(self) -> None:
        """Now and then, with the link quiet, compare the device's card count (count_watch.py)."""
        now = self._clock()
        quiet = now - self._last_event_at >= QUIET_S
        if not quiet or now < self._count_checked_at + CHECK_INTERVAL_S:
            return
        if self.model.shoe is None or not self.device.connected:
            return
        self._count_checked_at = now
        try:
            status = self.device.get_status()
        except (CommandRefused, DeviceGone, DeviceTimeout):
            return
        if self.device.counters().get("delivered_seq", 0) > self._last_seq:
            return  # an event came meanwhile: the next quiet moment compares
        if status.cards_dealt is not None:
            self._find(self._count_watch.check(self.model, status.cards_dealt))

    def _find(self, finding: HostFinding | None) -> None:
        """Hold the table for a finding of the host's own watch (feed_watch.py)."""
        if finding is None:
            return
        log.error("holding the table", hold=finding.hold, reason=finding.detail)
        self._publish(self._apply(finding))

    def _apply(self, item: object, also: tuple[str, dict[str, Any]] | None = None) -> list[Fact]:
        """Journal the input and its facts in one transaction; the facts, once committed.

        also: a session record (kind, payload) that must commit with the input.
        A refusal or a rejected frame that RepeatCounter does not admit is rolled
        back, as it changed nothing. After any other failure the model is rebuilt
        from the journal, so it never stands ahead of it (a command whose COMMIT
        failed did not happen); if even that fails, the loop stops the service.
        """
        repeat_kind = _repeat_kind(item) if also is None else None
        try:
            with self.journal.transaction() as transaction:
                kind = record_kind(item)
                if self._operator is not None and kind.startswith(COMMAND_PREFIX):
                    transaction.append(
                        SESSION_OPERATOR,
                        {**self._operator, "command": kind},
                        shoe_id=self.model.shoe_id,
                        round_no=self.model.round_no,
                        device_serial=self.device_serial,
                    )
                facts = journaled_apply(self.model, item, transaction, self.device_serial)
                self._name_the_rereading_dealer(facts, transaction)
                if also is not None:
                    transaction.append(
                        also[0],
                        also[1],
                        shoe_id=self.model.shoe_id,
                        round_no=self.model.round_no,
                        device_serial=self.device_serial,
                    )
                if (
                    repeat_kind is not None
                    and _only_refusals(facts)
                    and not self._repeats.admit(repeat_kind, self._clock())
                ):
                    raise _Counted(facts)
        except _Counted as counted:
            return counted.facts
        except BaseException:
            self._rebuild_from_journal()
            raise
        return facts

    def _name_the_rereading_dealer(self, facts: list[Fact], transaction: Transaction) -> None:
        """A re-read is the dealer's, at the device: name the dealer signed in beside it.

        The procedure's correction cannot name them (its facts follow from its inputs
        alone, and who deals is the session's), so a session record does, in the same
        transaction.
        """
        for fact in facts:
            event = fact.event
            if isinstance(event, CardCorrected) and event.correction is CorrectionMethod.REREAD:
                transaction.append(
                    SESSION_REREAD_BY,
                    {"dealer": self.dealer, "card": str(event.card)},
                    shoe_id=fact.shoe_id,
                    round_no=fact.round_no,
                    device_serial=self.device_serial,
                )

    def _rebuild_from_journal(self) -> None:
        try:
            self.model = recover(self.config, self.journal).model
        except Exception as exc:
            self._failure = JournalStorageError(
                f"{self.journal.path}: the table cannot be rebuilt from the journal after a "
                f"failed write ({exc}): the service stops so that it restarts from the journal"
            )
            log.error("journal rebuild failed", reason=str(exc))

    # --- storage: notices, repeats, free space ------------------------------------------

    def _look_after_storage(self) -> None:
        """Between events: what the journal survived, the repeats counted, the free space."""
        if self._failure is not None:
            raise self._failure
        for notice in self.journal.take_notices():
            log.error("journal storage fault", problem=notice.problem.value, detail=notice.detail)
            if notice.problem is StorageProblem.FILES_REPLACED:
                self._publish(self._apply(StorageFault(notice.detail)))
            elif self._repeats.admit(SESSION_STORAGE_ALARM, self._clock()):
                self._record_alarm(SESSION_STORAGE_ALARM, Alarm(AlarmKind.STORAGE, notice.detail))
        for repeats in self._repeats.due(self._clock()):
            self._record_session(
                SESSION_REPEATED,
                {
                    "kind": repeats.kind,
                    "count": repeats.count,
                    "interval_s": self._repeats.interval_s,
                },
            )
        self._watch_free_space()

    def _watch_free_space(self) -> None:
        """Hold before the disk is full, while a hold can still be journaled; resume after.

        Asked at every step (a statvfs costs about a microsecond), so a disk filled by
        something else as fast as it can write is still caught before the journal's next
        few commits.
        """
        floor = self.config.service.journal_min_free_bytes
        low = self.journal.free_bytes() < floor
        held = HoldReason.JOURNAL_SPACE_LOW in self.model.holds
        if low and not held and not self._space_low_told:
            self._space_low_told = True
            free = self.journal.free_bytes()
            log.error("journal disk space below the floor", free_bytes=free, floor_bytes=floor)
            self._publish(self._apply(StorageLow(free, floor)))
        elif not low:
            self._space_low_told = False
            if held:
                self._publish(self._apply(StorageRecovered(self.journal.free_bytes())))

    def _record_alarm(self, kind: str, alarm: Alarm) -> None:
        self._record_session(kind, alarm.payload())
        self._hub.publish([alarm])

    def _record_session(self, kind: str, payload: dict[str, object]) -> None:
        """A record about the controller process, which replay passes over."""
        with self.journal.transaction() as transaction:
            transaction.append(
                kind,
                payload,
                shoe_id=self.model.shoe_id,
                round_no=self.model.round_no,
                device_serial=self.device_serial,
            )

    @contextmanager
    def _log_context(self) -> Iterator[None]:
        """Every log line while the session works says which table, shoe and round.

        Reset by token rather than through bound_contextvars, which reads the whole
        context on the way in and binds twice on the way out: this runs three times a card.
        """
        tokens = structlog.contextvars.bind_contextvars(
            table_id=self.config.table_id, shoe_id=self.model.shoe_id, round_no=self.model.round_no
        )
        try:
            yield
        finally:
            structlog.contextvars.reset_contextvars(**tokens)

    def _publish(self, facts: list[Fact]) -> None:
        events = [fact.event for fact in facts]
        for event in events:
            if isinstance(event, ShoeEnded):
                self._last_ended = event
                self._machine_end_due = None
            if isinstance(event, ShoeStarted):
                self._machine_end_due = self._clock_ending(self._wall_clock())
        self._hub.publish(events)

    def _clock_ending(self, opened: datetime) -> datetime | None:
        """When shoe.machine_end_at ends a machine shoe opened then; None on a manual shoe."""
        if self.config.uses_cut_card_and_burn:
            return None
        return next_machine_ending(opened, self.config.shoe.machine_end_times)

    def _clock_ending_of_open_shoe(self) -> datetime | None:
        """The open shoe's clock ending, from when the journal says it started."""
        shoe_id = self.model.shoe_id
        if shoe_id is None:
            return None
        started = next(self.journal.records(shoe_id=shoe_id, kinds=(ShoeStarted.KIND,)), None)
        if started is None:
            return None
        return self._clock_ending(datetime.fromtimestamp(started.time_ns / 1e9, UTC))

    def _record_start(self) -> None:
        recovered = self.recovered
        with self.journal.transaction() as transaction:
            transaction.append(
                SESSION_STARTED,
                {
                    "device": self.device.describe(),
                    "software": self.software,
                    "inputs_replayed": recovered.inputs_replayed,
                    "replay_mismatches": list(recovered.mismatches),
                },
                shoe_id=self.model.shoe_id,
                round_no=self.model.round_no,
                device_serial=self.device_serial,
            )
        log.info(
            "session started",
            table_id=self.config.table_id,
            state=self.model.state,
            shoe_id=self.model.shoe_id,
            inputs_replayed=recovered.inputs_replayed,
        )
        if recovered.mismatches:
            detail = f"{len(recovered.mismatches)} replayed input(s) differ from the journal"
            log.error("journal replay mismatch", mismatches=list(recovered.mismatches))
            self._hub.publish([Alarm(AlarmKind.JOURNAL, detail)])

    def _take_up_device_stream(self) -> None:
        """Tell the driver the last event the journal holds for this device, and its epoch.

        A device whose acknowledged events go further than that, in the same stream epoch
        (or one the journal never saw), has forgotten events the journal never kept (a lost
        or replaced journal): they are gone from both sides, so the table holds with an
        alarm (journal_behind_device) instead of trusting the device's word. A device in
        another epoch than the journal's restarted its stream: the driver reports that as a
        regression, which an operator re-synchronises.
        """
        journaled = self.journal.last_device_seq(self.device_serial) or 0
        epoch = journaled_stream_epoch(self.journal, self.device_serial)
        device_acked = self.device.counters().get("last_acked_seq", 0)
        same_stream = epoch is None or self.device.identity.epoch in (None, epoch)
        if same_stream and device_acked > journaled:
            log.error(
                "the device acknowledged events the journal does not hold",
                journaled_seq=journaled,
                device_acked_seq=device_acked,
            )
            self._publish(self._apply(JournalBehindDevice(journaled, device_acked)))
            journaled = device_acked
        self._last_seq = journaled
        self.device.set_journaled_seq(journaled, epoch)

    def _hold_when_the_device_cannot_replay(self, meanwhile: str) -> None:
        """Restarted, or the link back, in the middle of a shoe with a device that does not
        resend what it sent meanwhile (no acknowledged delivery): a card may have left while
        nothing recorded it, so the table holds until a supervisor confirms the layout
        (docs/drivers.md). meanwhile: when the device went unheard, for the journaled reason."""
        model = self.model
        if Capability.ACKNOWLEDGED_DELIVERY in self.device.capabilities or model.shoe is None:
            return
        if model.state not in (*SHOE_OPEN, State.HELD) or (
            HoldReason.DEVICE_CANNOT_REPLAY in model.holds
        ):
            return
        identity = self.device.identity
        self._find(
            HostFinding(
                HoldReason.DEVICE_CANNOT_REPLAY,
                f"{identity.protocol} device {identity.serial_number} does not resend what it "
                f"sent {meanwhile}, in the middle of shoe {model.shoe_id}",
            )
        )

    def _refuse_unapproved_firmware(self) -> None:
        """Deal nothing with a firmware image the table's allow-list does not hold.

        The hash is the one the device reported at the handshake (authenticated
        when the link is). The refusal is journaled and alarmed before it is raised.
        """
        info = self.device.identity
        if self.config.device.firmware_approved(info.firmware_hash):
            return
        if info.firmware_hash:
            detail = (
                f"device {info.serial_number} runs firmware {info.firmware_version} "
                f"(sha256 {info.firmware_hash.hex()}), which device.allowed_firmware_hashes "
                "does not list"
            )
            fix = "install an approved image, or add its hash once it is approved"
        else:
            detail = (
                f"{info.protocol} device {info.serial_number} reports no firmware, so "
                "device.allowed_firmware_hashes cannot apply to it"
            )
            fix = (
                "remove allowed_firmware_hashes from [device] in the table's configuration "
                "(the allow-list checks only a device that reports its firmware)"
            )
        alarm = Alarm(AlarmKind.FIRMWARE, detail)
        record_device_refusal(
            self.journal,
            alarm,
            device_serial=self.device_serial,
            shoe_id=self.model.shoe_id,
            round_no=self.model.round_no,
        )
        log.error("device refused", reason=alarm.detail)
        self._hub.publish([alarm])
        raise DeviceNotApproved(f"{alarm.detail}: {fix}")


class _Counted(Exception):
    """Rolls back a refusal RepeatCounter only counts, carrying the facts to publish."""

    def __init__(self, facts: list[Fact]) -> None:
        super().__init__("counted, not journaled")
        self.facts = facts


def _repeat_kind(item: object) -> str | None:
    """The record kind an input is counted under when it changes nothing; None for a
    device event (journaled and acknowledged one by one) or an input vouching for a seq."""
    if isinstance(item, DeviceEvent):
        return None
    record = to_record(item)
    return record.kind if record.device_seq is None else None


def _only_refusals(facts: list[Fact]) -> bool:
    return bool(facts) and all(
        isinstance(fact.event, RefusedCommand)
        or (isinstance(fact.event, Alarm) and fact.event.kind in REPEATABLE_ALARMS)
        for fact in facts
    )
