"""shoectl journal export --significant: exactly the kinds docs/journal.md lists, each row
saying why, in JSON lines and CSV alike."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

from support.shoectl import ShoectlRunner

from cardshoe.controller.journal.store import Journal

DOCS = Path(__file__).resolve().parents[2] / "docs" / "journal.md"
ROW = re.compile(r"^\| `([a-z_.]+)` \| (.+) \|$")


def documented_kinds() -> dict[str, str]:
    """The significant-events table of docs/journal.md: kind -> significance."""
    section = DOCS.read_text().split("## Significant events", 1)[1].split("\n## ", 1)[0]
    return {
        found.group(1): found.group(2)
        for line in section.splitlines()
        if (found := ROW.match(line))
    }


def test_the_export_holds_every_significant_record_and_nothing_else(
    shoectl: ShoectlRunner, tmp_path: Path
) -> None:
    journal = tmp_path / "journal.sqlite"
    dealt = shoectl(
        "demo",
        "--seed",
        "4",
        "--rounds",
        "4",
        "--journal",
        str(journal),
        "--inject",
        "foreign-card@round=2",
    )
    assert dealt.returncode == 0, dealt.stderr
    kinds = documented_kinds()
    assert {"session.started", "software.authenticated", "round.void", "alarm"} <= set(kinds)
    with Journal.open_readonly(journal) as opened:
        expected = [record for record in opened.records() if record.kind in kinds]
        every = sum(1 for _ in opened.records())
    seen = {record.kind for record in expected}
    assert {"session.started", "shoe.started", "round.void", "alarm"} <= seen
    assert len(expected) < every

    lines = shoectl("journal", "export", str(journal), "--significant")
    assert lines.returncode == 0, lines.stderr
    rows = [json.loads(line) for line in lines.stdout.splitlines()]
    assert [(row["id"], row["kind"], row["hash"]) for row in rows] == [
        (record.id, record.kind, record.hash) for record in expected
    ]
    assert all(row["significance"] == kinds[row["kind"]] for row in rows)
    assert rows[0]["payload"]["software"]["manifest_sha256"]

    table = shoectl("journal", "export", str(journal), "--significant", "--format", "csv")
    assert table.returncode == 0, table.stderr
    parsed = list(csv.DictReader(io.StringIO(table.stdout)))
    assert [int(row["id"]) for row in parsed] == [record.id for record in expected]
    assert [row["significance"] for row in parsed] == [kinds[r.kind] for r in expected]
    assert json.loads(parsed[0]["payload"]) == expected[0].payload


def test_significant_with_a_kind_is_one_line_and_exit_2(
    shoectl: ShoectlRunner, tmp_path: Path
) -> None:
    journal = tmp_path / "journal.sqlite"
    Journal.init(journal, table_id="T1")
    refused = shoectl("journal", "export", str(journal), "--significant", "--kind", "alarm")
    assert refused.returncode == 2
    assert refused.stderr == (
        "shoectl: error: --significant chooses the kinds itself: leave --kind out\n"
    )
