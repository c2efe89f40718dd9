"""shoectl journal prune: closed shoes the floor holds go, the rest still verifies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.dealt_journals import deal_shoes
from support.shoectl import ShoectlRunner

from cardshoe.controller.journal.store import Journal


def ids_and_hashes(path: Path) -> list[tuple[int, str, str]]:
    with Journal.open_readonly(path) as journal:
        return [(r.id, r.hash, r.kind) for r in journal.records()]


@pytest.fixture(scope="module")
def three_shoes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("prune") / "journal.sqlite"
    deal_shoes(path, 3)
    return path


@pytest.fixture
def journal(three_shoes: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "journal.sqlite"
    copy.write_bytes(three_shoes.read_bytes())
    return copy


def anchor_at(path: Path, record_id: int) -> str:
    hashes = {record_id: digest for record_id, digest, _ in ids_and_hashes(path)}
    return f"{record_id}:{hashes[record_id]}"


def shoe_ends(path: Path) -> list[int]:
    return [record_id for record_id, _, kind in ids_and_hashes(path) if kind == "shoe.ended"]


def test_prune_deletes_the_closed_shoes_within_the_anchor_and_verify_still_passes(
    journal: Path, shoectl: ShoectlRunner
) -> None:
    ends = shoe_ends(journal)
    assert len(ends) == 3
    before = ids_and_hashes(journal)
    anchor = anchor_at(journal, ends[1] + 3)
    result = shoectl("journal", "prune", str(journal), "--anchor", anchor, "--keep-days", "0")
    assert result.returncode == 0, result.stderr
    assert f"pruned {ends[1]} records through {ends[1]} (2 shoe(s)" in result.stdout
    after = ids_and_hashes(journal)
    assert after == [row for row in before if row[0] > ends[1]]

    verified = json.loads(shoectl("journal", "verify", str(journal), "--json").stdout)
    assert verified["ok"] and verified["records"] == len(after)
    assert verified["anchor"] == f"{before[-1][0]}:{before[-1][1]}"
    assert shoectl("journal", "verify", str(journal), "--anchor", anchor).returncode == 0
    later = anchor_at(journal, ends[2])
    assert shoectl("journal", "verify", str(journal), "--anchor", later).returncode == 0

    deal_shoes(journal, 1)
    assert shoectl("journal", "verify", str(journal)).returncode == 0
    assert len(shoe_ends(journal)) == 2


def test_prune_keeps_the_open_shoe_and_everything_after_the_anchor(
    journal: Path, shoectl: ShoectlRunner
) -> None:
    with Journal.open(journal, table_id="table-1") as writer, writer.transaction() as tx:
        tx.append(
            "shoe.started", {"shoe_id": "OPEN"}, shoe_id="OPEN", round_no=None, device_serial=None
        )
    last_end = shoe_ends(journal)[-1]
    kept = [row for row in ids_and_hashes(journal) if row[0] > last_end]
    assert kept[-1][2] == "shoe.started"
    result = shoectl(
        "journal",
        "prune",
        str(journal),
        "--anchor",
        anchor_at(journal, kept[-1][0]),
        "--keep-days",
        "0",
    )
    assert result.returncode == 0, result.stderr
    assert f"through {last_end} " in result.stdout
    assert ids_and_hashes(journal) == kept


def test_prune_keeps_shoes_younger_than_the_days_kept(
    journal: Path, shoectl: ShoectlRunner
) -> None:
    before = ids_and_hashes(journal)
    result = shoectl(
        "journal", "prune", str(journal), "--anchor", anchor_at(journal, before[-1][0])
    )
    assert result.returncode == 0 and "nothing pruned" in result.stdout
    assert ids_and_hashes(journal) == before


def test_prune_refuses_a_journal_that_no_longer_matches_the_floors_anchor(
    journal: Path, shoectl: ShoectlRunner
) -> None:
    before = ids_and_hashes(journal)
    wrong = f"{before[-1][0]}:{'0' * 64}"
    result = shoectl("journal", "prune", str(journal), "--anchor", wrong, "--keep-days", "0")
    assert result.returncode == 1
    assert result.stderr.startswith("shoectl: error: ") and "nothing pruned" in result.stderr
    assert len(result.stderr.splitlines()) == 1
    assert ids_and_hashes(journal) == before


def test_prune_without_an_anchor_says_how_to_give_one(
    journal: Path, shoectl: ShoectlRunner
) -> None:
    result = shoectl("journal", "prune", str(journal))
    assert result.returncode == 2
    assert "give --anchor ID:HASH or --state-dir" in result.stderr
