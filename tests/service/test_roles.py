"""Roles by the control socket's peer uid (SO_PEERCRED), with real uids: root, nobody, daemon.

The client runs under `setpriv --reuid`, so the kernel, not the client, says who asks.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path

from support.other_users import DAEMON, NOBODY, as_user, needs_other_uids
from support.service_support import running_service, simulated_table, wait_until
from support.session_support import journaled

pytestmark = needs_other_uids


def test_roles_come_from_the_peer_uid_and_every_command_is_journaled_with_it(
    shared_folder: Path,
) -> None:
    with simulated_table(shared_folder) as table:
        config = (
            table.config_path.read_text() + '[roles]\nsupervisor = ["root"]\ndealer = ["nobody"]\n'
        )
        table.config_path.write_text(config)
        with running_service(table, "--betting-time", "600") as service:
            service.wait_for_notification("READY=1")
            socket = table.socket_path
            socket.chmod(socket.stat().st_mode | stat.S_IROTH | stat.S_IWOTH)
            signed = as_user(NOBODY, socket, "control", "sign-in", "--json")
            assert signed.returncode == 0, signed.stderr
            assert json.loads(signed.stdout)["dealer"] == "nobody"
            opened = as_user(NOBODY, socket, "control", "new-shoe", "--shoe-id", "R1")
            assert opened.returncode == 0, opened.stderr
            assert as_user(NOBODY, socket, "control", "shoe-loaded").returncode == 0
            assert as_user(NOBODY, socket, "control", "cut-done").returncode == 0
            wait_until(lambda: table.status()["state"] == "betting", "round 1 open for bets")
            denied = as_user(NOBODY, socket, "control", "void-round", "--reason", "misdeal")
            assert denied.returncode == 3
            assert denied.stderr.strip() == (
                "shoectl: error: void-round needs a supervisor: nobody (uid 65534) is a dealer "
                "at this table; ask a supervisor, or have [roles] in the table's configuration "
                "name you"
            )
            watcher = as_user(DAEMON, socket, "status", "--json")
            assert watcher.returncode == 0, watcher.stderr
            assert json.loads(watcher.stdout)["state"] == "betting"
            watched = as_user(DAEMON, socket, "control", "no-more-bets")
            assert watched.returncode == 3 and "daemon (uid 1) is a watcher" in watched.stderr
            voided = as_user(0, socket, "control", "void-round", "--reason", "misdeal")
            assert voided.returncode == 0, voided.stderr
            relief = as_user(0, socket, "control", "sign-in", "--json")
            assert json.loads(relief.stdout)["dealer"] == "root"
            assert service.stop() == 0
    operators = [r.payload for r in journaled(table.journal_path, "session.operator")]
    assert [(o["user"], o["uid"], o["role"], o["command"]) for o in operators] == [
        ("nobody", NOBODY, "dealer", "command.start_shoe"),
        ("nobody", NOBODY, "dealer", "command.shoe_loaded"),
        ("nobody", NOBODY, "dealer", "command.cut_done"),
        ("root", 0, "supervisor", "command.void_round"),
    ]
    denials = [r.payload for r in journaled(table.journal_path, "session.command_denied")]
    assert [(d["user"], d["command"], d["needs"]) for d in denials] == [
        ("nobody", "void-round", "supervisor"),
        ("daemon", "no-more-bets", "dealer"),
    ]
    signed_in = [r.payload for r in journaled(table.journal_path, "session.dealer_signed_in")]
    assert [(s["user"], s["relieves"]) for s in signed_in] == [("nobody", None), ("root", "nobody")]
    assert [r.payload["reason"] for r in journaled(table.journal_path, "round.void")] == ["misdeal"]
