"""shoectl odds: exact outcome probabilities and house edges, by full enumeration."""

from __future__ import annotations

import json
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from cardshoe.controller.rules.odds import OddsReport


@click.command()
@click.option(
    "--game", "game_name", required=True, help="Game variant; an unknown name lists the choices."
)
@click.option("--decks", type=int, required=True, help="Decks in the shoe.")
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
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def odds(
    game_name: str, decks: int, commission: str | None, paytable: str | None, as_json: bool
) -> None:
    """Exact odds of every outcome and the house edge of every bet of a game.

    Counts are over ordered deals of the first 6 shoe cards (5 in 7 Up), as
    published tables count them; a house edge is the house's expected gain
    as a fraction of the stake, ties included.
    """
    from cardshoe.controller.rules.games import check_decks, get_game, paytable_named
    from cardshoe.controller.rules.odds import compute_odds

    check_decks(game_name, decks, "--decks")
    game = get_game(game_name, commission, paytable_named(game_name, paytable))
    report = compute_odds(game, decks)
    record = odds_record(report)
    click.echo(json.dumps(record) if as_json else _text(record))


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
        f"{record['total']:,} ordered deals of {record['shoe_cards_per_deal']} shoe cards",
        "",
        f"{'outcome':<8}  {'probability':>12}  {'ordered deals':>25}",
    ]
    for name, outcome in record["outcomes"].items():
        lines.append(f"{name:<8}  {outcome['p']:>12.8f}  {outcome['count']:>25,}")
    lines += ["", f"{'bet':<12}  {'house edge':>10}"]
    for bet, edge in record["house_edge"].items():
        lines.append(f"{bet:<12}  {edge:>10.4%}")
    return "\n".join(lines)
