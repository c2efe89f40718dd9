"""The scoreboard as one JSON object: `shoectl roads --json`, /board.json and every SSE event.

The roads' geometry is computed here, in Python, so the terminal, the web
page and any other reader draw exactly the same cells; the page only puts
them where they say. Columns and rows count from 0, row 0 at the top, and
each road lists its cells in the order they were filled. The fields of
docs/scoreboard.md keep their meaning; more may be added.

Beside the roads the object carries what the table's display screen shows
around them (the round in progress, cards left, holds and alarms), under
keys the roads' readers may ignore.
"""

from __future__ import annotations

from typing import Any

from cardshoe.controller.rules.hands import Winner
from cardshoe.controller.scoreboard.board import ResultRow, TableBoard
from cardshoe.controller.scoreboard.derived import DerivedRoad, ask_roads, derived_road
from cardshoe.controller.scoreboard.notices import NoticeKind, notice
from cardshoe.controller.scoreboard.roads import RoadResult, bead_road, big_road

ROAD_KEYS = ("bead", "big", *(road.key for road in DerivedRoad))
"""The keys of the five roads in the object, in the order a board shows them."""


def board_json(board: TableBoard) -> dict[str, Any]:
    """The scoreboard of the board's shoe (see the module docstring)."""
    results = board.road_results()
    stats = board.stats(results)
    asked = ask_roads(results)
    return {
        "shoe_id": board.shoe_id,
        "game": board.game,
        "rounds": board.settled_rounds(results),
        "bead": [
            {"col": cell.column, "row": cell.row, "winner": cell.result.winner.value}
            | _marks(cell.result)
            for cell in bead_road(results)
        ],
        "big": [
            {
                "col": cell.column,
                "row": cell.row,
                "winner": cell.winner.value,
                "ties": cell.ties,
                "player_pair": cell.player_pair,
                "banker_pair": cell.banker_pair,
                "natural": cell.natural,
            }
            for cell in big_road(results)
        ],
        **{
            road.key: [
                {"col": cell.column, "row": cell.row, "colour": cell.colour.value}
                for cell in derived_road(results, road)
            ]
            for road in DerivedRoad
        },
        "stats": {
            "banker": stats.banker,
            "player": stats.player,
            "tie": stats.tie,
            "player_pair": stats.player_pair,
            "banker_pair": stats.banker_pair,
            "natural": stats.natural,
            "super_sevens": stats.super_sevens,
        },
        "ask": {
            winner.value: {
                road.key: None if colour is None else colour.value
                for road, colour in asked[winner].items()
            }
            for winner in (Winner.BANKER, Winner.PLAYER)
        },
        "table": _table_json(board),
    }


def _marks(result: RoadResult) -> dict[str, bool]:
    return {
        "player_pair": result.player_pair,
        "banker_pair": result.banker_pair,
        "natural": result.natural,
    }


def _table_json(board: TableBoard) -> dict[str, Any]:
    """What the display shows around the roads: the shoe, the round on the layout, alerts."""
    last = board.results[-1] if board.results else None
    return {
        "table_id": board.table_id,
        "decks": board.decks,
        "device_kind": board.device_kind,
        "fingerprint": board.fingerprint,
        "phase": board.phase,
        "cards_left": board.in_shoe,
        "dealt": board.dealt,
        "burned": board.burned,
        "last_round": board.last_round,
        "round": {
            "round_no": board.round_no,
            "demo": board.round_demo,
            "player": list(board.player),
            "banker": list(board.banker),
            "set_aside": list(board.set_aside),
            "next_card": board.next_card,
        },
        "last_result": None if last is None else _result_json(last),
        "voids": board.voids,
        "holds": list(board.holds),
        "hold_notices": [notice(NoticeKind.HOLD, hold).to_json() for hold in board.holds],
        "alarms": [
            alarm | {"notice": notice(NoticeKind.ALARM, alarm["kind"]).to_json()}
            for alarm in board.alarms
        ],
        "irregularities": list(board.irregularities),
        "ended": None if board.ended is None else {"reconciled": board.ended.get("reconciled")},
    }


def _result_json(row: ResultRow) -> dict[str, Any]:
    return {
        "round": row.round,
        "demo": row.demo,
        "winner": row.winner,
        "void": row.void,
        "void_notice": None if row.void is None else notice(NoticeKind.VOID, row.void).to_json(),
        "player": list(row.player),
        "banker": list(row.banker),
        "player_total": row.player_total,
        "banker_total": row.banker_total,
        "natural": row.natural,
        "player_pair": row.player_pair,
        "banker_pair": row.banker_pair,
    }
