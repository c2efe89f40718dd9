"""A shoe's board read back from the journal, which is the truth every scoreboard shows.

`shoectl roads` reads one shoe whole; `shoectl web` reads the latest shoe and
then follows the records the service appends. Both go through ShoeFollower,
so the page and the command draw a shoe from exactly the same records: the
shoe's own (its shoe_id), from its shoe.started on. A later shoe.started
starts a fresh board.
"""

from __future__ import annotations

from collections.abc import Iterable

from cardshoe.controller.journal.errors import JournalError
from cardshoe.controller.journal.records import Record
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.procedure.facts import ShoeStarted
from cardshoe.controller.scoreboard.board import TableBoard


class ShoeFollower:
    """The board of the latest shoe among the records it is given, kept record by record."""

    def __init__(self, table_id: str) -> None:
        self.table_id = table_id
        self.board = TableBoard(table_id=table_id)
        self.shoe_id: str | None = None
        self.last_id = 0
        """The id of the latest record taken (applied or passed over)."""

    def take(self, record: Record) -> None:
        self.last_id = record.id
        if record.kind == ShoeStarted.KIND:
            self.board = TableBoard(table_id=self.table_id)
            self.shoe_id = record.payload["shoe_id"]
        elif self.shoe_id is None or record.shoe_id != self.shoe_id:
            return
        self.board.apply(record.kind, record.payload)

    def take_all(self, records: Iterable[Record]) -> None:
        for record in records:
            self.take(record)


def shoe_starts(journal: Journal) -> list[Record]:
    """Every shoe.started record, oldest first."""
    return list(journal.records(kinds=[ShoeStarted.KIND]))


def latest_shoe_start(journal: Journal) -> Record | None:
    starts = shoe_starts(journal)
    return starts[-1] if starts else None


def follow_latest_shoe(journal: Journal) -> ShoeFollower:
    """A follower holding the journal's latest shoe (an empty board when none has started)."""
    follower = ShoeFollower(journal.table_id)
    start = latest_shoe_start(journal)
    if start is not None:
        follower.take_all(journal.records(after_id=start.id - 1))
    return follower


def shoe_board(journal: Journal, shoe_id: str | None = None) -> TableBoard:
    """The board of one shoe (default: the latest) as its journal records leave it."""
    if shoe_id is None:
        follower = follow_latest_shoe(journal)
        if follower.shoe_id is None:
            raise JournalError(f"{journal.path}: no shoe has started in this journal yet")
        return follower.board
    follower = ShoeFollower(journal.table_id)
    follower.take_all(journal.records(shoe_id=shoe_id))
    if follower.shoe_id is None:
        known = [start.payload["shoe_id"] for start in shoe_starts(journal)]
        listed = ", ".join(known[-5:]) if known else "none has started yet"
        raise JournalError(
            f"{journal.path}: no shoe {shoe_id!r} in this journal (latest shoes: {listed})"
        )
    return follower.board
