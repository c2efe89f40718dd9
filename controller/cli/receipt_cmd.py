"""shoectl journal receipt: a pack's receipt from a journal, for a supervisor to sign."""

from __future__ import annotations

from pathlib import Path

import click

from cardshoe.controller import record_kinds
from cardshoe.controller.display.columns import aligned_lines
from cardshoe.controller.errors import UserError
from cardshoe.controller.one_line import json_line
from cardshoe.controller.scoreboard.pack_receipt import ReceiptRecord, pack_receipt, receipt_rows
from cardshoe.controller.scoreboard.receipt_page import receipt_html


@click.command()
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--shoe", "shoe_id", required=True, help="The shoe's id.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option(
    "--html",
    "html_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write a one-page HTML receipt with signature lines to this file.",
)
def receipt(path: Path, shoe_id: str, as_json: bool, html_path: Path | None) -> None:
    """A pack's receipt: its chain of custody at shoe start (deck set, pack count, who
    loaded and who witnessed, the device and its firmware, the software, the time) and its
    reconciliation at shoe end, with the journal records it was read from."""
    # Late: the store loads sqlite3, which loading the journal group must not.
    from cardshoe.controller.journal.store import Journal

    if as_json and html_path is not None:
        raise UserError("choose --json or --html FILE, not both")
    with Journal.open_readonly(path) as opened:
        records = (
            ReceiptRecord(record.id, record.time_utc, record.kind, record.payload, record.hash)
            for record in opened.records(shoe_id=shoe_id)
        )
        made = pack_receipt(opened.table_id, records)
    if made is None:
        raise UserError(
            f"{path} holds no shoe {shoe_id}: "
            f"`shoectl journal show {path} --kind {record_kinds.SHOE_STARTED}` lists the shoes"
        )
    if html_path is not None:
        try:
            html_path.write_text(receipt_html(made), encoding="utf-8")
        except OSError as exc:
            raise UserError(
                f"cannot write {html_path}: {exc.strerror or exc}: choose a file in a folder "
                "you may write"
            ) from None
        click.echo(f"{html_path}: receipt of shoe {shoe_id}")
        return
    click.echo(
        json_line(made.to_json()) if as_json else "\n".join(aligned_lines(receipt_rows(made)))
    )
