"""Issue 21, case 4: the chain proves order, the table's signature proves origin.

A publisher with access to the broker once computed a record linking to a
table's head and published it under the next id before the table did: the
floor stored it as verified and the genuine record became a conflict. Now a
registered table's records must carry its Ed25519 signature (its key made by
`shoectl journal init`, the public half registered with `shoectl floor
register-table`); a forged record is quarantined and alarmed, never stored,
and the genuine record takes its place.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from support.floor_support import (
    Floor,
    FloorProcess,
    TableWriter,
    assert_floor_holds,
    floor_alarms,
    floor_table,
    journal_records,
    publish,
    rejected_messages,
    wait_for_floor,
)
from support.service_support import wait_until
from support.shoectl import ShoectlRunner

from cardshoe.controller.floor.messages import EventMessage
from cardshoe.controller.journal.chain import record_hash
from cardshoe.controller.journal.signing import TableKey

EVENTS = "cardshoe/v1/casino-1/{}/events"
TableUnderWay = tuple[Path, TableWriter, FloorProcess]
"""A table's journal, the writer writing it and its uplink."""


def _new_table(folder: Path, table_id: str, shoectl: ShoectlRunner) -> tuple[Path, str]:
    """shoectl journal init for the table; returns its journal and its public key."""
    journal = folder / f"{table_id}.sqlite"
    config = _config(folder, table_id, journal)
    made = shoectl("journal", "init", "--config", str(config))
    assert made.returncode == 0, made.stderr
    shown = shoectl("journal", "key", "--config", str(config))
    assert shown.returncode == 0, shown.stderr
    shown_table, key = shown.stdout.split()
    assert shown_table == table_id
    return journal, key


def _config(folder: Path, table_id: str, journal: Path) -> Path:
    config = folder / f"{table_id}.toml"
    config.write_text(f'table_id = "{table_id}"\n[service]\njournal_path = "{journal}"\n')
    return config


def _table_without_a_key(floor: Floor, folder: Path, table_id: str) -> TableUnderWay:
    """A table writing a journal as before signing keys (none beside it), with ingest and its
    uplink running, once it has written 20 records."""
    journal = folder / f"{table_id}.sqlite"
    writer = TableWriter(journal, table_id).start()
    floor.ingest()
    uplink = floor.uplink(journal)
    wait_until(lambda: writer.written >= 20, f"{table_id} to write unsigned records")
    return journal, writer, uplink


def _linked_to_head(journal: Path, table_id: str) -> EventMessage:
    """A record computed to link to the journal's head, under the next id, as a forger would."""
    head_id, head_hash = journal_records(journal)[-1]
    forged = EventMessage(
        table_id=table_id,
        record_id=head_id + 1,
        time_ns=1_800_000_000_000_000_000,
        shoe_id=f"{table_id}-S1",
        round_no=0,
        device_serial=None,
        device_seq=None,
        kind="round.result",
        payload={"winner": "forger"},
        prev_hash=head_hash,
        hash="",
    )
    return replace(forged, hash=record_hash(head_hash, forged.hashed_values()))


