"""shoectl rules play: deal consecutive rounds of a game from a given shoe order."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from cardshoe.controller.cli.completion import complete_game
from cardshoe.controller.display.columns import aligned_lines
from cardshoe.controller.errors import UserError
from cardshoe.controller.rules.cards import parse_cards
from cardshoe.controller.rules.games import get_game
from cardshoe.controller.rules.shoe_order import play_shoe_order
from cardshoe.controller.scoreboard.round_json import round_json

if TYPE_CHECKING:
    from cardshoe.controller.rules.games import Game
    from cardshoe.controller.rules.shoe_order import PlayedRound

TEXT_COLUMNS = ("round", "player", "banker", "P", "B", "winner", "notes")


@click.group()
def rules() -> None:
    """Check the rules engine against known shoe orders."""


@rules.command()
@click.option(
    "--game",
    "game_name",
    shell_complete=complete_game,
    required=True,
    help="Game variant; an unknown name lists the choices.",
)
@click.option(
    "--cards",
    required=True,
    help='The shoe order, first card out first, e.g. "AS 7H TD 10C KS 2D" (no burn cards).',
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per round per line.")
def play(game_name: str, cards: str, as_json: bool) -> None:
    """Play consecutive rounds from the shoe order until the cards run out."""

    game = get_game(game_name)
    shoe = parse_cards(cards)
    if not shoe:
        raise UserError('--cards is empty: give the shoe order, e.g. --cards "AS 7H TD KC"')
    records = [round_record(game, played) for played in play_shoe_order(game, shoe)]
    if as_json:
        for record in records:
            click.echo(json.dumps(record))
    else:
        click.echo(_text_table(records))


def round_record(game: Game, played: PlayedRound) -> dict[str, Any]:
    """The JSON form of a played round (round_json's shape, shared with shoectl demo)."""

    current = played.round
    return round_json(
        game,
        played.number,
        current.dealt,
        current.player,
        current.banker,
        None if played.void else current.outcome(),
        played.void.value if played.void else None,
    )


def _text_table(records: list[dict[str, Any]]) -> str:
    rows = [TEXT_COLUMNS] + [_text_row(record) for record in records]
    return "\n".join(aligned_lines(rows))


def _text_row(record: dict[str, Any]) -> tuple[str, ...]:
    if record["void"]:
        total_cells = ("", "", "")
        notes = [f"void: {record['void']}"]
    else:
        total_cells = (str(record["player_total"]), str(record["banker_total"]), record["winner"])
        flags = ("natural", "player_pair", "banker_pair")
        notes = [flag.replace("_", " ") for flag in flags if record[flag]]
        if record["sevens"]:
            notes.append(f"sevens: {record['sevens']}")
    return (
        str(record["round"]),
        " ".join(record["player"]),
        " ".join(record["banker"]),
        *total_cells,
        ", ".join(notes),
    )
