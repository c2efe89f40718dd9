"""One table on the pit: its tile, its scoreboard built from the floor's copy, its shoes and
the rounds of the shoe shown."""

from __future__ import annotations

from typing import Any

import psycopg

from cardshoe.controller import record_kinds
from cardshoe.controller.pit.accounts import Role
from cardshoe.controller.pit.floor_copy import floor_records, shoe_records
from cardshoe.controller.pit.tiles import floor_tiles
from cardshoe.controller.procedure.facts import ShoeStarted
from cardshoe.controller.scoreboard.board_json import board_json
from cardshoe.controller.scoreboard.shoe_replay import ShoeFollower


def table_view(
    db: psycopg.Connection, role: Role, table_id: str, shoe_id: str | None
) -> dict[str, Any] | None:
    """None when the floor knows no such table; the shoe shown is the latest unless named."""
    tiles = floor_tiles(db, role, table_id)
    if not tiles:
        return None
    shoes = [
        {
            "shoe_id": record.payload["shoe_id"],
            "game": record.payload["game"],
            "started_at": record.time_utc,
            "record_id": record.id,
        }
        for record in floor_records(db, table_id, "r.kind = %(kind)s", {"kind": ShoeStarted.KIND})
    ]
    chosen = next((shoe for shoe in shoes if shoe["shoe_id"] == shoe_id), None)
    if chosen is None and shoes and shoe_id is None:
        chosen = shoes[-1]
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
        "shoes": shoes,
        "shoe_id": None if chosen is None else chosen["shoe_id"],
        "board": board,
        "rounds": rounds,
    }
