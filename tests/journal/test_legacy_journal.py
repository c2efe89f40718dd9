"""A journal written before the device seam (record version 1, the cardshoe wire form)
still opens, replays to the very facts it recorded, verifies, prunes, and exports in both
forms under today's code. The fixtures are main's own journals (fixtures/README.md)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from support.shoectl import ShoectlRunner

from cardshoe.controller.config import DeviceConfig, DeviceMode, ShoeProcedure, TableConfig
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.procedure.inputs import from_record, to_record
from cardshoe.controller.record_kinds import RECORD_VERSION_KEY
from cardshoe.controller.service.recovery import read_input, recover
from cardshoe.drivers.api.events import CardSeen, LinkRestored, OperationDone

FIXTURES = Path(__file__).parent / "fixtures"
CONFIGS = {
    "main-shoe.sqlite": TableConfig(),
    "main-auto.sqlite": TableConfig(
        device=DeviceConfig(kind=DeviceMode.AUTO), shoe=ShoeProcedure(machine_rounds=3)
    ),
}


@pytest.fixture(params=sorted(CONFIGS))
def old_journal(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, TableConfig]:
    copy = tmp_path / request.param
    copy.write_bytes((FIXTURES / request.param).read_bytes())
    return copy, CONFIGS[request.param]


def test_every_input_of_an_old_journal_replays_to_the_facts_it_recorded(
    old_journal: tuple[Path, TableConfig],
) -> None:
    path, config = old_journal
    with Journal.open(path, table_id="table-1") as journal:
        recovered = recover(config, journal, after_id=0)
        records = list(journal.records())
    assert recovered.mismatches == ()
    assert recovered.inputs_replayed > 20
    assert recovered.model.shoe_id is None  # the demo's shoe ended and was reconciled
    device_records = [r for r in records if r.kind.startswith(("device.", "link."))]
    assert device_records and all(RECORD_VERSION_KEY not in r.payload for r in device_records)
    read = [read_input(record) for record in device_records]
    cards = [item for item in read if isinstance(item, CardSeen)]
    assert len(cards) == Counter(r.kind for r in records)["device.card"]
    assert all(card.card is not None or card.flags for card in cards)
    assert [card.seq for card in cards] == sorted(card.seq for card in cards)
    if config.device.kind is DeviceMode.AUTO:
        assert any(isinstance(item, OperationDone) and item.ok for item in read)
    else:
        restored = [item for item in read if isinstance(item, LinkRestored)]
        assert restored and restored[0].identity.serial_number
    for item in read:  # what today's code would write for it reads back the same
        record = to_record(item)
        assert from_record(record.kind, json.loads(json.dumps(record.payload))) == item


def test_an_old_journal_verifies_prunes_and_exports_both_forms(
    old_journal: tuple[Path, TableConfig], shoectl: ShoectlRunner
) -> None:
    path, _ = old_journal
    verified = json.loads(shoectl("journal", "verify", str(path), "--json").stdout)
    assert verified["ok"]
    exported = [
        json.loads(line)
        for line in shoectl("journal", "export", str(path), "--neutral").stdout.splitlines()
    ]
    first_card = next(row for row in exported if row["kind"] == "device.card")
    assert first_card["record_version"] == 1
    assert first_card["payload"]["card_code"]  # the wire form, as stored
    assert first_card["neutral"]["code"] == first_card["payload"]["card_code"]
    assert "#00BC614E/" in first_card["neutral"]["card"]  # the tagged card the code names
    assert first_card["neutral"]["seq"] == first_card["payload"]["seq"]
    host = next(row for row in exported if row["kind"] == "command.start_shoe")
    assert (host["record_version"], host["neutral"]) == (None, None)
    csv = shoectl("journal", "export", str(path), "--neutral", "--format", "csv").stdout
    assert csv.splitlines()[0].endswith(",record_version,neutral")

    end = max(row["id"] for row in exported if row["kind"] == "shoe.ended")
    anchor = f"{exported[-1]['id']}:{exported[-1]['hash']}"
    pruned = shoectl("journal", "prune", str(path), "--anchor", anchor, "--keep-days", "0")
    assert pruned.returncode == 0, pruned.stderr
    assert f"through {end}" in pruned.stdout
    assert json.loads(shoectl("journal", "verify", str(path), "--json").stdout)["ok"]
