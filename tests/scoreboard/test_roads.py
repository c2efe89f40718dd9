"""The bead road and big road against scoreboards drawn by hand."""

from __future__ import annotations

from collections.abc import Sequence

from cardshoe.controller.rules.hands import Winner
from cardshoe.controller.scoreboard.roads import (
    BeadCell,
    BigRoadCell,
    RoadResult,
    bead_road,
    big_road,
)

LETTERS = {"B": Winner.BANKER, "P": Winner.PLAYER, "T": Winner.TIE}


def results(text: str) -> list[RoadResult]:
    """'BBPT' -> one plain result per letter."""
    return [RoadResult(LETTERS[letter]) for letter in text]


def drawn(cells: Sequence[BigRoadCell | BeadCell]) -> list[str]:
    """The grid as a scoreboard shows it: one letter per cell, '.' for an empty one."""
    width = max(cell.column for cell in cells) + 1
    grid = [["."] * width for _ in range(6)]
    for cell in cells:
        winner = cell.winner if isinstance(cell, BigRoadCell) else cell.result.winner
        grid[cell.row][cell.column] = winner.value[0].upper()
    return ["".join(row) for row in grid]


def test_the_bead_road_fills_columns_of_six_from_the_top_ties_included() -> None:
    assert drawn(bead_road(results("BBPTPBBP"))) == [
        "BB",
        "BP",
        "P.",
        "T.",
        "P.",
        "B.",
    ]


def test_the_bead_road_keeps_each_rounds_marks() -> None:
    pair = RoadResult(Winner.PLAYER, player_pair=True, natural=True)
    cells = bead_road([RoadResult(Winner.BANKER), pair])
    assert cells[1] == BeadCell(column=0, row=1, result=pair)


def test_each_streak_is_a_column_and_a_tie_marks_the_cell_before_it() -> None:
    cells = big_road(results("BBBPPTB"))
    assert drawn(cells) == [
        "BPB",
        "BP.",
        "B..",
        "...",
        "...",
        "...",
    ]
    assert [cell.ties for cell in cells] == [0, 0, 0, 0, 1, 0]


def test_ties_before_the_first_result_mark_the_first_cell() -> None:
    cells = big_road(results("TTBPTT"))
    assert [(cell.winner, cell.ties) for cell in cells] == [
        (Winner.BANKER, 2),
        (Winner.PLAYER, 2),
    ]


def test_ties_alone_draw_nothing_yet() -> None:
    assert big_road(results("TT")) == []


def test_a_streak_longer_than_the_column_turns_right_into_a_dragon_tail() -> None:
    assert drawn(big_road(results("B" * 8 + "P" * 7 + "B"))) == [
        "BPB.",
        "BP..",
        "BP..",
        "BP..",
        "BPPP",
        "BBB.",
    ]


def test_tails_bend_later_streaks_and_push_a_blocked_start_to_the_next_free_column() -> None:
    streaks = "B" * 8 + "P" * 8 + "B" * 6 + "P" * 5 + "B" * 4 + "P" * 3 + "B"
    assert drawn(big_road(results(streaks))) == [
        "BPBPBPPPB",
        "BPBPBBB..",
        "BPBPPP...",
        "BPBBB....",
        "BPPPP....",
        "BBB......",
    ]


def test_a_tie_after_a_dragon_tail_marks_the_tails_last_cell() -> None:
    cells = big_road(results("B" * 7 + "T"))
    assert (cells[-1].column, cells[-1].row, cells[-1].ties) == (1, 5, 1)


def test_pairs_and_naturals_stay_on_their_cell() -> None:
    marked = RoadResult(Winner.BANKER, player_pair=True, banker_pair=True, natural=True)
    (cell,) = big_road([marked])
    assert (cell.player_pair, cell.banker_pair, cell.natural) == (True, True, True)
