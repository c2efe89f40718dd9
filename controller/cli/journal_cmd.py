"""shoectl journal: make a new table's journal; list, export and verify one, read-only."""

from __future__ import annotations

import csv
import heapq
import json
import sys
import time
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from cardshoe.controller import record_kinds
from cardshoe.controller.cli.options import TABLE_CONFIG_OPTION
from cardshoe.controller.cli.receipt_cmd import receipt
from cardshoe.controller.config import load_config
from cardshoe.controller.display.columns import aligned_lines
from cardshoe.controller.errors import UserError
from cardshoe.controller.journal.signing import load_signing_key, make_signing_key
from cardshoe.controller.one_line import json_line

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from cardshoe.controller.journal.records import Record
    from cardshoe.controller.journal.store import Journal

JOURNAL_PATH = click.argument("path", type=click.Path(path_type=Path))
NUMBER_COLUMNS = frozenset({0, 3})
"""show's columns aligned right: the record id and the round."""


def _filters(command: Callable[..., None]) -> Callable[..., None]:
    """The record filters shared by show and export."""
    command = click.option(
        "--kind", "kinds", multiple=True, help="Only this record kind (repeatable)."
    )(command)
    command = click.option(
        "--round", "round_no", type=click.IntRange(min=0), help="Only this round number."
    )(command)
    return click.option("--shoe", "shoe_id", help="Only records of this shoe id.")(command)


@click.group()
def journal() -> None:
    """Show, export, verify or prune a table's journal, or make a new table's (init).

    All but init and prune open the journal read-only.

    Exit codes: 0 success, 1 the journal failed verification or is damaged,
    2 the file is missing, unreadable or not a cardshoe journal.
    """


@journal.command()
@TABLE_CONFIG_OPTION
@click.option(
    "--if-missing",
    is_flag=True,
    help="Leave a journal that is already there as it is (for install scripts run again).",
)
def init(config_path: Path, if_missing: bool) -> None:
    """Make the journal of a new table, where service.journal_path says.

    `shoectl run` never makes a journal: a lost journal must be restored, not
    silently replaced by an empty one. Refuses (exit 2) where a journal is.
    """
    # Late: the store loads sqlite3, which loading the journal group must not.
    from cardshoe.controller.journal.store import Journal

    config = load_config(config_path)
    path = config.service.journal_path
    if if_missing and path.exists():
        made = make_signing_key(path, replace=False) is not None
        click.echo(f"{path}: kept the journal already there" + ("; made its signing key" * made))
        return
    Journal.init(path, table_id=config.table_id)
    make_signing_key(path, replace=False)
    click.echo(f"{path}: new journal for table {config.table_id}")


@journal.command()
@TABLE_CONFIG_OPTION
@click.option(
    "--new",
    "make_new",
    is_flag=True,
    help="Make a new key in place of the one there (rotation), or the first for an old journal.",
)
def key(config_path: Path, make_new: bool) -> None:
    """Print the table id and the public half of its signing key, to register on the floor.

    The key (made by init, beside the journal) signs every record the uplink
    publishes; `shoectl floor register-table TABLE_ID KEY` on the floor makes
    ingest store only records it signed (docs/security.md).
    """

    config = load_config(config_path)
    path = config.service.journal_path
    table_key = make_signing_key(path, replace=True) if make_new else load_signing_key(path)
    if table_key is None:
        raise UserError(
            f"{path}: no signing key beside this journal: make one with "
            "'shoectl journal key --new --config ...'"
        )
    click.echo(f"{config.table_id} {table_key.public_hex}")


@journal.command()
@JOURNAL_PATH
@_filters
@click.option("--last", type=click.IntRange(min=1), help="Only the last N matching records.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON array of records.")
def show(
    path: Path,
    shoe_id: str | None,
    round_no: int | None,
    kinds: tuple[str, ...],
    last: int | None,
    as_json: bool,
) -> None:
    """List records, one line each.

    Columns: id, time (UTC), shoe, round, device serial#sequence, kind, payload; each as
    wide as its widest value among the records listed.
    """

    # Late: the store loads sqlite3, which loading the journal group must not.
    from cardshoe.controller.journal.store import Journal

    with Journal.open_readonly(path) as opened:
        records: Iterator[Record] | deque[Record] = _matching(opened, shoe_id, round_no, kinds)
        if last is not None:
            records = deque(records, maxlen=last)
        if as_json:
            click.echo(json_line([record.as_dict() for record in records]))
            return
        rows = [_row(record) for record in records]
    if not rows:
        click.echo("no matching records")
        return

    for line in aligned_lines(rows, right=NUMBER_COLUMNS):
        click.echo(line)


