"""The table session: device events in; journal, procedure, acknowledgement, draw control out.

For every device event, in this order:

1. one journal transaction holds the event and every fact it causes;
2. the transaction commits (SQLite WAL, synchronous=FULL);
3. the event is acknowledged to the device: only now, so a crash before
   this point makes the device send the event again, and the journal,
   which already holds it, lets the driver drop it as a duplicate;
4. the observers hear the facts;
5. draw control for the new state: on a manual shoe the gate releases
   exactly one card when the rules engine has named its recipient (or a
   burn is due) and stays locked otherwise; on an automatic machine
   DEAL_NEXT asks for that card, RETURN takes each round back and SHUFFLE
   makes a new shoe. When a shoe ends, the device's counts are read for
   the reconciliation.

Operator commands (start a shoe, close bets, confirm a face-down card...)
take the same path without the acknowledgement, and may come from another
thread. On start the session rebuilds its state from the journal
(recovery.py) and tells the driver which events it already holds.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import structlog

from cardshoe.controller.config import DeviceMode, TableConfig
from cardshoe.controller.errors import UserError
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.procedure.facts import (
    Alarm,
    AlarmKind,
    Observer,
    ObserverHub,
    RefusedCommand,
    ShoeEnded,
    ShoeStarted,
)
from cardshoe.controller.procedure.holds import HoldReason
from cardshoe.controller.procedure.inputs import (
    AbandonShoe,
    ClearHold,
    CloseBets,
    ConfirmFaceUp,
    CutDone,
    DeviceCount,
    EndShoe,
    PackCount,
    ShoeLoaded,
    StartShoe,
    VoidRound,
    to_record,
)
from cardshoe.controller.procedure.machine import State
from cardshoe.controller.procedure.operator_input import check_shoe_id, parse_deck_set
from cardshoe.controller.procedure.shoe import CardDue, Fact
from cardshoe.controller.procedure.table import TableModel
from cardshoe.controller.rules.cards import Card
from cardshoe.controller.service.recovery import (
    SESSION_KIND_PREFIX,
    Recovered,
    journaled_apply,
    recover,
)
from cardshoe.drivers.device import DealerDevice, ShoeDevice
from cardshoe.drivers.errors import CommandRefused, DeviceGone, DeviceTimeout
from cardshoe.drivers.link_events import LinkRestored, SequenceGap, SequenceRegression
from cardshoe.drivers.protocol.messages import (
    Capability,
    CardRead,
    DeviceKind,
    Event,
    Fault,
    FaultCleared,
    GateMode,
    SelfTestResult,
    StatusFlag,
)

log = structlog.get_logger(__name__)

RETRY_INTERVAL_S = 0.5
"""After a refused or failed device command, wait this long before asking again."""
SESSION_STARTED = SESSION_KIND_PREFIX + "started"
"""A record about the controller process itself, which replay skips."""
DEVICE_REFUSED = SESSION_KIND_PREFIX + "device_refused"
"""Why the controller would not deal with the device; its payload is the alarm's."""
COMMAND_PREFIX = "command."
"""The journal kinds of operator commands (inputs.HOST_INPUTS)."""
OPERATOR = SESSION_KIND_PREFIX + "operator"
"""Who gave the command journaled right after it in the same transaction: uid, user, role."""
COMMAND_DENIED = SESSION_KIND_PREFIX + "command_denied"
"""A command refused because of who gave it (their role), before it reached the procedure."""
DEALER_SIGNED_IN = SESSION_KIND_PREFIX + "dealer_signed_in"
"""A dealer took the table; relieves names the dealer they took it from."""

_DEVICE_KINDS = {
    DeviceMode.SHOE: DeviceKind.MANUAL_SHOE,
    DeviceMode.AUTO: DeviceKind.AUTO_DEALER,
}


class ProcedureRefused(UserError):
    """An operator command the procedure does not allow now; it is journaled all the same."""


class DeviceNotApproved(UserError):
    """The device may not deal at this table (software verification); already journaled."""

    exit_code = 3


def last_dealer(journal: Journal) -> str | None:
    """The dealer the journal last recorded signing in, so a restart keeps who deals."""
    signed = None
    for record in journal.records(kinds=(DEALER_SIGNED_IN,)):
        signed = record.payload.get("user")
    return signed


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
            DEVICE_REFUSED,
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


