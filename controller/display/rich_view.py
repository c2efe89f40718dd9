"""The live table on a terminal, drawn with rich from a TableBoard.

render_board(board) is the whole picture: the round on the layout (cards,
totals, whose card is next), the shoe's counters and cut card, the last
results, the five roads with the statistics and the ask roads (render_roads,
which `shoectl roads` prints alone), and the holds and alarms. TableView is
the observer that keeps a board and hands rich the picture whenever
rich.live.Live refreshes, from its own thread, so the view locks the board.
rich is imported here: import this module only where a terminal display runs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from cardshoe.controller.one_line import escape_line_breaks
from cardshoe.controller.procedure.facts import TableEvent
from cardshoe.controller.rules.cards import MANDATORY_SEVEN_TEXT, RANK_SYMBOLS, parse_card
from cardshoe.controller.rules.hands import Winner, point_total
from cardshoe.controller.scoreboard.board import BURN, ResultRow, TableBoard
from cardshoe.controller.scoreboard.derived import Colour, DerivedRoad, ask_roads, derived_road
from cardshoe.controller.scoreboard.notices import NoticeKind, notice
from cardshoe.controller.scoreboard.roads import ROAD_ROWS, RoadResult, bead_road, big_road

SUITS = {"S": ("♠", "bold"), "H": ("♥", "bold red"), "D": ("♦", "bold red"), "C": ("♣", "bold")}
RANKS = dict(zip(RANK_SYMBOLS, ["A", *map(str, range(2, 11)), "J", "Q", "K"], strict=True))
WINNERS = {
    Winner.BANKER: ("B", "bold white on red", "bold red"),
    Winner.PLAYER: ("P", "bold white on blue", "bold blue"),
    Winner.TIE: ("T", "bold white on green", "bold green"),
}
"""Winner -> (letter, bead road style, big road style): Banker red, Player blue, Tie green."""
PAIR_MARKS = {
    (True, False): ("•", "bold red"),
    (False, True): ("•", "bold blue"),
    (True, True): ("•", "bold magenta"),
}
"""(banker_pair, player_pair) -> the mark beside a bead."""
PLAIN_PAIR_MARKS = {(True, False): "'", (False, True): ",", (True, True): ":"}
"""Without colour, the pair dot as a symbol where the page draws it: ' a Banker pair (top),
, a Player pair (bottom), : both."""
NATURAL_MARK = ("*", "bold yellow")
DERIVED_MARKS = {DerivedRoad.BIG_EYE: "○", DerivedRoad.SMALL: "●", DerivedRoad.COCKROACH: "╱"}
"""Hollow circles, filled dots and slashes, as printed boards draw the three derived roads."""
DERIVED_TITLES = {
    DerivedRoad.BIG_EYE: "Big eye boy",
    DerivedRoad.SMALL: "Small road",
    DerivedRoad.COCKROACH: "Cockroach pig",
}
COLOUR_STYLES = {Colour.RED: "bold red", Colour.BLUE: "bold blue"}
PLAIN_COLOUR_MARKS = {Colour.RED: "r", Colour.BLUE: "b"}
"""Without colour, a derived road's marks and the ask roads as letters: r red, b blue."""
PLAIN_LEGEND = (
    "without colour: r red, b blue (derived and ask roads); "
    "' Banker pair, , Player pair, : both pairs, * natural (bead road)"
)
"""The key to the letters and symbols above, printed under the roads when colour is off."""
DERIVED_CELL_WIDTH = 1
ASK_LABELS = ((Winner.BANKER, "ask B ", "bold red"), (Winner.PLAYER, "ask P ", "bold blue"))
TIE_STYLE = "bold green"
BEAD_CELL_WIDTH = 3
BIG_ROAD_CELL_WIDTH = 2
ROAD_PANEL_HEIGHT = ROAD_ROWS + 3
"""The grid's rows, a line saying how many columns a narrow terminal hides, the borders."""
RECENT_RESULTS = 6
PHASE_STYLES = {"shoe ended": "bold", "round void": "bold yellow"}