@journal.command()
@JOURNAL_PATH
@_filters
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["jsonl", "csv"]),
    default="jsonl",
    show_default=True,
    help="JSON lines (one object per record) or CSV with the payload as a JSON column.",
)
@click.option(
    "--significant",
    is_flag=True,
    help="Only the significant events a lab asks for (docs/journal.md), each with a "
    "'significance' column saying why.",
)
@click.option(
    "--neutral",
    is_flag=True,
    help="Add the columns record_version and neutral: each device and link record's version "
    "and the device-neutral form it is read as (version 1 records hold the cardshoe wire "
    "form, as journals before the device seam wrote them).",
)
def export(
    path: Path,
    shoe_id: str | None,
    round_no: int | None,
    kinds: tuple[str, ...],
    output_format: str,
    significant: bool,
    neutral: bool,
) -> None:
    """Write records to stdout with every column, for archive or audit."""

    # Late: the store loads sqlite3, which loading the journal group must not;
    # recovery and significant_events (~130 ms) are only export's.
    from cardshoe.controller.journal.records import RECORD_FIELDS
    from cardshoe.controller.journal.store import Journal
    from cardshoe.controller.service.recovery import device_forms
    from cardshoe.controller.service.significant_events import SIGNIFICANT_KINDS

    if significant and kinds:
        raise UserError("--significant chooses the kinds itself: leave --kind out")
    fields = [*RECORD_FIELDS, SIGNIFICANCE] if significant else list(RECORD_FIELDS)
    if neutral:
        fields += NEUTRAL_COLUMNS

    def row_of(record: Record) -> dict[str, Any]:
        row = record.as_dict()
        if significant:
            row[SIGNIFICANCE] = SIGNIFICANT_KINDS[record.kind]
        if neutral:
            row.update(zip(NEUTRAL_COLUMNS, device_forms(record), strict=True))
        return row

    with Journal.open_readonly(path) as opened:
        records = _matching(
            opened, shoe_id, round_no, tuple(SIGNIFICANT_KINDS) if significant else kinds
        )
        rows = (row_of(record) for record in records)
        if output_format == "jsonl":
            for row in rows:
                click.echo(json_line(row))
            return
        writer = csv.DictWriter(sys.stdout, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            for column in ("payload", "neutral"):
                if row.get(column) is not None:
                    row[column] = json_line(row[column], sort_keys=True)
            writer.writerow(row)


SIGNIFICANCE = "significance"
"""The column `export --significant` adds: why a lab reads the record."""
NEUTRAL_COLUMNS = ["record_version", "neutral"]
"""The columns `export --neutral` adds to device and link records."""


@journal.command()
@JOURNAL_PATH
@click.option(
    "--anchor",
    help="ID:HASH printed by an earlier verify; fails if that record no longer has that hash.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def verify(path: Path, anchor: str | None, as_json: bool) -> None:
    """Check the hash chain; exit 1 naming the first bad record.

    A record edited, removed, moved or added outside the journal fails.
    On success it prints the anchor (last record id and hash): keep it
    outside this machine and pass it back with --anchor to detect a later
    rewrite of the whole file.
    """
    # Late: the store loads sqlite3, which loading the journal group must not.
    from cardshoe.controller.journal.records import ChainAnchor
    from cardshoe.controller.journal.store import Journal

    expected = ChainAnchor.parse(anchor) if anchor is not None else None
    with Journal.open_readonly(path) as opened:
        result = opened.verify(anchor=expected)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "path": str(path),
                    "ok": result.ok,
                    "records": result.records,
                    "head_hash": result.head_hash,
                    "anchor": str(result.anchor) if result.anchor else None,
                    "first_bad_id": result.first_bad_id,
                    "reason": result.reason,
                }
            )
        )
        if not result.ok:
            raise click.exceptions.Exit(1)
        return
    if not result.ok:
        where = f"record {result.first_bad_id}" if result.first_bad_id else "the journal"
        raise UserError(f"{path}: verification failed at {where}: {result.reason}", exit_code=1)
    click.echo(f"{path}: ok, {result.records} records, anchor {result.anchor or 'none (empty)'}")


