"""One table on the pit: its tile, its scoreboard built from the floor's copy, its shoes and
the rounds of the shoe shown."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg

from cardshoe.controller import record_kinds
from cardshoe.controller.pit.accounts import Role
from cardshoe.controller.pit.floor_copy import floor_records, shoe_records
from cardshoe.controller.pit.tiles import floor_tiles
from cardshoe.controller.procedure.facts import ShoeStarted
from cardshoe.controller.scoreboard.board_json import board_json
from cardshoe.controller.scoreboard.shoe_replay import ShoeFollower

SHOES_LISTED = 50
"""Shoes a table's page lists at once: a table deals some 10,000 shoes in a year, and the page
lists the latest, reaching earlier ones a page at a time (before=)."""


@dataclass(frozen=True)
class ShoePage:
    """The shoes listed, in the order they started, and the `before` of the pages beside."""

    shoes: list[dict[str, Any]]
    earlier: int | None
    """before= for the page of shoes started earlier; None when these are the first."""
    later: int | None
    """before= for the page of shoes started later; None when that page is the latest,
    which takes no before=, or when this page is the latest itself (latest)."""
    latest: bool


def table_view(
    db: psycopg.Connection,
    role: Role,
    table_id: str,
    shoe_id: str | None,
    before: int | None = None,
) -> dict[str, Any] | None:
    """None when the floor knows no such table. The shoes listed are the latest SHOES_LISTED,
    or those that started before record `before`; the shoe shown is the one named, else the
    latest of those listed."""
    tiles = floor_tiles(db, role, table_id)
    if not tiles:
        return None
    page = _shoe_page(db, table_id, before)
    if shoe_id is None:
        chosen = page.shoes[-1] if page.shoes else None
    else:
        chosen = next((shoe for shoe in page.shoes if shoe["shoe_id"] == shoe_id), None)
        if chosen is None:
            named = _shoes(
                db, table_id, "AND r.shoe_id = %(shoe_id)s", {"shoe_id": shoe_id}, 1, newest=False
            )
            chosen = named[0] if named else None
    board = None
    rounds: list[dict[str, Any]] = []
    if chosen is not None:
        follower = ShoeFollower(table_id)
        records = shoe_records(db, table_id, chosen["shoe_id"])
        follower.take_all(records)
        board = board_json(follower.board)
        rounds = [
            {
                "round_no": record.round_no,
                "time": record.time_utc,
                "winner": record.payload.get("winner"),
                "player": record.payload.get("player"),
                "banker": record.payload.get("banker"),
                "void": record.payload.get("reason")
                if record.kind == record_kinds.ROUND_VOID
                else None,
            }
            for record in records
            if record.kind in (record_kinds.ROUND_RESULT, record_kinds.ROUND_VOID)
        ]
    return {
        "table": tiles[0].to_json(),
        "shoes": page.shoes,
        "earlier_before": page.earlier,
        "later_before": page.later,
        "latest": page.latest,
        "shoe_id": None if chosen is None else chosen["shoe_id"],
        "board": board,
        "rounds": rounds,
    }


def _shoe_page(db: psycopg.Connection, table_id: str, before: int | None) -> ShoePage:
    """SHOES_LISTED shoes ending before record `before` (the latest without it), one more
    read on each side to know whether a page lies there."""
    if before is None:
        listed = _shoes(db, table_id, "", {}, SHOES_LISTED + 1)
        return ShoePage(listed[-SHOES_LISTED:], _earlier(listed), None, latest=True)
    listed = _shoes(
        db, table_id, "AND r.record_id < %(before)s", {"before": before}, SHOES_LISTED + 1
    )
    after = _shoes(
        db,
        table_id,
        "AND r.record_id >= %(before)s",
        {"before": before},
        SHOES_LISTED + 1,
        newest=False,
    )
    later = after[SHOES_LISTED]["record_id"] if len(after) > SHOES_LISTED else None
    return ShoePage(listed[-SHOES_LISTED:], _earlier(listed), later, latest=not after)


def _earlier(listed: list[dict[str, Any]]) -> int | None:
    """The page's before=, read with one shoe more than a page: that shoe is on the page
    before, which ends at the first shoe of this one."""
    return listed[-SHOES_LISTED]["record_id"] if len(listed) > SHOES_LISTED else None


def _shoes(
    db: psycopg.Connection,
    table_id: str,
    condition: str,
    params: dict[str, Any],
    limit: int,
    *,
    newest: bool = True,
) -> list[dict[str, Any]]:
    """The last `limit` shoes the table started that meet the condition (the first, unless
    newest), in the order they started; through the pit's index of kinds."""
    return [
        {
            "shoe_id": record.payload["shoe_id"],
            "game": record.payload["game"],
            "started_at": record.time_utc,
            "record_id": record.id,
        }
        for record in floor_records(
            db,
            table_id,
            f"r.kind = %(kind)s {condition}",
            {"kind": ShoeStarted.KIND, **params},
            limit=limit,
            newest=newest,
        )
    ]
