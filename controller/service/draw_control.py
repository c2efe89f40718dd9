"""Draw control: the commands that let exactly the cards the procedure wants leave the device.

On a manual shoe the gate releases exactly one card when the rules engine
has named its recipient (or a burn is due) and stays locked otherwise; on an
automatic machine DEAL_NEXT asks for that card, RETURN takes each round back
and SHUFFLE makes a new shoe. When a shoe ends, the device's counts are read
for the reconciliation. The session (session.py) owns the journal and the
procedure; this module only decides what to ask the device, and remembers
what it has asked, so no card is ever asked for twice.

A device without DRAW_CONTROL (a reader that only reports what passes) is never
asked for a card: the controller only judges each card that comes. Its counts
are asked for only when it declares DEVICE_COUNTS; otherwise the shoe is
reconciled on the journal's own accounting (DeviceCount with no counts).

The cardshoe device's side, as docs/protocol.md states it: RELEASE_ONE lets one card
go and the shoe locks itself again; any fault locks the gate; a restart
(which always runs the power-up self-test) forgets accepted deals and
operations. An accepted DEAL_NEXT delivers its card however late, so it is
never asked twice; one accepted just before the controller itself restarted
may be asked again, and its second card is then recorded and handled in
order like any other.
"""

from __future__ import annotations

from collections.abc import Callable

import structlog

from cardshoe.controller.procedure.inputs import DeviceCount, PackCount
from cardshoe.controller.procedure.machine import State
from cardshoe.controller.procedure.table import TableModel
from cardshoe.drivers.api.device_link import Capability, DeviceLink
from cardshoe.drivers.api.events import (
    CardSeen,
    DeviceKind,
    FaultCleared,
    FaultRaised,
    GateState,
    LinkRestored,
    SelfTestDone,
)
from cardshoe.drivers.errors import CommandRefused, DeviceGone, DeviceTimeout

log = structlog.get_logger(__name__)

RETRY_INTERVAL_S = 0.5
"""After a refused or failed device command, wait this long before asking again."""
RETRY_INTERVAL_MAX_S = 8.0
"""Failures in a row double the wait up to this."""
FAILURE_SUMMARY_S = 60.0
"""While commands keep failing, one warning says so this often, with the count."""