@journal.command()
@JOURNAL_PATH
@click.option(
    "--anchor",
    help="ID:HASH the floor verified; default: the floor's anchor in the uplink's state file.",
)
@click.option(
    "--state-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="The uplink's state folder, holding the floor's latest anchor.",
)
@click.option(
    "--keep-days",
    type=click.FloatRange(min=0),
    default=7.0,
    show_default=True,
    help="Keep shoes that ended less than this many days ago.",
)
def prune(path: Path, anchor: str | None, state_dir: Path | None, keep_days: float) -> None:
    """Delete closed shoes the floor has verified, keeping a checkpoint for verify.

    Never deletes the open shoe or any record after the anchor; refuses
    (exit 1) when the journal does not match the anchor. Needs the journal's
    writer lock: run it while the table service is stopped, or let the
    service run it after each shoe (uplink.prune_after_shoe).
    """

    # Late: the store loads sqlite3, which loading the journal group must not.
    from cardshoe.controller.journal.prune import floor_anchor, prune_journal
    from cardshoe.controller.journal.records import ChainAnchor
    from cardshoe.controller.journal.store import Journal

    if anchor is not None:
        verified_anchor = ChainAnchor.parse(anchor)
    elif state_dir is not None:
        with Journal.open_readonly(path) as reader:
            table_id = reader.table_id
        held = floor_anchor(state_dir, table_id)
        if held is None:
            raise UserError(f"{state_dir}: the floor has not verified any record of {table_id}")
        verified_anchor = held
    else:
        raise UserError("give --anchor ID:HASH or --state-dir (the uplink's state folder)")
    result = prune_journal(path, verified_anchor, keep_days=keep_days, now_ns=time.time_ns())
    if result.cut_id is None:
        click.echo(f"{path}: nothing pruned: {result.why_not}")
        return
    click.echo(
        f"{path}: pruned {result.deleted} records through {result.cut_id} "
        f"({len(result.shoes)} shoe(s): {', '.join(result.shoes)}); "
        "journal verify checks what remains from the checkpoint"
    )


def _matching(
    opened: Journal, shoe_id: str | None, round_no: int | None, kinds: tuple[str, ...]
) -> Iterator[Record]:
    return opened.records(shoe_id=shoe_id, round_no=round_no, kinds=kinds or None)


def _row(record: Record) -> tuple[str, ...]:
    """A record's cells, in the columns show lists."""
    device = "-"
    if record.device_serial is not None:
        seq = "" if record.device_seq is None else f"#{record.device_seq}"
        device = f"{record.device_serial}{seq}"
    return (
        str(record.id),
        record.time_utc,
        record.shoe_id or "-",
        "-" if record.round_no is None else str(record.round_no),
        device,
        record.kind,
        json_line(record.payload, sort_keys=True),
    )


@journal.command(name="round")
@JOURNAL_PATH
@click.option("--shoe", "shoe_id", required=True, help="The shoe's id.")
@click.option("--round", "round_no", type=click.IntRange(min=1), required=True, help="Its number.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def round_(path: Path, shoe_id: str, round_no: int, as_json: bool) -> None:
    """Recall one round for a dispute: cards in shoe order, hands, result and settlement per
    unit, irregularities and corrections, who gave each command, and the records behind it."""
    # Late: the store loads sqlite3, which loading the journal group must not.
    from cardshoe.controller.journal.store import Journal
    from cardshoe.controller.scoreboard.round_recall import (
        RECALL_KINDS_BEFORE,
        JournalEntry,
        recall_round,
        recall_text,
    )

    with Journal.open_readonly(path) as opened:
        before = opened.records(shoe_id=shoe_id, round_no=round_no - 1, kinds=RECALL_KINDS_BEFORE)
        own = opened.records(shoe_id=shoe_id, round_no=round_no)
        entries = (
            JournalEntry(record.id, record.time_utc, record.kind, record.payload)
            for record in heapq.merge(before, own, key=lambda record: record.id)
        )
        recall = recall_round(shoe_id, round_no, entries)
    if recall is None:
        raise UserError(
            f"{path} holds no round {round_no} of shoe {shoe_id}: "
            f"`shoectl journal show {path} --kind {record_kinds.ROUND_OPENED}` lists the rounds"
        )
    click.echo(json_line(recall.to_json()) if as_json else recall_text(recall))


journal.add_command(receipt)
