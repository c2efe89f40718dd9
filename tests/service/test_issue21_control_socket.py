"""Issue 21 cases 8, 9 and 10 (bad text): what a local client can do to the running service.

Each test runs the real service (`shoectl run` on a simulated shoe over a real
pty) and talks to its control socket as a real client would, as another real
uid where the case is about who asks.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from support.other_users import DAEMON, needs_other_uids, open_to_other_users
from support.service_support import running_service, simulated_table
from support.session_support import journaled

from cardshoe.controller.journal.store import Journal

REPEATING_CLIENT = """
import json, socket, sys
path, count, line = sys.argv[1], int(sys.argv[2]), sys.argv[3].encode() + b"\\n"
with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
    connection.connect(path)
    answers = connection.makefile("rb")
    refused = 0
    for _ in range(count):
        connection.sendall(line)
        answer = json.loads(answers.readline())
        refused += not answer["ok"] and answer["exit_code"] == 3
print(refused)
"""


def repeat_as(uid: int, socket_path: Path, count: int, request: dict[str, object]) -> int:
    """Send request count times on one connection as uid; how many were refused as denied."""
    done = subprocess.run(
        [
            "setpriv",
            f"--reuid={uid}",
            f"--regid={uid}",
            "--clear-groups",
            sys.executable,
            "-c",
            REPEATING_CLIENT,
            str(socket_path),
            str(count),
            json.dumps(request),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return int(done.stdout)


def record_count(path: Path) -> int:
    with Journal.open_readonly(path) as journal:
        return sum(1 for _ in journal.records())


@needs_other_uids
def test_issue21_case_8_five_thousand_denied_commands_add_one_record_not_five_thousand(
    shared_folder: Path,
) -> None:
    with simulated_table(shared_folder) as table:
        table.config_path.write_text(
            table.config_path.read_text() + '[roles]\nsupervisor = ["root"]\n'
        )
        with running_service(table) as service:
            service.wait_for_notification("READY=1")
            open_to_other_users(table.socket_path)
            before = record_count(table.journal_path)
            refused = repeat_as(DAEMON, table.socket_path, 5000, {"cmd": "no-more-bets"})
            assert refused == 5000
            status = table.status()
            added = record_count(table.journal_path) - before
            assert service.stop() == 0
    assert status["refused_commands"] == 5000
    assert added <= 2
    denials = [r.payload for r in journaled(table.journal_path, "session.command_denied")]
    assert [(d["user"], d["command"], d["needs"]) for d in denials] == [
        ("daemon", "no-more-bets", "dealer")
    ]
