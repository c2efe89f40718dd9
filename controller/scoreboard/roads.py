"""Baccarat scoreboards: the bead road and the big road, as pure functions over results.

Tables show them beside every baccarat layout, and players read them, so they
follow the conventions printed scoreboards use:

- **Bead road**: one cell per settled round, ties included, filling each
  column of six rows from the top, columns left to right.
- **Big road**: Banker and Player results only. A column is one streak of
  the same winner; a new winner starts the next column at the top row. A tie
  is a mark on the cell of the result before it (ties before the first
  result mark the first cell). A streak longer than the column, or one that
  meets a cell already filled, turns right along the row it reached: the
  dragon tail. The next streak starts in the first column after the previous
  streak's first column whose top cell is free.

Void rounds settle nothing and appear on no road; the caller leaves them out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cardshoe.controller.rules.hands import Winner

ROAD_ROWS = 6
"""Rows of both roads on every scoreboard."""


@dataclass(frozen=True)
class RoadResult:
    """What a scoreboard shows of one settled round."""

    winner: Winner
    player_pair: bool = False
    banker_pair: bool = False
    natural: bool = False


@dataclass(frozen=True)
class BeadCell:
    column: int
    row: int
    result: RoadResult


@dataclass(frozen=True)
class BigRoadCell:
    column: int
    row: int
    winner: Winner
    """Winner.PLAYER or Winner.BANKER: ties only mark cells."""
    ties: int
    """Ties that followed this result (or, on the first cell, came before it)."""
    player_pair: bool
    banker_pair: bool
    natural: bool


def bead_road(results: Sequence[RoadResult], rows: int = ROAD_ROWS) -> list[BeadCell]:
    """One cell per result, down each column of `rows`, columns left to right."""
    return [
        BeadCell(column=index // rows, row=index % rows, result=result)
        for index, result in enumerate(results)
    ]


def big_road(results: Sequence[RoadResult], rows: int = ROAD_ROWS) -> list[BigRoadCell]:
    """The big road's cells in the order they were drawn."""
    cells: list[BigRoadCell] = []
    taken: set[tuple[int, int]] = set()
    leading_ties = 0
    streak_column = -1
    turned = False
    for result in results:
        if result.winner is Winner.TIE:
            if cells:
                cells[-1] = _with_tie(cells[-1])
            else:
                leading_ties += 1
            continue
        if not cells or cells[-1].winner is not result.winner:
            streak_column = _next_streak_column(streak_column, taken)
            column, row, turned = streak_column, 0, False
        else:
            column, row, turned = _next_in_streak(cells[-1], turned, taken, rows)
        taken.add((column, row))
        cells.append(
            BigRoadCell(
                column=column,
                row=row,
                winner=result.winner,
                ties=leading_ties if not cells else 0,
                player_pair=result.player_pair,
                banker_pair=result.banker_pair,
                natural=result.natural,
            )
        )
    return cells


def _with_tie(cell: BigRoadCell) -> BigRoadCell:
    return BigRoadCell(
        cell.column,
        cell.row,
        cell.winner,
        cell.ties + 1,
        cell.player_pair,
        cell.banker_pair,
        cell.natural,
    )


def _next_streak_column(previous: int, taken: set[tuple[int, int]]) -> int:
    """The first column after the previous streak's whose top cell a dragon tail left free."""
    column = previous + 1
    while (column, 0) in taken:
        column += 1
    return column


def _next_in_streak(
    last: BigRoadCell, turned: bool, taken: set[tuple[int, int]], rows: int
) -> tuple[int, int, bool]:
    """Down the column while it can; once it cannot, right along the row (the dragon tail)."""
    below = (last.column, last.row + 1)
    if not turned and last.row + 1 < rows and below not in taken:
        return below[0], below[1], False
    return last.column + 1, last.row, True
