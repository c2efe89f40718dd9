"""The registry of record kinds (controller/record_kinds.py) knows every record the table
writes, in the form it is written; a table journal refuses a record that does not fit its
kind; journals written before the registry still read; and no production module spells a
kind out any more."""

from __future__ import annotations

import ast
import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from cardshoe.controller import record_kinds
from cardshoe.controller.floor.schema import MIGRATIONS
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.procedure import facts
from cardshoe.controller.procedure.inputs import (
    DEVICE_INPUTS,
    DRIVER_INPUTS,
    HOST_INPUTS,
    from_record,
    to_record,
)
from cardshoe.controller.protection.watcher import Advantage
from cardshoe.controller.record_kinds import (
    RecordKindError,
    check_payload,
    read_payload,
    registered_kinds,
    required_keys,
    spec_of,
    stored_version,
)
from cardshoe.drivers.api.events import FaultKind, FaultRaised
from cardshoe.drivers.cardshoe_family import read_version_1_record

ROOT = Path(__file__).parents[2]
FIXTURES = Path(__file__).parent / "fixtures"
FAULTS = ["--inject", "jam@card=5,for=0.3", "--inject", "misread-card@card=9,for=0.2"]
FAULTS += ["--inject", "unplug@card=14,for=0.5", "--inject", "double-feed@round=3"]
DEMOS = {
    "punto-banco, manual shoe, faults": ["--game", "punto-banco", "--rounds", "5", *FAULTS],
    "punto-banco, machine": ["--game", "punto-banco", "--device", "auto", "--rounds", "3"],
    "seven-up": ["--game", "seven-up", "--rounds", "4"],
    "macau-1": ["--game", "macau-1", "--rounds", "4"],
    "macau-2": ["--game", "macau-2", "--rounds", "4"],
}


def _fact_classes() -> list[type[facts.TableEvent]]:
    found = [Advantage]
    for value in vars(facts).values():
        is_fact = isinstance(value, type) and issubclass(value, facts.TableEvent)
        if is_fact and value is not facts.TableEvent:
            found.append(value)
    return found


@pytest.mark.parametrize("demo", sorted(DEMOS))
def test_every_record_a_real_demo_writes_is_registered_and_fits_its_kind(
    demo: str, tmp_path: Path
) -> None:
    path = tmp_path / "journal.sqlite"
    command = [sys.executable, "-m", "cardshoe.controller.cli", "demo", "--transport", "inproc"]
    command += ["--seed", "26", "--journal", str(path), *DEMOS[demo]]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr  # the demo's journal checks every record itself
    with Journal.open_readonly(path) as journal:
        records = list(journal.records())
    assert len(records) > 20
    for record in records:
        check_payload(record.kind, record.payload)
        assert read_payload(record.kind, record.payload) == record.payload


def test_every_fact_and_input_kind_is_registered_with_the_fields_it_writes() -> None:
    for fact in _fact_classes():
        keys = {item.name for item in dataclasses.fields(fact)}  # type: ignore[arg-type]
        assert spec_of(fact.KIND).payload.__required_keys__ == keys, fact  # type: ignore[attr-defined]
    for kind, host_input in HOST_INPUTS.items():
        keys = {item.name for item in dataclasses.fields(host_input)}
        assert required_keys(spec_of(kind)) == keys, kind
    for kind, event in {**DEVICE_INPUTS, **DRIVER_INPUTS}.items():
        keys = {item.name for item in dataclasses.fields(event)} | {"record_version"}
        assert spec_of(kind).payload.__required_keys__ == keys, kind  # type: ignore[attr-defined]
        assert spec_of(kind).version == 2


def test_a_payload_may_leave_out_only_the_keys_its_kind_marks_optional() -> None:
    operator = {"uid": 1000, "user": "ann", "role": "supervisor"}
    check_payload(record_kinds.SESSION_OPERATOR, {**operator, "command": "command.close_bets"})
    check_payload(
        record_kinds.SESSION_OPERATOR,
        {**operator, "command": "command.close_bets", "via": "console", "signed_in": "bob"},
    )
    pin = {"name": "ann", "outcome": "wrong", "purpose": "console-sign-in", "via": "console"}
    check_payload(record_kinds.SESSION_CONSOLE_PIN, pin)
    with pytest.raises(RecordKindError, match="lacks via"):
        check_payload(
            record_kinds.SESSION_CONSOLE_PIN, {k: v for k, v in pin.items() if k != "via"}
        )


def test_no_production_module_spells_a_record_kind_out() -> None:
    """Neither as a string of its own nor quoted in SQL."""
    dotted = {kind for kind in registered_kinds() if "." in kind}
    in_sql = {f"'{kind}'" for kind in dotted}
    found = []
    for path in sorted((ROOT / "controller").rglob("*.py")):
        if path == ROOT / "controller" / "record_kinds.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
                continue
            if node.value in dotted or any(quoted in node.value for quoted in in_sql):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
    assert found == []


