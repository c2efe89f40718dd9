"""One input's way through a table session: journal, apply, commit, acknowledge, tell.

Every device event and every operator command takes this path (session.py's
docstring gives the order): one transaction holds the input, who gave it and every
fact it causes; only once it commits is a device event acknowledged and are the
facts told to the observers. Between events the host's own watches (a stalled
feed, the device's card count) hold the table through the same path.

InputPath is a part of TableSession (its base class), not an object of its own: the
operator commands, the loop and start-up read and write the same fields under the
same lock (the model, the last seq, a gap to clear), and the path of a card must
not pay for an extra hop. It is a module of its own so that path reads in one place,
apart from start-up (session_start.py), the commands and the house's decisions; the
attributes below are the session's, set by TableSession.__init__ and start().
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import structlog

from cardshoe.controller.config import TableConfig
from cardshoe.controller.journal.errors import JournalStorageError
from cardshoe.controller.journal.repeats import RepeatCounter
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.journal.transaction import Transaction
from cardshoe.controller.procedure.facts import (
    Alarm,
    CardCorrected,
    CorrectionMethod,
    ObserverHub,
    ShoeEnded,
    ShoeStarted,
)
from cardshoe.controller.procedure.inputs import HostFinding, record_kind
from cardshoe.controller.procedure.shoe import Fact
from cardshoe.controller.procedure.table import TableModel
from cardshoe.controller.service.count_watch import CHECK_INTERVAL_S, QUIET_S, CountWatch
from cardshoe.controller.service.draw_control import DrawControl
from cardshoe.controller.service.house_decisions import HouseDecisions
from cardshoe.controller.service.logging_setup import SESSION_LOGGER
from cardshoe.controller.service.recovery import journaled_apply, recover
from cardshoe.controller.service.session_records import COMMAND_PREFIX, OPERATOR, REREAD_BY
from cardshoe.controller.service.session_repeats import Counted, counted_kind, only_refusals
from cardshoe.controller.service.session_start import cannot_replay_finding
from cardshoe.drivers.api.device_link import DeviceLink
from cardshoe.drivers.api.events import (
    CardSeen,
    DeviceEvent,
    LinkLost,
    LinkRestored,
    SequenceGap,
    SequenceRegression,
)
from cardshoe.drivers.errors import CommandRefused, DeviceGone, DeviceTimeout

log = structlog.get_logger(SESSION_LOGGER)


class InputPath:
    """The path of one input, over the session's own fields."""

    config: TableConfig
    journal: Journal
    device: DeviceLink
    device_serial: str
    model: TableModel
    """The table as the journal leaves it; set by start(), rebuilt after a failed write."""
    dealer: str | None
    _hub: ObserverHub
    _clock: Callable[[], float]
    _operator: dict[str, Any] | None
    _repeats: RepeatCounter
    _failure: JournalStorageError | None
    _gap: SequenceGap | SequenceRegression | None
    _draw: DrawControl
    _house: HouseDecisions
    _count_watch: CountWatch
    _last_seq: int
    _last_ended: ShoeEnded | None
    _last_event_at: float
    _last_card: CardSeen | None
    _last_card_at: float
    _link_lost_reason: str
    _count_checked_at: float

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
        repeat_kind = counted_kind(item) if also is None else None
        try:
            with self.journal.transaction() as transaction:
                kind = record_kind(item)
                if self._operator is not None and kind.startswith(COMMAND_PREFIX):
                    transaction.append(
                        OPERATOR,
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
                    and only_refusals(facts)
                    and not self._repeats.admit(repeat_kind, self._clock())
                ):
                    raise Counted(facts)
        except Counted as counted:
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
                    REREAD_BY,
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
                self._house.shoe_ended()
            if isinstance(event, ShoeStarted):
                self._house.shoe_started()
        self._hub.publish(events)

    def _hold_when_the_device_cannot_replay(self, meanwhile: str) -> None:
        """Hold when a device that does not resend went unheard meanwhile (session_start.py)."""
        self._find(cannot_replay_finding(self.device, self.model, meanwhile))
