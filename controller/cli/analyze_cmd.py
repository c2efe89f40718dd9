"""shoectl analyze shuffle: is the shuffle random, and was each shoe shuffled at all?"""

from __future__ import annotations

import json
from pathlib import Path

import click

from cardshoe.controller.errors import UserError
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.protection.report import write_report
from cardshoe.controller.protection.shoe_records import read_shoes
from cardshoe.controller.protection.shuffle_tests import analyze_shuffles

FAILED_EXIT = 1
"""A test failed at 95% confidence: a check failed, as `shoectl journal verify` says it."""


@click.group()
def analyze() -> None:
    """Game-protection analyses over a table's journals (docs/game-protection.md)."""


@analyze.command()
@click.argument(
    "journals", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path)
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write an HTML report with the plots (needs the `analysis` extra).",
)
def shuffle(journals: tuple[Path, ...], as_json: bool, report_path: Path | None) -> None:
    """Chi-squared test of rank by position, and the carry-over test, over every shoe.

    Each journal is one table's, its shoes in the order dealt: the carry-over
    test compares each shoe with the next one of the same journal. Exit 1
    when a test fails at 95% confidence.
    """

    tables = []
    for path in journals:
        with Journal.open_readonly(path) as journal:
            tables.append(read_shoes(journal))
    analysis = analyze_shuffles(tables)
    if analysis.shoes == 0:
        raise UserError("the journals hold no shoe: give the journals of a table that has dealt")
    if report_path is not None:
        write_report(analysis, report_path, [str(path) for path in journals])
    if as_json:
        click.echo(json.dumps(analysis.as_json()))
    else:
        click.echo(f"{analysis.shoes} shoes")
        if not analysis.positions_tested:
            click.echo(f"rank_by_position   not run: {analysis.too_few_cards()}")
        for test in analysis.tests:
            dof = "-" if test.dof is None else str(test.dof)
            verdict = "pass" if test.passed else "FAIL"
            click.echo(
                f"{test.name:<18} statistic {test.statistic:12.3f}  dof {dof:>6}  "
                f"p {test.p_value:.4g}  {verdict}"
            )
        if not any(test.name == "carry_over" for test in analysis.tests):
            click.echo("carry_over         not run: no journal has two shoes of the same cards")
    if not all(test.passed for test in analysis.tests):
        raise SystemExit(FAILED_EXIT)
