"""The session's care of its journal's storage, between events.

What the journal survived (its notices), the refusals only counted in the last
interval, and the free space left on its disk: none of it is about a card, and all
of it must be looked at after every step, so a failing disk is caught while a hold
can still be journaled. Apart from the session so that its loop reads as the path
of an event, and this as the path of the storage.
"""

from __future__ import annotations

from collections.abc import Callable

import structlog

from cardshoe.controller.config import TableConfig
from cardshoe.controller.journal.repeats import RepeatCounter
from cardshoe.controller.journal.storage_watch import StorageProblem
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.procedure.facts import Alarm, AlarmKind
from cardshoe.controller.procedure.holds import HoldReason
from cardshoe.controller.procedure.inputs import StorageFault, StorageLow, StorageRecovered
from cardshoe.controller.procedure.table import TableModel
from cardshoe.controller.service.logging_setup import SESSION_LOGGER
from cardshoe.controller.service.session_records import REPEATED, STORAGE_ALARM

log = structlog.get_logger(SESSION_LOGGER)


class StorageCare:
    """Looks after one journal's storage for a session."""

    def __init__(
        self,
        config: TableConfig,
        journal: Journal,
        model: Callable[[], TableModel],
        repeats: RepeatCounter,
        clock: Callable[[], float],
        *,
        take: Callable[[object], None],
        record_session: Callable[[str, dict[str, object]], None],
        record_alarm: Callable[[str, Alarm], None],
    ) -> None:
        """model: the session's table model as it stands; take: journal an input and
        tell its facts; record_session / record_alarm: journal a session record (and
        tell an alarm), as the session does."""
        self._config = config
        self._journal = journal
        self._model = model
        self._repeats = repeats
        self._clock = clock
        self._take = take
        self._record_session = record_session
        self._record_alarm = record_alarm
        self._space_low_told = False
        """StorageLow was applied (held, or refused where no hold is possible): once is enough."""

    def look_after(self) -> None:
        """Between events: what the journal survived, the repeats counted, the free space."""
        for notice in self._journal.take_notices():
            log.error("journal storage fault", problem=notice.problem.value, detail=notice.detail)
            if notice.problem is StorageProblem.FILES_REPLACED:
                self._take(StorageFault(notice.detail))
            elif self._repeats.admit(STORAGE_ALARM, self._clock()):
                self._record_alarm(STORAGE_ALARM, Alarm(AlarmKind.STORAGE, notice.detail))
        for repeats in self._repeats.due(self._clock()):
            self._record_session(
                REPEATED,
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
        floor = self._config.service.journal_min_free_bytes
        low = self._journal.free_bytes() < floor
        held = HoldReason.JOURNAL_SPACE_LOW in self._model().holds
        if low and not held and not self._space_low_told:
            self._space_low_told = True
            free = self._journal.free_bytes()
            log.error("journal disk space below the floor", free_bytes=free, floor_bytes=floor)
            self._take(StorageLow(free, floor))
        elif not low:
            self._space_low_told = False
            if held:
                self._take(StorageRecovered(self._journal.free_bytes()))
