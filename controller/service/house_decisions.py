"""What the house decides by itself while a session runs a shoe (TableSession.run_shoe).

The last round after --rounds, shoe.machine_end_at on an automatic machine, closing
bets after --betting-time, and whether a freshly loaded pack lets the next shoe open
by itself (--auto-shoe). Each is the house's policy, not the procedure's and not the
device's: apart from the session, so that the session keeps only the path of an
event and these few clocks live together.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Protocol

from cardshoe.controller.config import TableConfig
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.procedure.facts import ShoeEnding, ShoeStarted
from cardshoe.controller.procedure.machine import State
from cardshoe.controller.procedure.operator_commands import CloseBets, EndShoe
from cardshoe.controller.procedure.table import TableModel
from cardshoe.controller.service.shoe_endings import next_machine_ending
from cardshoe.drivers.api.device_link import DeviceLink
from cardshoe.drivers.errors import CommandRefused, DeviceGone, DeviceTimeout

PACK_POLL_S = 0.5
"""While --auto-shoe waits for a freshly loaded pack, ask the device this often."""
ROUND_UNDER_WAY = frozenset({State.ROUND_BURN, State.DEALING})
"""Where the house's end-shoe lets the round finish and makes it the last (Art. 3.2)."""


class HouseTable(Protocol):
    """The session as the house's decisions see it: where the table stands, two commands."""

    @property
    def model(self) -> TableModel: ...

    @property
    def state(self) -> State: ...

    def house_command(self, command: EndShoe | CloseBets) -> None: ...


class HouseDecisions:
    """The house's clocks for one table: the machine shoe's end, the betting time, the pack."""

    def __init__(
        self,
        config: TableConfig,
        device: DeviceLink,
        *,
        clock: Callable[[], float],
        wall_clock: Callable[[], datetime],
    ) -> None:
        self._config = config
        self._device = device
        self._clock = clock
        self._wall_clock = wall_clock
        self.machine_end_due: datetime | None = None
        """When shoe.machine_end_at ends the open machine shoe, after the round under way."""
        self._round_opened_at: float | None = None
        self._pack_polled_at = -PACK_POLL_S

    def recover(self, journal: Journal, model: TableModel) -> None:
        """At start: the open shoe's clock ending, from when the journal says it started."""
        self.machine_end_due = self._clock_ending_of_open_shoe(journal, model)

    def shoe_started(self) -> None:
        """A shoe opened now: its clock ending, if it has one."""
        self.machine_end_due = self._clock_ending(self._wall_clock())

    def shoe_ended(self) -> None:
        """The shoe ended: no clock ending is due any more."""
        self.machine_end_due = None

    def decide(self, table: HouseTable, rounds: int | None, betting_time_s: float | None) -> None:
        """End the shoe after the rounds wanted or at its clock ending; close bets in time."""
        shoe, round_no = table.model.shoe, table.model.round_no
        last_wanted = rounds is not None and round_no is not None and round_no >= rounds
        if table.state is State.DEALING and last_wanted and shoe and shoe.last_round is None:
            table.house_command(EndShoe())
        due = self.machine_end_due
        if due is not None and table.state in ROUND_UNDER_WAY and self._wall_clock() >= due:
            self.machine_end_due = None
            if shoe and shoe.last_round is None:
                table.house_command(EndShoe(ShoeEnding.MACHINE_END_AT))
        if table.state is not State.BETTING:
            self._round_opened_at = None
            return
        now = self._clock()
        if self._round_opened_at is None:
            self._round_opened_at = now
        if betting_time_s is not None and now - self._round_opened_at >= betting_time_s:
            table.house_command(CloseBets())

    def fresh_pack_loaded(self) -> bool:
        """Whether a new shoe may open by itself: on a manual shoe, only once the device
        reports a freshly loaded pack (SHOE_LOADED, no card drawn since), so the cards left
        behind the last shoe's cut card are never taken for the next shoe's burn.

        An automatic machine makes its own shoe (SHUFFLE): always True. The device is
        asked at most every PACK_POLL_S.
        """
        if not self._config.uses_cut_card_and_burn:
            return True
        now = self._clock()
        if now < self._pack_polled_at + PACK_POLL_S:
            return False
        self._pack_polled_at = now
        try:
            status = self._device.get_status()
        except (CommandRefused, DeviceGone, DeviceTimeout):
            return False
        return bool(status.shoe_loaded) and status.cards_dealt == 0

    def _clock_ending(self, opened: datetime) -> datetime | None:
        """When shoe.machine_end_at ends a machine shoe opened then; None on a manual shoe."""
        if self._config.uses_cut_card_and_burn:
            return None
        return next_machine_ending(opened, self._config.shoe.machine_end_times)

    def _clock_ending_of_open_shoe(self, journal: Journal, model: TableModel) -> datetime | None:
        """The open shoe's clock ending, from when the journal says it started."""
        shoe_id = model.shoe_id
        if shoe_id is None:
            return None
        started = next(journal.records(shoe_id=shoe_id, kinds=(ShoeStarted.KIND,)), None)
        if started is None:
            return None
        return self._clock_ending(datetime.fromtimestamp(started.time_ns / 1e9, UTC))