def test_a_forged_record_linked_into_a_tables_chain_is_not_stored_and_the_genuine_one_is(
    floor: Floor, tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    journal, key = _new_table(tmp_path, "T1", shoectl)
    registered = shoectl("floor", "register-table", "--dsn", floor.dsn, "T1", key)
    assert (registered.returncode, "T1 registered" in registered.stdout) == (0, True)
    floor.ingest()
    writer = TableWriter(journal, "T1").start()
    floor.uplink(journal)
    wait_until(lambda: writer.written >= 20, "the table to write")
    writer.stop()
    wait_for_floor(floor, [journal])

    forged = _linked_to_head(journal, "T1")
    stranger = TableKey.generate()
    publish(
        floor.broker.url,
        EVENTS.format("T1"),
        [forged.encode(), forged.signed_with(stranger).encode()],
    )
    wait_until(lambda: len(floor_alarms(floor.dsn)) == 2, "both forgeries alarmed")
    writer = TableWriter(journal, "T1").start()
    wait_until(lambda: writer.written >= forged.record_id + 20, "the table to write on")
    writer.stop()
    wait_for_floor(floor, [journal])

    assert_floor_holds(floor.dsn, journal)
    assert floor_alarms(floor.dsn) == [("T1", "bad_signature", forged.record_id)] * 2
    assert [table for table, _, _ in rejected_messages(floor.dsn)] == ["T1", "T1"]
    assert floor_table(floor.dsn, "T1")["chain_ok"] is True


def test_an_unregistered_table_without_a_key_keeps_working_and_a_bad_key_is_refused(
    floor: Floor, tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    """A journal made before signing keys has none: its uplink sends unsigned records, and
    the floor takes them on their chain alone while the table is not registered."""
    journal, writer, uplink = _table_without_a_key(floor, tmp_path, "T2")
    writer.stop()
    wait_for_floor(floor, [journal])
    assert_floor_holds(floor.dsn, journal)
    assert "no signing key" in uplink.log
    assert floor_alarms(floor.dsn) == []

    refused = shoectl("floor", "register-table", "--dsn", floor.dsn, "T2", "not-a-key")
    assert refused.returncode == 2
    assert refused.stderr.startswith("shoectl: error: ") and len(refused.stderr.splitlines()) == 1


def test_a_registered_table_whose_key_is_rotated_loses_nothing(
    floor: Floor, tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    """Rotation as docs/security.md gives it: stop the uplink, make the new key, register it,
    start the uplink; the records in between are signed with the new key and stored."""
    journal, old_key = _new_table(tmp_path, "T3", shoectl)
    shoectl("floor", "register-table", "--dsn", floor.dsn, "T3", old_key, check=True)
    floor.ingest()
    writer = TableWriter(journal, "T3").start()
    uplink = floor.uplink(journal)
    wait_until(lambda: writer.written >= 20, "the table to write")
    uplink.stop()
    rotated = shoectl("journal", "key", "--new", "--config", str(tmp_path / "T3.toml"))
    assert rotated.returncode == 0, rotated.stderr
    new_key = rotated.stdout.split()[1]
    assert new_key != old_key
    replaced = shoectl("floor", "register-table", "--dsn", floor.dsn, "T3", new_key)
    assert (replaced.returncode, "replaced" in replaced.stdout) == (0, True)
    floor.uplink(journal)
    wait_until(lambda: writer.written >= 60, "the table to write on")
    writer.stop()
    wait_for_floor(floor, [journal])
    assert_floor_holds(floor.dsn, journal)
    assert floor_alarms(floor.dsn) == []


def test_a_journal_made_before_keys_gets_one_from_init_if_missing_and_is_then_registered(
    floor: Floor, tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    """What udev/install.sh does on an upgraded table PC: init --if-missing keeps the journal
    and makes its key; once registered, the table's new records are signed and stored."""
    journal, writer, uplink = _table_without_a_key(floor, tmp_path, "T4")
    uplink.stop()
    config = _config(tmp_path, "T4", journal)
    upgraded = shoectl("journal", "init", "--config", str(config), "--if-missing")
    assert upgraded.returncode == 0, upgraded.stderr
    assert "kept the journal already there; made its signing key" in upgraded.stdout
    table_id, key = shoectl("journal", "key", "--config", str(config)).stdout.split()
    shoectl("floor", "register-table", "--dsn", floor.dsn, table_id, key, check=True)
    signing = floor.uplink(journal)
    wait_until(lambda: writer.written >= 60, "the table to write on")
    writer.stop()
    wait_for_floor(floor, [journal])
    assert_floor_holds(floor.dsn, journal)
    assert floor_alarms(floor.dsn) == []
    assert "no signing key" not in signing.log
