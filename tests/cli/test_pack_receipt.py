"""shoectl journal receipt: a demo shoe's receipt says what its journal says, read here apart.

Each demo deals through the real CLI into a real journal file; the expected values are read
from the journal's records directly, not through the receipt's code.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.shoectl import ShoectlRunner

from cardshoe.controller.journal.records import Record
from cardshoe.controller.journal.store import Journal

MAKER = "cardshoe project"


def dealt_demo(shoectl: ShoectlRunner, folder: Path, *options: str) -> tuple[Path, str]:
    """A demo shoe in folder/journal.sqlite under a configuration naming the maker."""
    config = folder / "table.toml"
    config.write_text(
        'table_id = "T9"\n[game]\nname = "punto-banco"\ndecks = 6\n'
        f'[device]\nkind = "shoe"\nmaker = "{MAKER}"\n'
    )
    journal = folder / "journal.sqlite"
    dealt = shoectl(
        "demo",
        "--seed",
        "5",
        "--journal",
        str(journal),
        "--config",
        str(config),
        "--json",
        *options,
    )
    assert dealt.returncode == 0, dealt.stderr
    with Journal.open_readonly(journal) as opened:
        started = next(opened.records(kinds=["shoe.started"]))
    assert started.shoe_id is not None
    return journal, started.shoe_id


def shoe_records(journal: Path, shoe_id: str) -> list[Record]:
    with Journal.open_readonly(journal) as opened:
        return list(opened.records(shoe_id=shoe_id))


def only(records: list[Record], kind: str) -> dict[str, Any]:
    found = [record.payload for record in records if record.kind == kind]
    assert len(found) == 1, (kind, found)
    return found[0]


def test_a_demo_shoes_receipt_is_its_journals_custody_and_reconciliation(
    shoectl: ShoectlRunner, tmp_path: Path
) -> None:
    journal, shoe_id = dealt_demo(shoectl, tmp_path, "--rounds", "4")
    printed = shoectl("journal", "receipt", str(journal), "--shoe", shoe_id, "--json")
    assert printed.returncode == 0, printed.stderr
    receipt = json.loads(printed.stdout)
    records = shoe_records(journal, shoe_id)
    with Journal.open_readonly(journal) as opened:
        device = next(opened.records(kinds=["session.started"])).payload["device"]
        software = next(opened.records(kinds=["session.started"])).payload["software"]
    started = only(records, "shoe.started")
    pack = only(records, "host.pack_count")
    ended = only(records, "shoe.ended")
    assert receipt["table_id"] == "T9"
    assert receipt["shoe_id"] == shoe_id
    assert receipt["started_at"] == records[0].time_utc
    assert (
        (receipt["game"], receipt["decks"])
        == (started["game"], started["decks"])
        == (
            "punto-banco",
            6,
        )
    )
    assert receipt["fingerprint"] == started["fingerprint"]
    assert (receipt["deck_set"], receipt["deck_set_source"]) == (started["deck_set"], "declared")
    assert receipt["pack_check"] == {
        "counted": pack["cards_dealt"] + pack["cards_remaining"],
        "expected": 6 * 52,
        "how": "device count",
        "agrees": True,
    }
    assert receipt["device"] == {
        "maker": MAKER,
        "model": device["model"],
        "serial_number": device["serial_number"],
        "firmware_version": device["firmware_version"],
        "firmware_hash": device["firmware_hash"],
    }
    assert receipt["software"] == software
    assert (receipt["loaded_by"], receipt["witnessed_by"]) == (None, None)
    reconciliation = receipt["reconciliation"]
    for count in ("rounds", "loaded", "dealt", "burned", "returned", "remaining", "intruders"):
        assert reconciliation[count] == ended[count], count
    assert reconciliation["rounds"] == 4
    assert reconciliation["reconciled"] is ended["reconciled"] is True
    assert reconciliation["voids"] == 0
    assert receipt["records"] == {
        "first": records[0].id,
        "last": records[-1].id,
        "last_hash": records[-1].hash,
    }


def test_the_receipt_for_a_person_and_for_the_printer(
    shoectl: ShoectlRunner, tmp_path: Path
) -> None:
    journal, shoe_id = dealt_demo(shoectl, tmp_path, "--rounds", "2")
    text = shoectl("journal", "receipt", str(journal), "--shoe", shoe_id)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0].split() == ["table", "T9"]
    assert any(line.startswith("device maker") and line.endswith(MAKER) for line in lines)
    assert any(
        line.startswith("witnessed by") and "no supervisor signed in" in line for line in lines
    )
    assert any(line.startswith("reconciled") and line.endswith("yes") for line in lines)
    page = tmp_path / "receipt.html"
    written = shoectl("journal", "receipt", str(journal), "--shoe", shoe_id, "--html", str(page))
    assert written.returncode == 0, written.stderr
    html = page.read_text()
    assert f"shoe {shoe_id}" in html
    assert "Supervisor (witnessed)" in html and "Dealer (loaded)" in html
    assert MAKER in html
    assert "<script" not in html


def test_a_machine_shoes_pack_check_is_the_shuffle_count(
    shoectl: ShoectlRunner, tmp_path: Path
) -> None:
    journal = tmp_path / "journal.sqlite"
    dealt = shoectl(
        "demo", "--seed", "5", "--device", "auto", "--decks", "1", "--journal", str(journal)
    )
    assert dealt.returncode == 0, dealt.stderr
    with Journal.open_readonly(journal) as opened:
        shoe_id = next(opened.records(kinds=["shoe.started"])).shoe_id
    assert shoe_id is not None
    records = shoe_records(journal, shoe_id)
    receipt = json.loads(
        shoectl("journal", "receipt", str(journal), "--shoe", shoe_id, "--json").stdout
    )
    shuffled = only(records, "shoe.shuffled")
    assert receipt["pack_check"] == {
        "counted": shuffled["card_count"],
        "expected": 52,
        "how": "machine shuffle",
        "agrees": shuffled["card_count"] == 52,
    }
    assert receipt["device"]["maker"] is None
    assert receipt["reconciliation"]["loaded"] == only(records, "shoe.ended")["loaded"]


@pytest.mark.parametrize(
    ("arguments", "complaint"),
    [
        (("--shoe", "S-none"), "holds no shoe S-none"),
        (("--shoe", "S-none", "--json", "--html", "x.html"), "choose --json or --html FILE"),
        (("--shoe", "S1", "--html", "/nonexistent/folder/r.html"), "cannot write"),
    ],
)
def test_bad_receipt_requests_are_one_line_and_exit_2(
    shoectl: ShoectlRunner, tmp_path: Path, arguments: tuple[str, ...], complaint: str
) -> None:
    journal = tmp_path / "journal.sqlite"
    if "S1" in arguments:
        journal, shoe_id = dealt_demo(shoectl, tmp_path, "--rounds", "1")
        arguments = tuple(shoe_id if word == "S1" else word for word in arguments)
    else:
        Journal.init(journal, table_id="T9")
    refused = shoectl("journal", "receipt", str(journal), *arguments)
    assert refused.returncode == 2
    assert len(refused.stderr.splitlines()) == 1
    assert refused.stderr.startswith("shoectl: error: ") and complaint in refused.stderr
