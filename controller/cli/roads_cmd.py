"""shoectl roads: a shoe's scoreboard read back from its journal, in the terminal or as JSON."""

from __future__ import annotations

from pathlib import Path

import click

from cardshoe.controller.journal.store import Journal
from cardshoe.controller.one_line import json_line
from cardshoe.controller.scoreboard.board_json import board_json
from cardshoe.controller.scoreboard.shoe_replay import shoe_board


@click.command()
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--shoe", "shoe_id", help="The shoe id [default: the latest shoe]")
@click.option("--json", "as_json", is_flag=True, help="Print the board as one JSON object.")
def roads(path: Path, shoe_id: str | None, as_json: bool) -> None:
    """Draw a shoe's roads (bead, big, big eye boy, small road, cockroach pig), statistics
    and ask roads, from the journal at PATH, opened read-only.

    --json prints the object /board.json serves (docs/scoreboard.md): cells
    counted from 0, row 0 at the top, each road in the order it was filled.
    Exit 2 when the file is not a journal or holds no such shoe.
    """

    with Journal.open_readonly(path) as journal:
        board = shoe_board(journal, shoe_id)
    if as_json:
        click.echo(json_line(board_json(board)))
        return
    # Late: only the drawn roads need rich (~100 ms of imports); --json does not.
    from rich.console import Console

    from cardshoe.controller.display.rich_view import render_roads

    console = Console()
    settled = board.settled_rounds(board.road_results())
    console.print(
        f"shoe {board.shoe_id} · {board.game} · {settled} round{'' if settled == 1 else 's'}",
        markup=False,
        highlight=False,
    )
    console.print(render_roads(board))