def card_text(card: str | None) -> Text:
    """A card as a table shows it: rank and suit symbol, hearts and diamonds red."""
    if card is None:
        return Text("??", style="bold yellow")
    if card == MANDATORY_SEVEN_TEXT:
        return Text("7*", style="bold yellow")
    parsed = parse_card(card)
    assert parsed.suit is not None
    glyph, style = SUITS[parsed.suit.value]
    return Text(RANKS[RANK_SYMBOLS[parsed.rank - 1]] + glyph, style=style)


def hand_text(cards: Sequence[str | None]) -> Text:
    return Text(" ").join(card_text(card) for card in cards) if cards else Text("-", "dim")


def hand_total(cards: Sequence[str]) -> int:
    return point_total(parse_card(card).value for card in cards)


def render_board(board: TableBoard) -> RenderableType:
    """The whole table view of one board."""
    top = Table.grid(expand=True, padding=(0, 1))
    top.add_column(ratio=3)
    top.add_column(ratio=2)
    top.add_column(ratio=4)
    top.add_row(_round_panel(board), _shoe_panel(board), _results_panel(board))
    roads = render_roads(board)
    return Panel(
        Group(top, roads, _alerts_panel(board)),
        title=_title(board),
        title_align="left",
        border_style="green",
    )


def render_roads(board: TableBoard) -> RenderableType:
    """The five roads, the statistics and the ask roads of the board's shoe."""
    results = board.road_results()
    upper = Table.grid(expand=True, padding=(0, 1))
    upper.add_column(ratio=1)
    upper.add_column(ratio=2)
    upper.add_row(
        Panel(BeadRoad(results), title="Bead road", height=ROAD_PANEL_HEIGHT),
        Panel(BigRoad(results), title="Big road", height=ROAD_PANEL_HEIGHT),
    )
    lower = Table.grid(expand=True, padding=(0, 1))
    for _ in range(len(DerivedRoad) + 1):
        lower.add_column(ratio=1)
    lower.add_row(
        *(
            Panel(
                DerivedRoadView(results, road), title=DERIVED_TITLES[road], height=ROAD_PANEL_HEIGHT
            )
            for road in DerivedRoad
        ),
        Panel(ShoeStats(board, results), title="Shoe so far", height=ROAD_PANEL_HEIGHT),
    )
    return Group(upper, lower, PlainLegend())