class TableSession:
    """One table: its configuration, journal and device, and the procedure between them."""

    def __init__(
        self,
        config: TableConfig,
        journal: Journal,
        device: ShoeDevice | DealerDevice,
        observers: Iterable[Observer] = (),
        *,
        clock: Callable[[], float] = time.monotonic,
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
        self._lock = threading.RLock()
        self._stop = threading.Event()
        info = device.info
        self.device_serial = info.serial_number
        expected_kind = _DEVICE_KINDS[config.device.kind]
        if info.kind is not expected_kind:
            raise UserError(
                f"device.kind is {config.device.kind!s} but {info.url} is a "
                f"{info.kind.name.lower().replace('_', ' ')}: correct device.kind or the device"
            )
        self.recovered: Recovered = recover(config, journal)
        self.model: TableModel = self.recovered.model
        self._last_seq = journal.last_device_seq(self.device_serial) or 0
        device.set_journaled_seq(journal.last_device_seq(self.device_serial))
        self._gap: SequenceGap | SequenceRegression | None = None
        self._last_ended: ShoeEnded | None = None
        self._issued_for: int | None = None
        """Cards taken when the gate was released or DEAL_NEXT sent; none again until one comes."""
        self._gate_locked = False
        self._operation_for: tuple[str | None, State, int] | None = None
        """The SHUFFLE or RETURN sent, as (shoe, state, cards taken) when it was sent."""
        self._retry_after = 0.0
        self._resync_wanted = True
        self._replay_upto = device.info.counters["next_seq"] - 1
        """The device's last event at the handshake: everything up to it comes before commands."""
        self._round_opened_at: float | None = None
        self._operator: dict[str, Any] | None = None
        self.dealer: str | None = last_dealer(journal)
        """The dealer signed in at the table, as the journal last recorded."""
        self._record_start()
        self._refuse_unapproved_firmware()

    def subscribe(self, observer: Observer) -> None:
        """Add an observer (a display, a floor link) after the session has started."""
        self._hub.subscribe(observer)

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
        return shoe_id

    def _journal_has_shoe(self, shoe_id: str) -> bool:
        return (
            next(self.journal.records(shoe_id=shoe_id, kinds=(ShoeStarted.KIND,)), None) is not None
        )

    def shoe_loaded(self) -> None:
        """Manual shoe: the shuffled pack is in the shoe."""
        self._command(ShoeLoaded())

    def cut_done(self) -> None:
        """Manual shoe: the pack is cut and the cut card placed; the burn begins."""
        self._command(CutDone())

    def close_bets(self) -> None:
        """No more bets, as the dealer button does."""
        self._command(CloseBets())

    def confirm_face_up(self) -> None:
        """The dealer turned the automatic machine's face-down card face up."""
        self._command(ConfirmFaceUp())

    def end_shoe(self) -> None:
        """End the shoe: now between rounds, or after the round under way."""
        self._command(EndShoe())

    def abandon_shoe(self, reason: str) -> None:
        """Close the shoe as it stands, unreconciled, voiding the open round."""
        self._command(AbandonShoe(reason))

    def void_round(self, reason: str, note: str | None = None) -> None:
        """A supervisor voids the round under way, for a reason of the table (Art. 10)."""
        self._command(VoidRound(reason, note))

    def clear_hold(self, reason: str, note: str | None = None) -> None:
        """Resolve a hold only a person can resolve: a sequence gap or regression, a deck set
        that is not the declared one. reason names the hold; note is the person's own words.

        For lost events, they are given up: the driver resumes with the event after them.
        """
        accepted = None
        if reason == HoldReason.SEQUENCE_GAP and isinstance(self._gap, SequenceGap):
            accepted = self._gap.got - 1
        if reason == HoldReason.SEQUENCE_REGRESSION and isinstance(self._gap, SequenceRegression):
            accepted = self._gap.device_next_seq - 1
        with self._lock:
            self._command(ClearHold(reason, accepted, note))
            if accepted is not None:
                self._last_seq = accepted
                self.device.set_journaled_seq(accepted)
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
        """Journal a command refused for its giver's role; it never reaches the procedure."""
        self._record_session(COMMAND_DENIED, {**operator, "command": command, "needs": needs})

    def sign_in(self) -> str | None:
        """The dealer giving the command takes the table; returns the dealer relieved."""
        with self._lock:
            operator = self._operator or {}
            relieved = self.dealer
            self.dealer = str(operator.get("user", "")) or None
            self._record_session(DEALER_SIGNED_IN, {**operator, "relieves": relieved})
            return relieved

    def _record_session(self, kind: str, payload: Mapping[str, Any]) -> None:
        with self._lock, self.journal.transaction() as transaction:
            transaction.append(
                kind,
                dict(payload),
                shoe_id=self.model.shoe_id,
                round_no=self.model.round_no,
                device_serial=self.device_serial,
            )

    def _command(self, command: object) -> None:
        with self._lock, self._log_context():
            facts = self._apply(command)
            self._publish(facts)
            refusals = [
                fact.event.reason for fact in facts if isinstance(fact.event, RefusedCommand)
            ]
            self._drive_device()
        if refusals:
            log.info("operator command refused", reason="; ".join(refusals))
            raise ProcedureRefused("; ".join(refusals))

    # --- the loop -----------------------------------------------------------------------

    def step(self, timeout: float = 0.1) -> bool:
        """Handle the next device event, waiting up to timeout; True when one was handled.

        Device commands go out only when no event is waiting, so they always
        follow from everything the device has already reported.
        """
        event = self.device.next_event(0)
        if event is None:
            with self._lock, self._log_context():
                self._drive_device()
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
        dealer button or close_bets(). on_step: called in this loop after every
        step; a service pings its watchdog there, so a stuck loop stops the pings.
        """
        self._stop.clear()
        self._last_ended = None
        opened = False
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

    def _open_shoe(self, shoe_id: str | None, deck_set: int | None) -> None:
        self.start_shoe(shoe_id, deck_set)
        if self.config.uses_cut_card_and_burn:
            self.shoe_loaded()
            self.cut_done()

    def stop(self) -> None:
        """Make run_shoe return after the step under way (from any thread)."""
        self._stop.set()

    def _house_decisions(self, rounds: int | None, betting_time_s: float | None) -> None:
        shoe, round_no = self.model.shoe, self.model.round_no
        last_wanted = rounds is not None and round_no is not None and round_no >= rounds
        if self.state is State.DEALING and last_wanted and shoe and shoe.last_round is None:
            self.end_shoe()
        if self.state is not State.BETTING:
            self._round_opened_at = None
            return
        now = self._clock()
        if self._round_opened_at is None:
            self._round_opened_at = now
        if betting_time_s is not None and now - self._round_opened_at >= betting_time_s:
            self.close_bets()

    # --- one input: journal, apply, commit, acknowledge, tell --------------------------

    def _handle(self, event: object) -> None:
        seq = event.seq if isinstance(event, Event) else None
        if seq is not None and seq <= self._last_seq:
            log.warning("dropping an event the journal already holds", seq=seq)
            self.device.ack(seq)
            return
        self._note_device_state(event)
        facts = self._apply(event)
        if seq is not None:
            self.device.ack(seq)
            self._last_seq = seq
        if isinstance(event, LinkRestored):
            self._resync_wanted = True
            self._replay_upto = event.hello.next_seq - 1
        self._publish(facts)

    def _note_device_state(self, event: object) -> None:
        """What an event says about the device's gate and the commands it still holds."""
        if isinstance(event, SequenceGap | SequenceRegression):
            self._gap = event
        if isinstance(event, CardRead | Fault | FaultCleared | SelfTestResult):
            self._gate_locked = True
        if isinstance(event, Fault | FaultCleared) and isinstance(self.device, ShoeDevice):
            self._issued_for = None
        if isinstance(event, SelfTestResult):
            self._issued_for = None
            self._operation_for = None

    def _apply(self, item: object) -> list[Fact]:
        """Journal the input and its facts in one transaction; the facts, once committed.

        An operator's command is preceded, in the same transaction, by who gave it.
        """
        with self.journal.transaction() as transaction:
            kind = to_record(item).kind
            if self._operator is not None and kind.startswith(COMMAND_PREFIX):
                transaction.append(
                    OPERATOR,
                    {**self._operator, "command": kind},
                    shoe_id=self.model.shoe_id,
                    round_no=self.model.round_no,
                    device_serial=self.device_serial,
                )
            return journaled_apply(self.model, item, transaction, self.device_serial)

    def _log_context(self) -> AbstractContextManager[object]:
        """Every log line while the session works says which table, shoe and round."""
        return structlog.contextvars.bound_contextvars(
            table_id=self.config.table_id, shoe_id=self.model.shoe_id, round_no=self.model.round_no
        )

    def _publish(self, facts: list[Fact]) -> None:
        events = [fact.event for fact in facts]
        for event in events:
            if isinstance(event, ShoeEnded):
                self._last_ended = event
        self._hub.publish(events)

    def _record_start(self) -> None:
        info = self.device.info
        recovered = self.recovered
        with self.journal.transaction() as transaction:
            transaction.append(
                SESSION_STARTED,
                {
                    "device": info.to_json(),
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

    def _refuse_unapproved_firmware(self) -> None:
        """Deal nothing with a firmware image the table's allow-list does not hold.

        The hash is the one the device reported at the handshake (authenticated
        when the link is). The refusal is journaled and alarmed before it is raised.
        """
        info = self.device.info
        if self.config.device.firmware_approved(info.firmware_hash):
            return
        alarm = Alarm(
            AlarmKind.FIRMWARE,
            f"device {info.serial_number} runs firmware {info.firmware_version} "
            f"(sha256 {info.firmware_hash.hex()}), which device.allowed_firmware_hashes "
            "does not list",
        )
        record_device_refusal(
            self.journal,
            alarm,
            device_serial=self.device_serial,
            shoe_id=self.model.shoe_id,
            round_no=self.model.round_no,
        )
        log.error("device refused", reason=alarm.detail)
        self._hub.publish([alarm])
        raise DeviceNotApproved(
            f"{alarm.detail}: install an approved image, or add its hash once it is approved"
        )

    # --- draw control -------------------------------------------------------------------

    def _taken(self) -> int:
        shoe = self.model.shoe
        return 0 if shoe is None else shoe.dealt + shoe.burned

    # The device's side of draw control, as docs/protocol.md states it: RELEASE_ONE lets
    # one card go and the shoe locks itself again; any fault locks the gate; a restart
    # (which always runs the power-up self-test) forgets accepted deals and operations.
    # An accepted DEAL_NEXT delivers its card however late, so it is never asked twice;
    # one accepted just before the controller itself restarted may be asked again, and
    # its second card is then recorded and handled in order like any other.

    def _drive_device(self) -> None:
        """Ask the device for what the procedure's state needs now, at most once per card.

        Nothing is asked while the device still has events from before the latest
        handshake to deliver: the procedure's state must include them first.
        """
        if self._clock() < self._retry_after or self._last_seq < self._replay_upto:
            return
        try:
            if self._resync_wanted:
                self._resync()
            if self.model.counts_wanted:
                status = self.device.get_status()
                self._publish(self._apply(DeviceCount(status.cards_dealt, status.cards_remaining)))
            elif self.model.pack_count_wanted:
                status = self.device.get_status()
                self._publish(self._apply(PackCount(status.cards_dealt, status.cards_remaining)))
            elif isinstance(self.device, DealerDevice):
                self._drive_dealer(self.device)
            elif Capability.GATE in self.device.info.capabilities:
                self._drive_gate(self.device)
        except CommandRefused as refused:
            log.info("device command refused; asking again later", reason=str(refused))
            self._issued_for = None
            self._operation_for = None
            self._retry_after = self._clock() + RETRY_INTERVAL_S
        except (DeviceTimeout, DeviceGone) as failure:
            log.warning("device command failed; re-reading its state", reason=str(failure))
            self._resync_wanted = True
            self._retry_after = self._clock() + RETRY_INTERVAL_S

    def _resync(self) -> None:
        """Read the gate and any long operation under way (at start, after a reconnect)."""
        status = self.device.get_status()
        taken = self._taken()
        self._gate_locked = status.gate is GateMode.LOCKED
        if isinstance(self.device, ShoeDevice):
            self._issued_for = None if self._gate_locked else taken
        busy = StatusFlag.BUSY in status.flags
        self._operation_for = (self.model.shoe_id, self.state, taken) if busy else None
        self._resync_wanted = False

    def _card_wanted(self) -> bool:
        """A card is due and none has been asked for since the last one came."""
        taken = self._taken()
        if self.model.card_due() is None or self._issued_for == taken:
            return False
        self._issued_for = taken
        return True

    def _drive_gate(self, shoe: ShoeDevice) -> None:
        if self._card_wanted():
            shoe.release_one()
            self._gate_locked = False
        elif self.model.card_due() is None and not self._gate_locked:
            shoe.set_gate(locked=True)
            self._gate_locked = True

    def _drive_dealer(self, dealer: DealerDevice) -> None:
        operation = (self.model.shoe_id, self.state, self._taken())
        if self.model.shuffle_wanted and self._operation_for != operation:
            self._operation_for = operation
            dealer.shuffle(self.config.game.decks)
        elif (count := self.model.cards_to_return) is not None and self._operation_for != operation:
            self._operation_for = operation
            dealer.return_cards(count)
        elif self._card_wanted():
            dealer.deal_next()
