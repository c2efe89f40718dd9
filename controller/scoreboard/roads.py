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

Void rounds settle nothing and demonstration rounds are played for show: they
appear on no road, and the caller leaves them out.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
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
    sevens: int = 0
    """7s among the round's cards (7 Up's Super 7's bet counts them)."""


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
    entries: list[RoadResult] = []
    ties: list[int] = []
    leading_ties = 0
    for result in results:
        if result.winner is not Winner.TIE:
            entries.append(result)
            ties.append(leading_ties if not ties else 0)
        elif ties:
            ties[-1] += 1
        else:
            leading_ties += 1
    places = streak_places([entry.winner for entry in entries], rows)
    return [
        BigRoadCell(
            column=column,
            row=row,
            winner=entry.winner,
            ties=tie_count,
            player_pair=entry.player_pair,
            banker_pair=entry.banker_pair,
            natural=entry.natural,
        )
        for (column, row), entry, tie_count in zip(places, entries, ties, strict=True)
    ]


def streak_places(marks: Sequence[Hashable], rows: int = ROAD_ROWS) -> list[tuple[int, int]]:
    """Where each mark is drawn, (column, row) from 0: a column per run of equal marks.

    The big road and the three derived roads share this placement: a run goes
    down its column while it can and then turns right along the row it reached
    (the dragon tail); the next run starts in the first column after the
    previous run's first column whose top cell is free.
    """
    places: list[tuple[int, int]] = []
    taken: set[tuple[int, int]] = set()
    streak_column = -1
    turned = False
    previous: Hashable = None
    for index, mark in enumerate(marks):
        if index == 0 or mark != previous:
            streak_column = _next_streak_column(streak_column, taken)
            place, turned = (streak_column, 0), False
        else:
            place, turned = _next_in_streak(places[-1], turned, taken, rows)
        taken.add(place)
        places.append(place)
        previous = mark
    return places


def _next_streak_column(previous: int, taken: set[tuple[int, int]]) -> int:
    """The first column after the previous streak's whose top cell a dragon tail left free."""
    column = previous + 1
    while (column, 0) in taken:
        column += 1
    return column


def _next_in_streak(
    last: tuple[int, int], turned: bool, taken: set[tuple[int, int]], rows: int
) -> tuple[tuple[int, int], bool]:
    """Down the column while it can; once it cannot, right along the row (the dragon tail)."""
    column, row = last
    below = (column, row + 1)
    if not turned and row + 1 < rows and below not in taken:
        return below, False
    return (column + 1, row), True
