"""The journal followed for the web page: one reader, its records fanned out to every browser.

The web unit opens the journal read-only and polls it for records after the
last one it has seen (a primary-key range, cheap; SQLite WAL readers never
block the table service's writer). Each record becomes one server-sent event
whose id is the record's id, so a browser that reconnects with Last-Event-ID
is sent exactly the records after that one: nothing missed, nothing twice.
The board (board_json) is computed once a batch and encoded once for every
client, so the page draws what Python computed and the cost of a record does
not grow with the number of screens. A new page gets the board whole; then
the last record of each batch carries what changed since the batch before
(board_delta.py), naming that board's record_id as its base. A page resumed
from the journal rather than from the recent events, or across a new shoe,
gets the board whole again on the last record.

The stream covers the latest shoe: a page that opens, or comes back after
the shoe changed, starts from that shoe's shoe.started.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
from collections import deque
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sse_starlette import ServerSentEvent

from cardshoe.controller.config import TableConfig
from cardshoe.controller.journal.errors import JournalError
from cardshoe.controller.journal.records import Record
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.procedure.facts import ShoeStarted
from cardshoe.controller.scoreboard.board_json import board_json
from cardshoe.controller.scoreboard.shoe_replay import ShoeFollower, latest_shoe_start
from cardshoe.controller.web.board_delta import board_delta

POLL_S = 0.02
"""How often the journal is asked for new records: well inside the page's 250 ms budget."""
RECENT_EVENTS = 512
"""Encoded events kept for clients a little behind (a board rides on many of them, some tens
of kB each late in a shoe); a client further behind is served from the journal itself."""
RETRY_S = 1.0
"""How long the feed waits after a failed read of the journal before it reads again."""
EVENT_NAME = "record"

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True)
class FeedEvent:
    record_id: int
    encoded: bytes
    """The whole server-sent event, as sent to every client."""


class BoardFeed:
    """Follows one journal read-only and hands each client the events after its last id."""

    def __init__(self, journal: Journal, config: TableConfig | None = None) -> None:
        self.journal = journal
        self.config = config
        """The table's configuration, whose options the page shows while the shoe's recorded
        fingerprint matches it (the journal holds the fingerprint, not the options)."""
        self._follower = ShoeFollower(journal.table_id)
        self._shoe_start = 0
        self._recent: deque[FeedEvent] = deque(maxlen=RECENT_EVENTS)
        self._changed = asyncio.Condition()
        self._board: dict[str, Any] = {}
        self._board_text = "{}"

    @classmethod
    def open(cls, path: Path, config: TableConfig | None = None) -> BoardFeed:
        feed = cls(Journal.open_readonly(path), config)
        feed._catch_up()
        return feed

    def close(self) -> None:
        self.journal.close()

    @property
    def last_id(self) -> int:
        return self._follower.last_id

    def board_text(self) -> str:
        """The current board (board_json), as /board.json serves it."""
        return self._board_text

    # --- reading the journal ----------------------------------------------------------

    def _catch_up(self) -> None:
        """Start from the latest shoe's shoe.started, as the page shows that shoe."""
        start = latest_shoe_start(self.journal)
        if start is not None:
            self._shoe_start = start.id
            self._follower.take_all(self.journal.records(after_id=start.id - 1))
        self._board = self._board_json()
        self._board_text = _text(self._board)

    def take(self, records: Sequence[Record]) -> list[FeedEvent]:
        """Take records appended since the last ones taken; their events, oldest first."""
        if not records:
            return []
        for record in records:
            if record.kind == ShoeStarted.KIND:
                self._shoe_start = record.id
            self._follower.take(record)
        board = self._board_json()
        change = {"base": self._board.get("record_id"), "delta": board_delta(self._board, board)}
        self._board, self._board_text = board, _text(board)
        events = self._events(records, f'"board":null,"change":{_text(change)}')
        self._recent.extend(events)
        return events

    def _read_after(self, after_id: int) -> list[Record]:
        return list(self.journal.records(after_id=after_id))

    async def run(self) -> None:
        """Poll until cancelled, waking every waiting client when records arrive.

        Only the SQL read runs in a worker thread; the board and the events are
        made on the event loop, so clients never see a board half-updated.
        """
        while True:
            try:
                records = await asyncio.to_thread(self._read_after, self.last_id)
            except (JournalError, sqlite3.Error) as exc:
                # The page keeps its last board and its clients; the table service writes on.
                _LOGGER.warning("cannot read the journal %s: %s", self.journal.path, exc)
                await asyncio.sleep(RETRY_S)
                continue
            if self.take(records):
                async with self._changed:
                    self._changed.notify_all()
            await asyncio.sleep(POLL_S)

    def _board_json(self) -> dict[str, Any]:
        shown = self._follower.board
        board = board_json(shown)
        board["options"] = None
        if self.config is not None and self.config.fingerprint == shown.fingerprint:
            board["options"] = self.config.fingerprint_options()
        board["record_id"] = self._follower.last_id
        return board

    def _events(self, records: Sequence[Record], last_fields: str) -> list[FeedEvent]:
        """One event per record; the board, or what changed in it, rides on the last."""
        last = len(records) - 1
        return [
            _event(
                record.id,
                {"kind": record.kind, "round_no": record.round_no},
                last_fields if index == last else '"board":null',
            )
            for index, record in enumerate(records)
        ]

    # --- serving clients --------------------------------------------------------------

    async def stream(self, after_id: int | None) -> AsyncIterator[bytes]:
        """The events a client is owed after after_id (None: a new page), then live ones."""
        sent = self.last_id
        for event in await self._backlog(after_id):
            sent = event.record_id
            yield event.encoded
        while True:
            await self._wait_past(sent)
            for event in await self._after(sent):
                sent = event.record_id
                yield event.encoded

    async def _wait_past(self, record_id: int) -> None:
        async with self._changed:
            await self._changed.wait_for(lambda: self.last_id > record_id)

    async def _backlog(self, after_id: int | None) -> list[FeedEvent]:
        """A new page gets the board as of the latest record; a returning one every record
        of the shoe after its last."""
        if after_id is None:
            return [_event(self.last_id, {"kind": "snapshot"}, f'"board":{self._board_text}')]
        if after_id >= self.last_id:
            return []
        if after_id < self._shoe_start - 1:
            # The page's board is of an earlier shoe, not the base of any change kept.
            return await self._from_journal(self._shoe_start - 1)
        return await self._after(after_id)

    async def _after(self, after_id: int) -> list[FeedEvent]:
        """The events after after_id: the recent ones (their changes apply to the board the
        page drew at after_id's batch), else made again from the journal."""
        recent = [event for event in self._recent if event.record_id > after_id]
        if recent and recent[0].record_id == after_id + 1:
            return recent
        return await self._from_journal(after_id)

    async def _from_journal(self, after_id: int) -> list[FeedEvent]:
        """The events after after_id made again from the journal, up to the record the
        current board stands at, which rides whole on the last."""
        up_to, board_text = self.last_id, self._board_text
        records = await asyncio.to_thread(self._read_after, after_id)
        records = [record for record in records if record.id <= up_to]
        return self._events(records, f'"board":{board_text}') if records else []


def _text(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _event(record_id: int, fields: dict[str, object], tail: str) -> FeedEvent:
    """One server-sent event: {"id", fields..., tail}, tail (the board, or its change, as
    `"name":json` members) spliced in as encoded."""
    head = json.dumps({"id": record_id, **fields})
    data = f"{head[:-1]},{tail}}}"
    encoded = ServerSentEvent(data=data, id=str(record_id), event=EVENT_NAME).encode()
    return FeedEvent(record_id, encoded)
