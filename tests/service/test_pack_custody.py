"""Each shoe's custody: the dealer and the supervisor signed in, as the kernel names them, on
the device that deals; a restart keeps who witnesses."""

from __future__ import annotations

import json
from pathlib import Path

from support.other_users import DAEMON, NOBODY, as_user, needs_other_uids, open_to_other_users
from support.service_support import running_service, simulated_table
from support.session_support import journaled
from support.shoectl import ShoectlRunner


@needs_other_uids
def test_the_custody_names_the_dealer_who_loaded_and_the_supervisor_who_witnessed(
    shared_folder: Path, shoectl: ShoectlRunner
) -> None:
    with simulated_table(shared_folder) as table:
        config = table.config_path.read_text().replace(
            "[device]\n", '[device]\nmaker = "cardshoe project"\n'
        )
        table.config_path.write_text(
            config + '[roles]\ndealer = ["nobody"]\nsupervisor = ["daemon"]\n'
        )
        socket = table.socket_path
        with running_service(table, betting_time=None) as service:
            service.wait_for_notification("READY=1")
            open_to_other_users(socket)
            denied = as_user(NOBODY, socket, "control", "supervisor-sign-in")
            assert denied.returncode == 3
            assert "supervisor-sign-in needs a supervisor" in denied.stderr
            assert as_user(NOBODY, socket, "control", "sign-in").returncode == 0
            witness = as_user(DAEMON, socket, "control", "supervisor-sign-in")
            assert witness.returncode == 0, witness.stderr
            opened = as_user(NOBODY, socket, "control", "new-shoe", "--shoe-id", "C1")
            assert opened.returncode == 0, opened.stderr
            assert (
                as_user(DAEMON, socket, "control", "abandon-shoe", "--reason", "test").returncode
                == 0
            )
            assert service.stop() == 0
        with running_service(table, betting_time=None) as service:
            service.wait_for_notification("READY=1")
            open_to_other_users(socket)
            opened = as_user(NOBODY, socket, "control", "new-shoe", "--shoe-id", "C2")
            assert opened.returncode == 0, opened.stderr
            assert service.stop() == 0
        serial_number = table.core.serial_number
    custody = journaled(table.journal_path, "session.pack_custody")
    assert [(c.shoe_id, c.payload["loaded_by"], c.payload["witnessed_by"]) for c in custody] == [
        ("C1", "nobody", "daemon"),
        ("C2", "nobody", "daemon"),
    ]
    assert custody[0].payload["opened_by"] == "nobody"
    assert custody[0].payload["device"]["maker"] == "cardshoe project"
    assert custody[0].payload["device"]["serial_number"] == serial_number
    signed = [r.payload for r in journaled(table.journal_path, "session.supervisor_signed_in")]
    assert signed == [{"supervisor": "daemon", "relieves": None}]
    printed = shoectl("journal", "receipt", str(table.journal_path), "--shoe", "C1", "--json")
    receipt = json.loads(printed.stdout)
    assert (receipt["loaded_by"], receipt["witnessed_by"]) == ("nobody", "daemon")
    assert receipt["reconciliation"]["reconciled"] is False
