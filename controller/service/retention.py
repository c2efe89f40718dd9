"""uplink.prune_after_shoe: the service prunes what the floor holds each time a shoe ends.

The service holds the journal's writer lock, so `shoectl journal prune` cannot
run beside it; this observer does the same prune (journal/prune.py) on the
service's own journal, between shoes, with the anchor the uplink keeps. A
prune that cannot run (no anchor yet, a journal that does not match it) is
logged and the table deals on: retention never stops a table.
"""

from __future__ import annotations

import time

import structlog

from cardshoe.controller.config import UplinkConfig
from cardshoe.controller.journal.errors import JournalError
from cardshoe.controller.journal.prune import floor_anchor, prune_open_journal
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.procedure.facts import ShoeEnded, TableEvent

log = structlog.get_logger(__name__)


class PruneAfterShoe:
    """An observer of the table: after shoe.ended, prune the closed shoes the floor verified."""

    def __init__(self, journal: Journal, uplink: UplinkConfig) -> None:
        self._journal = journal
        self._uplink = uplink

    def notify(self, event: TableEvent) -> None:
        if not isinstance(event, ShoeEnded):
            return
        anchor = floor_anchor(self._uplink.state_dir, self._journal.table_id)
        if anchor is None:
            log.info("nothing pruned: the floor has verified no record yet")
            return
        try:
            result = prune_open_journal(
                self._journal,
                anchor,
                keep_days=self._uplink.prune_keep_days,
                now_ns=time.time_ns(),
            )
        except JournalError as exc:
            log.warning("journal not pruned", reason=str(exc))
            return
        if result.cut_id is None:
            log.info("nothing pruned", reason=result.why_not)
        else:
            log.info("journal pruned", through=result.cut_id, shoes=list(result.shoes))
