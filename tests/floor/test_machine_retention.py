"""Issue 28: a machine table's journal is pruned as a manual one's, once the floor holds it.

The automatic shuffler-dealer's shoe now ends by the house's policy (shoe.machine_rounds),
so its journal has closed shoes; the real service deals them under --auto-shoe, the real
uplink and ingest put them in PostgreSQL through a real mosquitto, and `shoectl journal
prune` deletes the closed shoes the floor's anchor covers, leaving a journal that verifies.
"""

from __future__ import annotations

from pathlib import Path

from support.floor_support import Floor, floor_table, journal_records, wait_for_floor
from support.service_support import running_service, simulated_table, wait_until
from support.session_support import journaled
from support.shoectl import ShoectlRunner

from cardshoe.controller.journal.uplink_state import load_state, state_path

SHOES = 3


def test_a_machine_tables_closed_shoes_are_pruned_once_the_floor_verified_them(
    floor: Floor, tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    (tmp_path / "table").mkdir()
    with simulated_table(
        tmp_path / "table", kind="auto", shoe_lines="machine_rounds = 3\n"
    ) as table:
        floor.ingest()
        floor.uplink(table.journal_path)
        with running_service(table, "--auto-shoe") as service:
            service.wait_for_notification("READY=1")
            wait_until(lambda: len(journaled(table.journal_path, "shoe.ended")) >= SHOES, "shoes")
            assert service.stop() == 0
    ended = journaled(table.journal_path, "shoe.ended")
    held = journal_records(table.journal_path)
    wait_for_floor(floor, [table.journal_path])
    state = state_path(floor.folder / "uplink-state", "T1")
    wait_until(
        lambda: load_state(state).anchor.record_id == held[-1][0],
        "the uplink to keep the floor's anchor",
    )
    assert floor_table(floor.dsn, "T1")["chain_ok"]
    pruned = shoectl(
        "journal",
        "prune",
        str(table.journal_path),
        "--state-dir",
        str(floor.folder / "uplink-state"),
        "--keep-days",
        "0",
    )
    assert pruned.returncode == 0, pruned.stderr
    assert f"({len(ended)} shoe(s)" in pruned.stdout
    assert journaled(table.journal_path, "shoe.ended") == []
    left = journal_records(table.journal_path)
    assert [record_id for record_id, _ in left] == [
        record_id for record_id, _ in held if record_id > ended[-1].id
    ]
    assert shoectl("journal", "verify", str(table.journal_path)).returncode == 0
