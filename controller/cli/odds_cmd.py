"""shoectl odds: exact outcome probabilities and house edges, by full enumeration."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from cardshoe.controller.cli.completion import complete_game
from cardshoe.controller.errors import UserError
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.protection.shoe_records import journal_shoe
from cardshoe.controller.rules.cards import ShoeComposition, parse_cards
from cardshoe.controller.rules.games import check_decks, get_game, paytable_named
from cardshoe.controller.rules.odds import price_shoe

if TYPE_CHECKING:
    from cardshoe.controller.rules.cards import Card
    from cardshoe.controller.rules.odds import OddsReport


@click.command()
@click.option(
    "--game",
    "game_name",
    shell_complete=complete_game,
    help="Game variant; an unknown name lists the choices [default with --journal: the shoe's]",
)
@click.option("--decks", type=int, help="Decks in the shoe [default with --journal: the shoe's]")
@click.option(
    "--commission",
    default=None,
    help="Commission option (default: the game's first); an unknown one lists the choices.",
)
@click.option(
    "--paytable",
    default=None,
    help="Published paytable (default: the game's first); an unknown one lists the choices.",
)
@click.option(
    "--seen",
    metavar="CARDS",
    help='Cards already out of the shoe, burned and dealt alike: price the rest ("AS KD 7H").',
)
@click.option(
    "--journal",
    "journal_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Take the seen cards from this table journal (opened read-only).",
)
@click.option("--shoe", "shoe_id", help="With --journal: this shoe [default: the latest].")
@click.option(
    "--after-round",
    type=click.IntRange(min=1),
    help="With --journal: the shoe as it stood when round K ended [default: now].",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def odds(
    game_name: str | None,
    decks: int | None,
    commission: str | None,
    paytable: str | None,
    seen: str | None,
    journal_path: Path | None,
    shoe_id: str | None,
    after_round: int | None,
    as_json: bool,
) -> None:
    """Exact odds of every outcome and the house edge of every bet of a game.

    Counts are over ordered deals of the first 6 shoe cards (5 in 7 Up), as
    published tables count them; a house edge is the house's expected gain
    as a fraction of the stake, ties included. With --seen or --journal the
    shoe priced is what is left once those cards are out: a negative house
    edge is a bet the player has the edge on (docs/game-protection.md).
    """

    if journal_path is None:
        if shoe_id is not None or after_round is not None:
            raise click.UsageError("--shoe and --after-round choose a shoe of --journal")
        if game_name is None or decks is None:
            given = (("--game", game_name), ("--decks", decks))
            missing = [name for name, value in given if value is None]
            raise click.UsageError(
                f"Missing option {' and '.join(repr(name) for name in missing)}: give --game "
                "and --decks, or --journal to take them from a dealt shoe"
            )
        cards = parse_cards(seen) if seen else []
    else:
        if seen is not None:
            raise click.UsageError("give the seen cards by --seen or by --journal, not both")
        shoe_options = (shoe_id, after_round, game_name, decks)
        game_name, decks, cards = _journal_shoe(journal_path, *shoe_options)
    check_decks(game_name, decks, "--decks")
    game = get_game(game_name, commission, paytable_named(game_name, paytable))
    report = price_shoe(game, decks, ShoeComposition(decks).remaining(cards))
    record = odds_record(report)
    click.echo(json.dumps(record) if as_json else _text(record))


def _journal_shoe(
    path: Path, shoe_id: str | None, after_round: int | None, game: str | None, decks: int | None
) -> tuple[str, int, list[Card]]:
    """The game, decks and seen cards of a journal's shoe; options that disagree are refused."""

    with Journal.open_readonly(path) as journal:
        shoe = journal_shoe(journal, shoe_id, str(path))
    for option, given, dealt in (("--game", game, shoe.game), ("--decks", decks, shoe.decks)):
        if given is not None and given != dealt:
            raise UserError(
                f"{option} {given} disagrees with shoe {shoe.shoe_id}, dealt as {dealt}: "
                f"leave {option} out"
            )
    cards = shoe.still_out() if after_round is None else shoe.cards_after_round(after_round)
    return shoe.game, shoe.decks, cards


def odds_record(report: OddsReport) -> dict[str, Any]:
    """The JSON form of a report: floats for reading, exact fractions and counts for checking."""
    outcomes = {
        winner.value: {
            "p": float(report.probability(winner)),
            "exact": _fraction_text(report.probability(winner)),
            "count": report.winners[winner],
        }
        for winner in report.winners
    }
    return {
        "game": report.game.name,
        "decks": report.decks,
        "cards_left": report.cards_left,
        "seen": 52 * report.decks - report.cards_left,
        "commission": report.game.commission.name,
        "paytable": report.game.paytable.name,
        "shoe_cards_per_deal": report.game.dealing.max_shoe_cards,
        "total": report.total,
        "outcomes": outcomes,
        "house_edge": {bet.value: float(odds.house_edge) for bet, odds in report.bets.items()},
        "house_edge_exact": {
            bet.value: _fraction_text(odds.house_edge) for bet, odds in report.bets.items()
        },
        "returns": {
            bet.value: [
                {"gain": _fraction_text(gain), "count": deals}
                for gain, deals in sorted(odds.returns.items(), reverse=True)
            ]
            for bet, odds in report.bets.items()
        },
    }


def _fraction_text(value: Fraction) -> str:
    return f"{value.numerator}/{value.denominator}"


def _text(record: dict[str, Any]) -> str:
    lines = [
        f"{record['game']}, {record['decks']} decks, commission {record['commission']}, "
        f"paytable {record['paytable']}",
        f"{record['cards_left']} cards left after {record['seen']} seen; "
        f"{record['total']:,} ordered deals of {record['shoe_cards_per_deal']} shoe cards",
        "",
        f"{'outcome':<8}  {'probability':>12}  {'ordered deals':>25}",
    ]
    for name, outcome in record["outcomes"].items():
        lines.append(f"{name:<8}  {outcome['p']:>12.8f}  {outcome['count']:>25,}")
    lines += ["", f"{'bet':<12}  {'house edge':>10}"]
    for bet, edge in record["house_edge"].items():
        lines.append(f"{bet:<12}  {edge:>10.4%}" + ("  the player's edge" if edge < 0 else ""))
    return "\n".join(lines)
