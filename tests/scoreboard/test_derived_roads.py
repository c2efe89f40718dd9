"""The derived roads, ask roads and statistics, against results worked through by hand.

Each case names the rule of issue 13 it reaches; the hypothesis properties
then hold the roads to their shape over any shoe.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cardshoe.controller.rules.hands import Winner
from cardshoe.controller.scoreboard.derived import (
    Colour,
    DerivedRoad,
    ask_roads,
    derived_colours,
    derived_road,
    streak_lengths,
)
from cardshoe.controller.scoreboard.roads import (
    RoadResult,
    bead_road,
    big_road,
    streak_places,
)
from cardshoe.controller.scoreboard.stats import shoe_stats

LETTERS = {"B": Winner.BANKER, "P": Winner.PLAYER, "T": Winner.TIE}
BIG_EYE, SMALL, COCKROACH = DerivedRoad.BIG_EYE, DerivedRoad.SMALL, DerivedRoad.COCKROACH


def results(text: str) -> list[RoadResult]:
    """'BBPT' -> one plain result per letter."""
    return [RoadResult(LETTERS[letter]) for letter in text]


def colours(text: str, road: DerivedRoad) -> str:
    """A derived road as letters: R red, U blue (B would read as Banker)."""
    return "".join("R" if c is Colour.RED else "U" for c in derived_colours(results(text), road))


# --- where each road starts --------------------------------------------------------------


def test_big_eye_starts_at_row_two_of_column_two_when_that_column_has_two_entries() -> None:
    # column 2 (PP) has two entries: the first colour is its second entry's.
    assert colours("BPP", BIG_EYE) == "U"
    assert colours("BP", BIG_EYE) == ""


def test_big_eye_starts_at_column_three_when_column_two_has_one_entry() -> None:
    assert colours("BP", BIG_EYE) == ""
    assert colours("BPB", BIG_EYE) == "R"


def test_small_road_and_cockroach_start_two_and_three_columns_on() -> None:
    assert colours("BPB", SMALL) == ""
    assert colours("BPBB", SMALL) == "U"  # column 3 (BB) has two entries: its second starts
    assert colours("BPBBP", SMALL) == "UU"
    assert colours("BPBP", SMALL) == "R"  # column 3 holds one entry: column 4 starts it
    assert colours("BPBP", COCKROACH) == ""
    assert colours("BPBPB", COCKROACH) == "R"
    assert colours("BPBPP", COCKROACH) == "U"


# --- the colour of each entry ------------------------------------------------------------


def test_a_new_column_is_red_when_the_two_columns_before_it_match_in_length() -> None:
    assert colours("BBPPB", BIG_EYE) == "RR"  # PP as long as BB
    assert colours("BBPB", BIG_EYE) == "U"  # P shorter than BB


def test_down_a_column_red_while_the_compared_column_is_as_deep() -> None:
    assert colours("BBPP", BIG_EYE) == "R"  # r = 2 <= L = 2


def test_down_a_column_blue_one_row_past_the_compared_columns_end() -> None:
    assert colours("BPP", BIG_EYE) == "U"  # r = 2 = L + 1


def test_down_a_column_red_again_beyond_that() -> None:
    assert colours("BPPP", BIG_EYE) == "UR"  # r = 3 > L + 1 = 2


def test_a_longer_shoe_on_all_three_roads() -> None:
    # Streaks 3, 2, 1, 4, 2 (BBB PP B PPPP BB), worked row by row.
    shoe = "BBBPPBPPPPBB"
    assert streak_lengths(results(shoe)) == [3, 2, 1, 4, 2]
    assert colours(shoe, BIG_EYE) == "RUUURRUR"
    assert colours(shoe, SMALL) == "URURUU"
    assert colours(shoe, COCKROACH) == "RRUUR"


def test_ties_are_ignored_by_the_derived_roads_even_before_the_first_result() -> None:
    assert colours("TTBPTPT", BIG_EYE) == colours("BPP", BIG_EYE) == "U"


def test_a_shoe_of_only_ties_has_a_bead_road_and_nothing_else() -> None:
    only_ties = results("TTTT")
    assert len(bead_road(only_ties)) == 4
    assert big_road(only_ties) == []
    assert all(derived_road(only_ties, road) == [] for road in DerivedRoad)
    assert ask_roads(only_ties) == {
        winner: dict.fromkeys(DerivedRoad) for winner in (Winner.BANKER, Winner.PLAYER)
    }
    assert shoe_stats(only_ties).tie == 4


# --- drawing -----------------------------------------------------------------------------


def test_a_derived_road_is_drawn_a_column_per_run_of_one_colour() -> None:
    cells = derived_road(results("BBBPPBPPPPBB"), BIG_EYE)  # R UUU RR U R
    assert [(cell.column, cell.row, cell.colour.value) for cell in cells] == [
        (0, 0, "red"),
        (1, 0, "blue"),
        (1, 1, "blue"),
        (1, 2, "blue"),
        (2, 0, "red"),
        (2, 1, "red"),
        (3, 0, "blue"),
        (4, 0, "red"),
    ]


def test_a_derived_road_grows_a_dragon_tail_like_the_big_road() -> None:
    # One B, then nine P: blue at row 2, red for each of rows 3-9, seven reds in a run.
    cells = derived_road(results("B" + "P" * 9), BIG_EYE)
    assert [(cell.column, cell.row) for cell in cells] == [
        (0, 0),
        (1, 0),
        (1, 1),
        (1, 2),
        (1, 3),
        (1, 4),
        (1, 5),
        (2, 5),
    ]
    assert [cell.colour for cell in cells] == [Colour.BLUE] + [Colour.RED] * 7


def test_streak_places_is_the_big_roads_placement_for_any_marks() -> None:
    marks = ["x"] * 7 + ["y"]
    assert streak_places(marks) == [(0, row) for row in range(6)] + [(1, 5), (1, 0)]


# --- ask roads ---------------------------------------------------------------------------


def test_ask_roads_tell_what_each_road_would_add_after_banker_and_after_player() -> None:
    asked = ask_roads(results("BBBPPBPPPPBB"))
    assert asked[Winner.BANKER] == {BIG_EYE: Colour.RED, SMALL: Colour.RED, COCKROACH: Colour.BLUE}
    assert asked[Winner.PLAYER] == {
        BIG_EYE: Colour.BLUE,
        SMALL: Colour.BLUE,
        COCKROACH: Colour.RED,
    }


def test_a_road_not_started_asks_nothing() -> None:
    asked = ask_roads(results("BP"))
    assert asked[Winner.BANKER] == {BIG_EYE: Colour.RED, SMALL: None, COCKROACH: None}
    assert asked[Winner.PLAYER] == {BIG_EYE: Colour.BLUE, SMALL: None, COCKROACH: None}
    assert ask_roads([])[Winner.BANKER] == dict.fromkeys(DerivedRoad)


# --- statistics --------------------------------------------------------------------------


def test_statistics_count_wins_pairs_and_naturals() -> None:
    shoe = [
        RoadResult(Winner.BANKER, banker_pair=True, natural=True),
        RoadResult(Winner.PLAYER, player_pair=True, banker_pair=True),
        RoadResult(Winner.TIE),
        RoadResult(Winner.BANKER, natural=True),
    ]
    stats = shoe_stats(shoe)
    assert (stats.banker, stats.player, stats.tie) == (2, 1, 1)
    assert (stats.player_pair, stats.banker_pair, stats.natural) == (1, 2, 2)
    assert stats.super_sevens is None


def test_seven_up_counts_the_rounds_the_super_sevens_bet_won() -> None:
    shoe = [RoadResult(Winner.PLAYER, sevens=count) for count in (1, 2, 3, 1, 6)]
    assert shoe_stats(shoe, frozenset({2, 3, 4, 5, 6})).super_sevens == 3


# --- properties over any shoe ------------------------------------------------------------

road_results = st.lists(
    st.builds(
        RoadResult,
        winner=st.sampled_from(list(Winner)),
        player_pair=st.booleans(),
        banker_pair=st.booleans(),
        natural=st.booleans(),
    ),
    max_size=90,
)


@given(road_results)
def test_no_road_ever_draws_two_cells_in_one_place(shoe: list[RoadResult]) -> None:
    roads = [bead_road(shoe), big_road(shoe), *(derived_road(shoe, road) for road in DerivedRoad)]
    for cells in roads:
        places = [(cell.column, cell.row) for cell in cells]
        assert len(places) == len(set(places))
        assert all(0 <= row < 6 for _, row in places)


@given(road_results)
def test_every_settled_non_tie_result_gives_one_big_road_cell(shoe: list[RoadResult]) -> None:
    cells = big_road(shoe)
    assert [cell.winner for cell in cells] == [r.winner for r in shoe if r.winner is not Winner.TIE]
    assert sum(cell.ties for cell in cells) == (
        sum(r.winner is Winner.TIE for r in shoe) if cells else 0
    )


@given(road_results)
def test_each_derived_road_has_one_cell_per_big_road_entry_from_its_start(
    shoe: list[RoadResult],
) -> None:
    lengths = streak_lengths(shoe)
    for road in DerivedRoad:
        k = road.offset
        # Before the start: every entry of the first k columns and column k+1's first.
        expected = sum(lengths) - sum(lengths[:k]) - 1 if len(lengths) > k else 0
        assert len(derived_road(shoe, road)) == expected


@given(road_results, st.sampled_from([Winner.BANKER, Winner.PLAYER]))
def test_the_ask_road_is_the_colour_the_next_result_then_adds(
    shoe: list[RoadResult], next_winner: Winner
) -> None:
    asked = ask_roads(shoe)[next_winner]
    for road in DerivedRoad:
        before = derived_colours(shoe, road)
        after = derived_colours([*shoe, RoadResult(next_winner)], road)
        assert after[: len(before)] == before
        assert after[len(before) :] == ([] if asked[road] is None else [asked[road]])


@given(road_results)
def test_asking_banker_and_asking_player_always_disagree_once_a_road_has_started(
    shoe: list[RoadResult],
) -> None:
    asked = ask_roads(shoe)
    for road in DerivedRoad:
        banker, player = asked[Winner.BANKER][road], asked[Winner.PLAYER][road]
        assert (banker is None) == (player is None)
        assert banker is None or banker != player