class DrawControl:
    """What has been asked of one device, and what to ask next for the procedure's state."""

    def __init__(
        self,
        device: DeviceLink,
        model: Callable[[], TableModel],
        *,
        decks: int,
        record_count: Callable[[DeviceCount | PackCount], None],
        clock: Callable[[], float],
    ) -> None:
        """model: the session's table model as it stands; record_count journals the device's
        counts (a DeviceCount at the shoe's end, a PackCount at its start)."""
        self._device = device
        self._model = model
        self._decks = decks
        self._record_count = record_count
        self._clock = clock
        self._issued_for: int | None = None
        """Cards taken when the gate was released or DEAL_NEXT sent; none again until one comes."""
        self._gate_locked = False
        self._operation_for: tuple[str | None, State, int] | None = None
        """The SHUFFLE or RETURN sent, as (shoe, state, cards taken) when it was sent."""
        self._retry_after = 0.0
        self._retry_interval = RETRY_INTERVAL_S
        self._failures = 0
        """Failed commands in a row; the first is a warning, the rest summarised."""
        self._summarised_at = 0.0
        self._resync_wanted = True
        capabilities = device.capabilities
        self._draws = Capability.DRAW_CONTROL in capabilities
        self._counts = Capability.DEVICE_COUNTS in capabilities
        self._shoe = device.kind is DeviceKind.SHOE
        self.replay_upto = device.counters().get("next_seq", 1) - 1
        """The device's last event at the handshake: everything up to it comes before commands."""

    def note(self, event: object) -> None:
        """What an event says about the device's gate and the commands it still holds."""
        if isinstance(event, CardSeen | FaultRaised | FaultCleared | SelfTestDone):
            self._gate_locked = True
        if isinstance(event, FaultRaised | FaultCleared) and self._shoe:
            self._issued_for = None
        if isinstance(event, SelfTestDone):
            self._issued_for = None
            self._operation_for = None
        if isinstance(event, LinkRestored):
            self.restart(event.identity.next_seq - 1)

    def restart(self, replay_upto: int) -> None:
        """The stream was re-synchronised: re-read the device, and wait for its events first."""
        self.reread()
        self.replay_upto = replay_upto

    def reread(self) -> None:
        """Read the gate again before the next command: a card asked for may never come
        (lost on the way), so after a person clears a hold nothing is taken as still due."""
        self._resync_wanted = True

    def drive(self, last_seq: int) -> None:
        """Ask the device for what the procedure's state needs now, at most once per card.

        Nothing is asked while the device still has events from before the latest
        handshake to deliver (last_seq, the last one handled, is behind): the
        procedure's state must include them first.
        """
        if self._clock() < self._retry_after or last_seq < self.replay_upto:
            return
        device = self._device
        if not device.connected:
            # The link is down: the driver reconnects and the table holds (link_lost).
            self._resync_wanted = True
            return
        try:
            if self._resync_wanted:
                self._resync()
            if self._model().counts_wanted:
                self._record_count(DeviceCount(*self._counted()))
            elif self._model().pack_count_wanted:
                self._record_count(PackCount(*self._counted()))
            elif not self._draws:
                return
            elif self._shoe:
                self._drive_gate(device)
            else:
                self._drive_dealer(device)
        except CommandRefused as refused:
            log.info("device command refused; asking again later", reason=str(refused))
            self._issued_for = None
            self._operation_for = None
            self._retry_after = self._clock() + RETRY_INTERVAL_S
        except (DeviceTimeout, DeviceGone) as failure:
            self._failed(str(failure))
            return
        self._failures = 0
        self._retry_interval = RETRY_INTERVAL_S

    def _failed(self, reason: str) -> None:
        """Re-read the device later, backing off; warn once, then once a minute with a count."""
        now = self._clock()
        self._failures += 1
        if self._failures == 1:
            log.warning("device command failed; re-reading its state", reason=reason)
            self._summarised_at = now
        elif now - self._summarised_at >= FAILURE_SUMMARY_S:
            log.warning("device commands still failing", failures=self._failures, reason=reason)
            self._summarised_at = now
        self._resync_wanted = True
        self._retry_after = now + self._retry_interval
        self._retry_interval = min(self._retry_interval * 2, RETRY_INTERVAL_MAX_S)

    def _counted(self) -> tuple[int | None, int | None]:
        """The device's own (dealt, remaining), or (None, None) from one that counts nothing."""
        if not self._counts:
            return None, None
        status = self._device.get_status()
        return status.cards_dealt, status.cards_remaining

    def _taken(self) -> int:
        shoe = self._model().shoe
        return 0 if shoe is None else shoe.dealt + shoe.burned

    def _resync(self) -> None:
        """Read the gate and any long operation under way (at start, after a reconnect)."""
        if not self._draws:
            self._resync_wanted = False
            return
        status = self._device.get_status()
        model, taken = self._model(), self._taken()
        self._gate_locked = status.gate is GateState.LOCKED
        if self._shoe:
            self._issued_for = None if self._gate_locked else taken
        busy = status.busy
        self._operation_for = (model.shoe_id, State(model.state), taken) if busy else None
        self._resync_wanted = False

    def _card_wanted(self) -> bool:
        """A card is due and none has been asked for since the last one came."""
        taken = self._taken()
        if self._model().card_due() is None or self._issued_for == taken:
            return False
        self._issued_for = taken
        return True

    def _drive_gate(self, shoe: DeviceLink) -> None:
        if self._card_wanted():
            shoe.release_one()
            self._gate_locked = False
        elif self._model().card_due() is None and not self._gate_locked:
            shoe.set_gate(locked=True)
            self._gate_locked = True
            if self._issued_for == self._taken():
                self._revoke_release(shoe)

    def _revoke_release(self, shoe: DeviceLink) -> None:
        """A hold locked the gate over a card released and not yet seen: ask for it again.

        A hold its cause lifts by itself (the journal's disk has room again) has no
        person to clear it, so nothing else would ever re-read the gate, and the
        table would wait for ever for a card it had locked in. The card may have
        left just before the lock: its event then came before the lock's reply,
        and nothing more is asked until the events handed over so far are handled.
        """
        self._issued_for = None
        self.replay_upto = max(self.replay_upto, shoe.counters().get("delivered_seq", 0))

    def _drive_dealer(self, dealer: DeviceLink) -> None:
        model = self._model()
        operation = (model.shoe_id, State(model.state), self._taken())
        if model.shuffle_wanted and self._operation_for != operation:
            self._operation_for = operation
            dealer.shuffle(self._decks)
        elif (count := model.cards_to_return) is not None and self._operation_for != operation:
            self._operation_for = operation
            dealer.return_cards(count)
        elif self._card_wanted():
            dealer.deal_next()
