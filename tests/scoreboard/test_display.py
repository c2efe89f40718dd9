"""The table display: the board kept from events, the rich view and the plain lines."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from support.session_support import SIM_DECK_SET, session_on, simulated_device, table_config

from cardshoe.controller.display.plain import PlainLines, plain_line
from cardshoe.controller.display.rich_view import TableView, render_board
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.procedure.facts import (
    Alarm,
    AlarmKind,
    BetsClosed,
    Burned,
    BurnReason,
    CardAssigned,
    CardSetAside,
    HoldEnded,
    HoldStarted,
    LastRoundSet,
    RoundOpened,
    RoundResult,
    RoundVoided,
    ShoeEnded,
    ShoeStarted,
    TableEvent,
)
from cardshoe.controller.rules.cards import parse_card
from cardshoe.controller.rules.hands import Hand
from cardshoe.controller.scoreboard.board import BURN, RESULTS_KEPT, TableBoard
from cardshoe.controller.scoreboard.board_json import board_json

P, B = Hand.PLAYER, Hand.BANKER


def assigned(round_no: int, card: str, to: Hand, next_recipient: Hand | None) -> CardAssigned:
    return CardAssigned(round_no, parse_card(card), f"{card}#00BC614E/1", to, next_recipient)


def result(
    round_no: int, player: str, banker: str, totals: tuple[int, int], winner: str
) -> RoundResult:
    return RoundResult(
        round_no,
        False,
        tuple(map(parse_card, player.split())),
        tuple(map(parse_card, banker.split())),
        *totals,
        winner,
        natural=False,
        player_pair=False,
        banker_pair=False,
        sevens=0,
        settlement=None,
    )


SHOE = [
    ShoeStarted("T1-shoe", "punto-banco", 1, "shoe", "ab" * 32, {}, None),
    Burned(parse_card("KS"), "KS#00BC614E/1", BurnReason.START_OF_SHOE, None),
    Burned(parse_card("2H"), "2H#00BC614E/1", BurnReason.START_OF_SHOE, 0),
    RoundOpened(1, False),
    BetsClosed(1, "dealer_button"),
    assigned(1, "7H", P, B),
    assigned(1, "5S", B, P),
    assigned(1, "AD", P, B),
    assigned(1, "4C", B, None),
    result(1, "7H AD", "5S 4C", (8, 9), "banker"),
    RoundOpened(2, False),
    BetsClosed(2, "dealer_button"),
    assigned(2, "9C", P, B),
    CardSetAside(2, parse_card("8H"), "8H#00BC614F/1", "foreign_card"),
    Alarm(AlarmKind.FOREIGN_CARD, "foreign_card: 8H#00BC614F/1"),
    RoundVoided(2, "foreign_card", (parse_card("9C"), parse_card("8H"))),
    RoundOpened(3, False),
    BetsClosed(3, "dealer_button"),
    assigned(3, "3D", P, B),
    HoldStarted("fault.jam", "dealing"),
]


def fed(events: Sequence[TableEvent]) -> TableBoard:
    board = TableBoard(table_id="T1")
    view = TableView(board)
    for event in events:
        view.notify(event)
    return board


def test_the_board_follows_a_shoe_card_by_card() -> None:
    board = fed(SHOE)
    assert (board.dealt, board.burned, board.in_shoe) == (7, 2, 52 - 9)
    assert (board.round_no, board.player, board.banker) == (3, ["3D"], [])
    assert board.next_card == "banker"
    assert board.holds == ["fault.jam"]
    assert [(row.round, row.winner, row.void) for row in board.results] == [
        (1, "banker", None),
        (2, None, "foreign_card"),
    ]
    assert [road.winner.value for road in board.road_results()] == ["banker"]
    assert board.alarms == [
        {"kind": "foreign_card", "detail": "foreign_card: 8H#00BC614F/1", "round": 2}
    ]


def test_whose_card_is_next_comes_from_the_game_before_the_first_card() -> None:
    board = fed([*SHOE[:3], RoundOpened(1, False)])
    assert board.next_card is None
    board.apply("round.bets_closed", {"round_no": 1, "by": "command"})
    assert board.next_card == "player"
    seven_up = fed(
        [ShoeStarted("S", "seven-up", 4, "auto", "cd" * 32, {}, None), RoundOpened(1, False)]
    )
    assert seven_up.player == ["7*"]
    seven_up.apply("round.bets_closed", {"round_no": 1, "by": "command"})
    assert seven_up.next_card == "banker"


def test_a_burn_under_way_is_the_next_card_until_it_is_done() -> None:
    board = fed(SHOE[:2])
    assert (board.next_card, board.burn_remaining) == (BURN, None)
    board = fed(SHOE[:3])
    assert (board.next_card, board.burn_remaining) == (None, 0)


def test_holds_end_as_the_table_says() -> None:
    board = fed([*SHOE, HoldStarted("link_lost", "held"), HoldEnded("fault.jam", ("link_lost",))])
    assert board.holds == ["link_lost"]


def test_the_end_of_the_shoe_takes_the_tables_counts() -> None:
    board = fed(
        [
            *SHOE,
            LastRoundSet(3, "house"),
            ShoeEnded("T1-shoe", 2, 52, 8, 2, 0, 0, None, 10, reconciled=True),
        ]
    )
    assert board.ended is not None and board.ended["reconciled"]
    assert (board.dealt, board.phase, board.last_round_cause) == (8, "shoe ended", "house")


def test_a_board_travels_as_json_and_comes_back_the_same() -> None:
    board = fed(SHOE)
    assert TableBoard.from_json(json.loads(json.dumps(board.to_json()))) == board


def test_events_in_journal_form_give_the_board_the_live_observer_built(tmp_path: Path) -> None:
    """What a monitor reading the journal (or a service's stream) sees is what the table saw."""
    config = table_config(decks=1)
    path = tmp_path / "journal.sqlite"
    core = simulated_device(config, seed=4, inject=("foreign-card@round=2",))
    live = TableBoard(table_id="T1")
    with session_on(config, core, path) as (session, _):
        session.subscribe(TableView(live))
        session.run_shoe(deck_set=SIM_DECK_SET, rounds=4)
    replayed = TableBoard(table_id="T1")
    with Journal.open_readonly(path) as journal:
        for record in journal.records():
            replayed.apply(record.kind, record.payload)
    assert replayed == live
    assert len(live.results) == 4 and live.ended is not None


def rendered(board: TableBoard, width: int = 100) -> str:
    console = Console(record=True, width=width, color_system=None)
    console.print(render_board(board))
    return console.export_text()


def test_the_rich_view_shows_the_round_counters_roads_and_alerts() -> None:
    text = rendered(fed(SHOE))
    for expected in (
        "table T1 · punto-banco · 1 deck · manual shoe",
        "Round 3",
        "HELD",
        "3♦",
        "Bead road",
        "Big road",
        "Big eye boy",
        "Small road",
        "Cockroach pig",
        "B 1  P 0  T 0",
        "natural 0",
        "ask B",
        "VOID foreign_card",
        "HOLD fault.jam: A card is jammed in the shoe. Dealer: clear the jam",
        "ALARM foreign_card",
    ):
        assert expected in text, expected
    for counter, value in (("dealt", 7), ("burned", 2), ("in shoe", 43), ("rounds", 2)):
        assert re.search(rf"{counter} +{value} ", text), counter


def test_the_roads_show_the_newest_columns_when_the_shoe_is_wider_than_the_screen() -> None:
    events: list[TableEvent] = [ShoeStarted("S", "punto-banco", 8, "shoe", "ab" * 32, {}, None)]
    for number in range(1, 61):
        winner = "banker" if number % 2 else "player"
        events += [RoundOpened(number, False), result(number, "TS TH", "TC TD", (0, 0), winner)]
    events[-1] = result(60, "9S TH", "TC TD", (9, 0), "player")
    text = rendered(fed(events), width=60)
    big_road_line = next(line for line in text.splitlines() if "P B P" in line)
    assert big_road_line.rstrip(" │").endswith("P")
    assert "60" in text


def test_an_empty_board_renders() -> None:
    assert "Round -" in rendered(TableBoard())


def test_plain_lines_say_each_event_on_one_line() -> None:
    board_events = [event for event in SHOE if plain_line(event.KIND, event.payload())]
    printed: list[str] = []
    lines = PlainLines(printed.append)
    for event in SHOE:
        lines.notify(event)
    assert len(printed) == len(board_events)
    assert "round 1: player 7H AD = 8, banker 5S 4C = 9: banker wins" in printed
    assert "round 2: VOID (foreign_card)" in printed
    assert "HOLD fault.jam (while dealing)" in printed
    assert plain_line("round.opened", {"round_no": 1, "demo": False}) is None


def test_the_derived_roads_draw_their_marks_in_red_and_blue() -> None:
    """Big eye boy of BBB PP B PPPP BB is R UUU RR U R, cockroach pig R R U U R
    (test_derived_roads works both out): one mark per colour, red repeats, blue breaks."""
    from cardshoe.controller.display.rich_view import DerivedRoadView
    from cardshoe.controller.rules.hands import Winner
    from cardshoe.controller.scoreboard.derived import DerivedRoad
    from cardshoe.controller.scoreboard.roads import RoadResult

    letters = {"B": Winner.BANKER, "P": Winner.PLAYER}
    results = [RoadResult(letters[letter]) for letter in "BBBPPBPPPPBB"]
    console = Console(width=20, color_system="truecolor")
    expected = {
        (DerivedRoad.BIG_EYE, "○"): [
            ["red", "blue", "red", "blue", "red"],
            ["blue", "red"],
            ["blue"],
        ],
        (DerivedRoad.COCKROACH, "╱"): [["red", "blue", "red"], ["red", "blue"]],
    }
    for (road, mark), rows in expected.items():
        lines = console.render_lines(DerivedRoadView(results, road), pad=False)
        colours = [
            [s.style.color.name for s in line if s.text == mark and s.style and s.style.color]
            for line in lines
        ]
        assert [row for row in colours if row] == rows, road


def test_a_machine_shoe_longer_than_the_list_keeps_its_counts_and_its_size() -> None:
    """Issue 28: the oldest rounds leave the list for counts; the roads draw the latest."""
    machine = ShoeStarted("T1-machine", "punto-banco", 8, "auto", "ab" * 32, {}, None)
    extra = 40
    rounds = []
    for number in range(1, RESULTS_KEPT + extra + 1):
        rounds.append(RoundOpened(number, False))
        if number % 10 == 0:
            rounds.append(RoundVoided(number, "misdeal", ()))
            continue
        won = "banker" if number % 3 else "player"
        rounds.append(result(number, "7H AD", "5S 4C", (8, 9), won))
    board = fed([machine, *rounds])
    listed = board.road_results()
    assert len(board.results) == RESULTS_KEPT
    assert board.results[0].round == extra + 1
    assert (board.rounds, board.voids) == (RESULTS_KEPT + extra, (RESULTS_KEPT + extra) // 10)
    settled = RESULTS_KEPT + extra - board.voids
    assert board.settled_rounds(listed) == settled == board_json(board)["rounds"]
    stats = board_json(board)["stats"]
    banker = sum(1 for n in range(1, RESULTS_KEPT + extra + 1) if n % 10 and n % 3)
    assert (stats["banker"], stats["player"]) == (banker, settled - banker)
    assert len(board_json(board)["bead"]) == len(listed) < settled
    assert TableBoard.from_json(json.loads(json.dumps(board.to_json()))) == board