class PlainLegend:
    """The key to the marks drawn without colour; nothing when the console has colour."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if colour_off(console):
            yield Text(PLAIN_LEGEND, style="dim")


def colour_off(console: Console) -> bool:
    """Whether the console prints no colour (a pipe, a file, NO_COLOR): then every mark that
    colour alone tells apart is drawn as a letter instead."""
    return console.no_color or console.color_system is None


class ShoeStats:
    """Wins, pairs (7 Up: Super 7's) and naturals, then what each road asks for B and P."""

    def __init__(self, board: TableBoard, results: Sequence[RoadResult]) -> None:
        self.board = board
        self.results = results

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        stats = self.board.stats(list(self.results))
        wins = Text.assemble(
            ("B ", "bold red"),
            f"{stats.banker}  ",
            ("P ", "bold blue"),
            f"{stats.player}  ",
            ("T ", "bold green"),
            str(stats.tie),
        )
        if stats.super_sevens is None:
            side = f"pairs P {stats.player_pair} B {stats.banker_pair}"
        else:
            side = f"Super 7's {stats.super_sevens}"
        lines: list[RenderableType] = [wins, Text(side), Text(f"natural {stats.natural}")]
        plain = colour_off(console)
        asked = ask_roads(self.results)
        for winner, label, style in ASK_LABELS:
            marks = [_ask_mark(road, colour, plain) for road, colour in asked[winner].items()]
            lines.append(Text.assemble((label, style), Text(" ").join(marks)))
        yield Group(*lines)


def _ask_mark(road: DerivedRoad, colour: Colour | None, plain: bool) -> Text:
    if colour is None:
        return Text(" ")
    if plain:
        return Text(PLAIN_COLOUR_MARKS[colour])
    return Text(DERIVED_MARKS[road], COLOUR_STYLES[colour])


def _title(board: TableBoard) -> Text:
    """A Text, not a str: rich would read a str's brackets as markup, and the shoe's id and
    the table's come from outside the program."""
    parts = ["cardshoe"]
    if board.table_id:
        parts.append(f"table {board.table_id}")
    if board.game:
        kind = "manual shoe" if board.device_kind == "shoe" else "shuffler-dealer"
        parts += [board.game, f"{board.decks} deck{'' if board.decks == 1 else 's'}", kind]
    if board.shoe_id:
        parts.append(f"shoe {board.shoe_id}")
    if board.fingerprint:
        parts.append(f"options {board.fingerprint[:12]}")
    return Text(escape_line_breaks(" · ".join(parts)))


def _round_panel(board: TableBoard) -> Panel:
    """The round on the layout; while bets are open, the round just finished stays shown."""
    shown = _finished_row(board)
    player, banker, demo = board.player, board.banker, board.round_demo
    heading = "Round -" if board.round_no is None else f"Round {board.round_no}"
    phase = Text(board.phase, style=PHASE_STYLES.get(board.phase, ""))
    if board.phase == "betting" and board.results:
        shown = board.results[-1]
        player, banker, demo = shown.player, shown.banker, shown.demo
        heading = f"Round {shown.round}"
        phase = Text(f"bets open: {board.round_no}", style="bold green")
    if demo:
        heading += " (demonstration)"
    if board.holds:
        phase = Text("HELD", style="bold white on red")
    hands = Table.grid(padding=(0, 1))
    hands.add_column(style="bold")
    hands.add_column()
    hands.add_column(justify="right", style="bold")
    hands.add_column(style="bold")
    for name, cards, style in (("Player", player, "blue"), ("Banker", banker, "red")):
        won = shown is not None and shown.winner in (name.lower(), "tie")
        total = str(hand_total(cards)) if cards else ""
        hands.add_row(Text(name, style=style), hand_text(cards), total, "◀" if won else "")
    if board.set_aside:
        hands.add_row(Text("Aside", style="yellow"), hand_text(board.set_aside), "", "")
    return Panel(
        Group(
            Text.assemble((heading, "bold"), "  ", phase),
            hands,
            Text.assemble("next card: ", _next_card(board)),
        ),
        title="Round",
        title_align="left",
    )


def _finished_row(board: TableBoard) -> ResultRow | None:
    if board.results and board.results[-1].round == board.round_no:
        return board.results[-1]
    return None


def _next_card(board: TableBoard) -> Text:
    if board.holds:
        return Text("none (held)", style="bold red")
    if board.next_card is None:
        return Text("none", style="dim")
    if board.next_card == BURN:
        left = "" if board.burn_remaining is None else f" ({board.burn_remaining} to go)"
        return Text(f"burn{left}", style="bold yellow")
    return Text(board.next_card, style="bold blue" if board.next_card == "player" else "bold red")


def _shoe_panel(board: TableBoard) -> Panel:
    grid = Table.grid(padding=(0, 1))
    grid.add_column()
    grid.add_column(justify="right", style="bold")
    grid.add_row("dealt", str(board.dealt))
    grid.add_row("burned", str(board.burned))
    if board.returned:
        grid.add_row("returned", str(board.returned))
    grid.add_row("in shoe", str(board.in_shoe))
    grid.add_row("rounds", str(board.rounds))
    grid.add_row("cut card", _cut_card(board))
    if board.last_round is not None:
        grid.add_row("last round", Text(str(board.last_round), style="bold yellow"))
    if board.ended is not None:
        for name, value in reconciliation_rows(board.ended):
            grid.add_row(name, value)
    rows: list[RenderableType] = [grid]
    if board.ended is not None:
        ok = board.ended["reconciled"]
        rows.append(
            Text(
                "reconciled" if ok else "NOT reconciled",
                style="bold green" if ok else "bold white on red",
            )
        )
    return Panel(Group(*rows), title="Shoe", title_align="left")


def reconciliation_rows(ended: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The rest of the card account the reconciliation compared, once the shoe has ended:
    loaded + intruders = dealt + burned - returned + remaining, and the device's own count."""
    remaining, device = ended["remaining"], ended["device_cards_dealt"]
    return [
        ("loaded", str(ended["loaded"])),
        ("intruders", str(ended["intruders"])),
        ("remaining", "unknown" if remaining is None else str(remaining)),
        ("device", "unknown" if device is None else f"{device} out"),
    ]


def _cut_card(board: TableBoard) -> Text:
    if board.device_kind == "auto":
        return Text("none", style="dim")
    if board.last_round_cause == "cut_card":
        return Text("out", style="bold yellow")
    return Text("not yet", style="dim")


def _results_panel(board: TableBoard) -> Panel:
    table = Table.grid(padding=(0, 1))
    for _ in range(5):
        table.add_column(no_wrap=True, overflow="ellipsis")
    for row in reversed(board.results[-RECENT_RESULTS:]):
        table.add_row(
            Text(str(row.round), style="dim"),
            hand_text(row.player),
            hand_text(row.banker),
            _verdict(row),
            Text(_notes(row), style="dim"),
        )
    body: RenderableType = table if board.results else Text("none yet", style="dim")
    return Panel(body, title="Last results", title_align="left")


def _verdict(row: ResultRow) -> Text:
    if row.winner is None:
        return Text(f"VOID {row.void}", style="bold yellow")
    letter, style, _ = WINNERS[Winner(row.winner)]
    return Text.assemble((f" {letter} ", style), f" {row.player_total}-{row.banker_total}")


def _notes(row: ResultRow) -> str:
    notes = [
        name
        for name, flag in (
            ("natural", row.natural),
            ("P pair", row.player_pair),
            ("B pair", row.banker_pair),
            ("demo", row.demo),
        )
        if flag
    ]
    return ", ".join(notes)


def _hold_line(hold: str) -> Text:
    """The hold's code, which the journal and a technician use, and what it means and asks for
    in the words the table's screen shows (scoreboard.notices)."""
    words = notice(NoticeKind.HOLD, hold)
    line = Text(f"HOLD {escape_line_breaks(hold)}", style="bold white on red")
    line.append(f": {words.what.en}. {words.todo.en}", style="bold red")
    return line


def _alerts_panel(board: TableBoard) -> Panel:
    lines = [_hold_line(hold) for hold in board.holds]
    lines += [
        Text(escape_line_breaks(f"ALARM {alarm['kind']}: {alarm['detail']}"), style="bold red")
        for alarm in reversed(board.alarms)
    ]
    lines += [
        Text(
            f"irregularity {entry['code']} (round {entry['round']}): {entry['consequence']}",
            style="yellow",
        )
        for entry in reversed(board.irregularities)
    ]
    body: RenderableType = Group(*lines) if lines else Text("none", style="dim")
    return Panel(body, title="Holds and alarms", title_align="left")


@dataclass(frozen=True)
class _Cell:
    column: int
    row: int
    text: Text
    plain: str
    """The cell without colour: letters and symbols that alone tell it apart."""


class _Road:
    """A scoreboard grid showing the newest columns that fit the width it is given, and
    under it how many older columns that width hides."""

    def __init__(self, cells: list[_Cell], cell_width: int) -> None:
        self.cells = cells
        self.cell_width = cell_width

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        plain = colour_off(console)
        last = max((cell.column for cell in self.cells), default=-1)
        first = max(0, last + 1 - options.max_width // self.cell_width)
        grid = [[Text(" " * self.cell_width)] * (last + 1 - first) for _ in range(ROAD_ROWS)]
        for cell in self.cells:
            if cell.column >= first:
                grid[cell.row][cell.column - first] = Text(cell.plain) if plain else cell.text
        for row in grid:
            yield Text.assemble(*row)
        if first:
            yield Text(hidden_columns_note(first, options.max_width), style="dim")


def hidden_columns_note(hidden: int, width: int) -> str:
    """The line under a road cut to the terminal's width: the longest wording that fits."""
    plural = "" if hidden == 1 else "s"
    wordings = (
        f"< {hidden} earlier column{plural} hidden",
        f"< {hidden} column{plural} hidden",
        f"< {hidden} hidden",
        f"<{hidden}",
    )
    return next((text for text in wordings if len(text) <= width), wordings[-1])


class BeadRoad(_Road):
    """B red, P blue, T green; a dot for a pair (red Banker, blue Player), * a natural.
    Without colour the pair dot is a symbol (PLAIN_PAIR_MARKS)."""

    def __init__(self, results: Sequence[RoadResult]) -> None:
        cells = [
            _Cell(cell.column, cell.row, _bead(cell.result), _plain_bead(cell.result))
            for cell in bead_road(results)
        ]
        super().__init__(cells, BEAD_CELL_WIDTH)


def _bead(result: RoadResult) -> Text:
    letter, style, _ = WINNERS[result.winner]
    mark = PAIR_MARKS.get((result.banker_pair, result.player_pair))
    if mark is None:
        mark = NATURAL_MARK if result.natural else (" ", "")
    return Text.assemble((letter, style), mark, " ")


def _plain_bead(result: RoadResult) -> str:
    letter = WINNERS[result.winner][0]
    mark = PLAIN_PAIR_MARKS.get((result.banker_pair, result.player_pair))
    if mark is None:
        mark = NATURAL_MARK[0] if result.natural else " "
    return f"{letter}{mark} "


class BigRoad(_Road):
    """Streaks down the columns; green / (or a count) for ties on the result before them."""

    def __init__(self, results: Sequence[RoadResult]) -> None:
        cells = []
        for cell in big_road(results):
            text = _big(cell.winner, cell.ties)
            cells.append(_Cell(cell.column, cell.row, text, text.plain))
        super().__init__(cells, BIG_ROAD_CELL_WIDTH)


def _big(winner: Winner, ties: int) -> Text:
    letter, _, style = WINNERS[winner]
    tie_mark = "" if ties == 0 else "/" if ties == 1 else str(min(ties, 9))
    return Text.assemble((letter, style), (tie_mark.ljust(1), TIE_STYLE))


class DerivedRoadView(_Road):
    """Big eye boy ○, small road ●, cockroach pig ╱: red repeats, blue breaks; without
    colour r and b."""

    def __init__(self, results: Sequence[RoadResult], road: DerivedRoad) -> None:
        mark = DERIVED_MARKS[road]
        cells = [
            _Cell(
                cell.column,
                cell.row,
                Text(mark, style=COLOUR_STYLES[cell.colour]),
                PLAIN_COLOUR_MARKS[cell.colour],
            )
            for cell in derived_road(results, road)
        ]
        super().__init__(cells, DERIVED_CELL_WIDTH)


class TableView:
    """An observer keeping a TableBoard, and the renderable rich.live.Live shows.

    Live redraws from its own thread, so notify() and the drawing share a lock.
    on_change, when given, is called after each event (a Live refresh, say).
    """

    def __init__(self, board: TableBoard, on_change: Callable[[], None] | None = None) -> None:
        self.board = board
        self.on_change = on_change
        self._lock = threading.Lock()

    def notify(self, event: TableEvent) -> None:
        self.apply(event.KIND, event.payload())

    def apply(self, kind: str, payload: dict[str, object]) -> None:
        """Take one event in journal form (from a socket stream, say)."""
        with self._lock:
            self.board.apply(kind, payload)
        if self.on_change is not None:
            self.on_change()

    def __rich__(self) -> RenderableType:
        with self._lock:
            return render_board(self.board)
