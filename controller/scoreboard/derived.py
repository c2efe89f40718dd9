"""The three derived roads and the ask-road predictions, as pure functions over results.

Big eye boy, small road and cockroach pig do not show who won: each tells,
for every big-road entry, whether the big road is repeating a pattern (red)
or breaking it (blue), by comparing with the column k columns back (k = 1, 2,
3). They read the *logical* big road, one list entry per streak, never the
drawn grid with its dragon tails, and they ignore ties. For offset k, with
columns and rows counted from 1:

- the road starts at the big-road entry in column k+1, row 2, or, when that
  column holds one entry only, at the first entry of column k+2;
- an entry at row 1 of column c is red when columns c-1 and c-1-k have the
  same length, blue otherwise;
- an entry at row r >= 2 of column c, with L the length of column c-k, is
  red when r <= L, blue when r = L+1, red when r > L+1.

Each derived road is drawn as the big road is (roads.streak_places), a
column per run of one colour. The ask roads tell the colour each road would
add after a hypothetical next Banker or Player result: what the board shows
as "ask Banker / ask Player".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum, StrEnum

from cardshoe.controller.rules.hands import Winner
from cardshoe.controller.scoreboard.roads import ROAD_ROWS, RoadResult, streak_places


class DerivedRoad(Enum):
    """The derived roads, each by its name in the JSON and the column offset it compares."""

    BIG_EYE = ("big_eye", 1)
    SMALL = ("small", 2)
    COCKROACH = ("cockroach", 3)

    @property
    def key(self) -> str:
        return self.value[0]

    @property
    def offset(self) -> int:
        return self.value[1]


class Colour(StrEnum):
    """Red: the big road repeats; blue: it breaks. Neither means Banker or Player."""

    RED = "red"
    BLUE = "blue"


@dataclass(frozen=True)
class DerivedCell:
    column: int
    row: int
    colour: Colour


ASKED = (Winner.BANKER, Winner.PLAYER)
"""The hypothetical next results an ask road answers for."""


def streak_lengths(results: Sequence[RoadResult]) -> list[int]:
    """The logical big road: the length of each streak of one winner, ties ignored."""
    lengths: list[int] = []
    previous: Winner | None = None
    for result in results:
        if result.winner is Winner.TIE:
            continue
        if result.winner is previous:
            lengths[-1] += 1
        else:
            lengths.append(1)
            previous = result.winner
    return lengths


def entry_colour(lengths: Sequence[int], column: int, row: int, offset: int) -> Colour | None:
    """The colour the entry at (column, row) adds to the road of this offset (counted from 0).

    lengths are the logical big road's column lengths, at least up to that
    entry's column (only earlier, finished columns are read); None before the
    road's start. Row 1 of column `offset` exists only when that column holds
    two entries, so "row 2 of column k+1, else column k+2" is one condition.
    """
    if column < offset or (column == offset and row == 0):
        return None
    if row == 0:
        same = lengths[column - 1] == lengths[column - 1 - offset]
        return Colour.RED if same else Colour.BLUE
    compared = lengths[column - offset]
    return Colour.BLUE if row == compared else Colour.RED


def derived_colours(results: Sequence[RoadResult], road: DerivedRoad) -> list[Colour]:
    """The colours of one derived road, one per big-road entry from its start on."""
    return _colours(streak_lengths(results), road.offset)


def _colours(lengths: Sequence[int], offset: int) -> list[Colour]:
    colours: list[Colour] = []
    for column, length in enumerate(lengths):
        for row in range(length):
            colour = entry_colour(lengths, column, row, offset)
            if colour is not None:
                colours.append(colour)
    return colours


def derived_road(
    results: Sequence[RoadResult], road: DerivedRoad, rows: int = ROAD_ROWS
) -> list[DerivedCell]:
    """One derived road's cells in the order they were drawn."""
    colours = derived_colours(results, road)
    places = streak_places(colours, rows)
    return [
        DerivedCell(column, row, colour)
        for (column, row), colour in zip(places, colours, strict=True)
    ]


def ask_roads(results: Sequence[RoadResult]) -> dict[Winner, dict[DerivedRoad, Colour | None]]:
    """For a next Banker and a next Player result, the colour each derived road would add."""
    lengths = streak_lengths(results)
    last = _last_winner(results)
    asked: dict[Winner, dict[DerivedRoad, Colour | None]] = {}
    for winner in ASKED:
        extended = list(lengths)
        if winner is last:
            extended[-1] += 1
        else:
            extended.append(1)
        column, row = len(extended) - 1, extended[-1] - 1
        asked[winner] = {
            road: entry_colour(extended, column, row, road.offset) for road in DerivedRoad
        }
    return asked


def _last_winner(results: Sequence[RoadResult]) -> Winner | None:
    for result in reversed(results):
        if result.winner is not Winner.TIE:
            return result.winner
    return None