def test_the_floor_schema_step_built_from_kinds_is_the_text_it_shipped_with() -> None:
    """A shipped schema step is never edited: the pit's partial index, now built from the
    registry's constants, must still be the SQL that floor databases ran."""
    [index] = [sql for sql in MIGRATIONS[3] if "journal_records_pit_kinds" in sql]
    assert index == (
        "CREATE INDEX journal_records_pit_kinds ON journal_records (table_id, kind, record_id) "
        "WHERE kind IN ('alarm', 'irregularity', 'hold.started', 'hold.ended', "
        "'shoe.started', 'shoe.ended', 'round.opened', 'round.result', 'round.void', "
        "'command.sign_in')"
    )


def _table_journal(path: Path) -> Journal:
    return Journal.open(path, table_id="table-1", create=True, check_record=check_payload)


def test_an_unregistered_kind_is_refused_on_write_and_nothing_is_written(tmp_path: Path) -> None:
    with _table_journal(tmp_path / "j.sqlite") as journal:
        with (
            pytest.raises(RecordKindError, match=r"'round\.voided' is not registered") as refused,
            journal.transaction() as transaction,
        ):
            transaction.append(
                record_kinds.TABLE_IDLE, {}, shoe_id=None, round_no=None, device_serial=None
            )
            transaction.append("round.voided", {}, shoe_id=None, round_no=None, device_serial=None)
        assert "controller/record_kinds.py" in str(refused.value)
        assert list(journal.records()) == []


def test_a_payload_missing_a_field_is_refused_on_write(tmp_path: Path) -> None:
    with _table_journal(tmp_path / "j.sqlite") as journal:
        with (
            pytest.raises(RecordKindError, match=r"round\.void record's payload lacks cards"),
            journal.transaction() as transaction,
        ):
            transaction.append(
                record_kinds.ROUND_VOID,
                {"round_no": 3, "reason": "misdeal"},
                shoe_id="S1",
                round_no=3,
                device_serial=None,
            )
        with (
            pytest.raises(RecordKindError, match="written in version 2, not 1"),
            journal.transaction() as transaction,
        ):
            transaction.append(
                record_kinds.LINK_LOST,
                {"reason": "unplugged"},
                shoe_id=None,
                round_no=None,
                device_serial=None,
            )
        with (
            pytest.raises(RecordKindError, match="only read from old journals"),
            journal.transaction() as transaction,
        ):
            transaction.append(
                record_kinds.DEVICE_CARD_V1, {}, shoe_id=None, round_no=None, device_serial=None
            )
        assert list(journal.records()) == []


def test_a_bare_journal_without_the_check_still_stores_any_kind(tmp_path: Path) -> None:
    with Journal.open(tmp_path / "j.sqlite", table_id="table-1", create=True) as journal:
        with journal.transaction() as transaction:
            transaction.append(
                "test.tick", {"n": 1}, shoe_id=None, round_no=None, device_serial=None
            )
        assert [record.kind for record in journal.records()] == ["test.tick"]


@pytest.mark.parametrize("fixture", ["main-shoe.sqlite", "main-auto.sqlite"])
def test_a_journal_written_before_the_registry_still_reads(fixture: str) -> None:
    with Journal.open_readonly(FIXTURES / fixture) as journal:
        records = list(journal.records())
    wire_records = 0
    for record in records:
        spec = spec_of(record.kind)
        older = spec.retired or stored_version(record.payload) < spec.version
        if older and spec.upcast_elsewhere is not None:  # the wire form: its family reads it
            wire_records += 1
            if not spec.retired:
                with pytest.raises(RecordKindError, match="legacy reader"):
                    read_payload(record.kind, record.payload)
            assert from_record(record.kind, record.payload, legacy=read_version_1_record)
            continue
        read = read_payload(record.kind, record.payload)
        assert stored_version(read) == spec.version
    assert wire_records > 10


def test_a_driver_record_of_version_1_upcasts_to_the_neutral_form() -> None:
    old = {"expected": 7, "got": 9}
    assert read_payload(record_kinds.LINK_SEQUENCE_GAP, old) == {**old, "record_version": 2}
    assert old == {"expected": 7, "got": 9}
    with pytest.raises(RecordKindError, match="this software reads up to 2"):
        read_payload(record_kinds.LINK_LOST, {"reason": "x", "record_version": 3})


def test_a_fault_raised_written_before_reports_end_existed_reads_as_reported() -> None:
    """Journals from before 2026-12 hold device.fault_raised without reports_end: every
    device then reported its faults' ends, so the hold stays the device's to end."""
    old = {"record_version": 2, "seq": 9, "device_time_ms": 5, "kind": "jam", "detail": 0}
    raised = from_record(record_kinds.DEVICE_FAULT_RAISED, old)
    assert raised == FaultRaised(9, 5, FaultKind.JAM, 0, reports_end=True)
    assert to_record(raised).payload == {**old, "reports_end": True}
