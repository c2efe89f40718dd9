"""Issue 21 cases 8, 9 and 10 (bad text): what a local client can do to the running service.

Each test runs the real service (`shoectl run` on a simulated shoe over a real
pty) and talks to its control socket as a real client would, as another real
uid where the case is about who asks.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from support.other_users import (
    DAEMON,
    NOBODY,
    as_uid_prefix,
    as_user,
    needs_other_uids,
    open_to_other_users,
)
from support.service_support import idle_connections, running_service, simulated_table
from support.session_support import journaled
from support.shoectl import ShoectlRunner

from cardshoe.controller.errors import UserError
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.service.control_client import request
from cardshoe.controller.service.control_socket import (
    IDLE_TIMEOUT_S,
    MAX_CONNECTIONS_PER_UID,
    OPERATOR_RESERVE,
    ControlServer,
    EventFeed,
)
from cardshoe.controller.service.socket_claim import claim_socket_path

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
            *as_uid_prefix(uid),
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


IDLE_HOLDER = """
import json, select, socket, sys, time
path, count = sys.argv[1], int(sys.argv[2])
held = []
for _ in range(count):
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.connect(path)
    held.append(connection)
answered = set()
while ready := select.select([c for c in held if c not in answered], [], [], 1.0)[0]:
    answered.update(ready)
reasons = {json.loads(c.makefile("rb").readline())["error"] for c in answered}
admitted = [c for c in held if c not in answered]
print(json.dumps({"refused": len(answered), "reasons": sorted(reasons)}), flush=True)
start = time.monotonic()
while admitted and time.monotonic() - start < 60:
    closed = select.select(admitted, [], [], 1.0)[0]
    admitted = [c for c in admitted if c not in closed or c.recv(100)]
print(json.dumps({"still_open": len(admitted), "after_s": time.monotonic() - start}), flush=True)
"""


def as_uid(uid: int, script: str, *arguments: str) -> subprocess.Popen[str]:
    command = [*as_uid_prefix(uid), sys.executable, "-c", script, *arguments]
    return subprocess.Popen(command, stdout=subprocess.PIPE, text=True)


@needs_other_uids
def test_issue21_case_9_two_hundred_idle_clients_never_lock_the_operator_out(
    shared_folder: Path, shoectl: ShoectlRunner
) -> None:
    """nobody holds 200 idle connections: it gets its share, the rest are refused at once,
    root (the operator here) and another uid are still served, and the idle ones close
    after the documented 30 s."""
    with simulated_table(shared_folder) as table, running_service(table) as service:
        service.wait_for_notification("READY=1")
        open_to_other_users(table.socket_path)
        holder = as_uid(NOBODY, IDLE_HOLDER, str(table.socket_path), "200")
        assert holder.stdout is not None
        try:
            refused = json.loads(holder.stdout.readline())
            status = shoectl("status", "--socket", str(table.socket_path), "--json")
            watcher = as_user(DAEMON, table.socket_path, "status", "--json")
            closed = json.loads(holder.stdout.readline())
        finally:
            holder.kill()
            holder.wait()
        assert service.stop() == 0
    assert refused["refused"] == 200 - MAX_CONNECTIONS_PER_UID
    assert refused["reasons"] == [
        f"uid {NOBODY} holds {MAX_CONNECTIONS_PER_UID} connections to the service, the most "
        f"one user may: close some (each idle one closes after {IDLE_TIMEOUT_S:g} s), then "
        "try again"
    ]
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["state"] == "idle"
    assert watcher.returncode == 0, watcher.stderr
    assert closed["still_open"] == 0
    assert closed["after_s"] < IDLE_TIMEOUT_S + 15  # the issue saw none closed in 45 s


def test_issue21_case_9_only_operators_get_the_last_connections(tmp_path: Path) -> None:
    """The reserve, on the server the service runs: a peer that is no operator is refused
    the last OPERATOR_RESERVE connections, an operator gets them."""
    claim = claim_socket_path(tmp_path / "control.sock")
    operator = {"yes": False}
    control = ControlServer(
        claim,
        {"status": lambda line: {"state": "idle"}},
        EventFeed(),
        max_connections=OPERATOR_RESERVE + 2,
        is_operator=lambda peer: operator["yes"],
    )
    try:
        with idle_connections(claim.path, 2):
            with pytest.raises(UserError, match="keeps the rest for the table's operators") as no:
                request(claim.path, "status")
            assert no.value.exit_code == 3
            operator["yes"] = True
            assert request(claim.path, "status") == {"state": "idle"}
    finally:
        control.close()
        claim.release()


def test_issue21_case_9_one_users_burst_over_its_share_waits_its_turn(tmp_path: Path) -> None:
    """Over its uid's share, a request is turned away as busy and tried again within its
    timeout: it is served as soon as that user's own connections close; refused with the
    share's line only if they stay open for the whole timeout."""
    claim = claim_socket_path(tmp_path / "control.sock")
    control = ControlServer(
        claim, {"status": lambda line: {"state": "idle"}}, EventFeed(), max_per_uid=2
    )
    try:
        with idle_connections(claim.path, 2) as idle:
            with pytest.raises(UserError, match="holds 2 connections") as refused:
                request(claim.path, "status", timeout=0.3)
            assert refused.value.exit_code == 3
            closer = threading.Timer(0.2, lambda: [connection.close() for connection in idle])
            closer.start()
            assert request(claim.path, "status") == {"state": "idle"}
            closer.join()
    finally:
        control.close()
        claim.release()


def test_issue21_case_10_a_lone_surrogate_in_a_reason_or_note_is_refused_in_one_line(
    tmp_path: Path,
) -> None:
    with simulated_table(tmp_path) as table, running_service(table) as service:
        service.wait_for_notification("READY=1")
        refusals = []
        for command, arguments in [
            ("void-round", {"reason": "mis\ud800deal"}),
            ("void-round", {"reason": "misdeal", "note": "\udcff"}),
            ("clear-hold", {"reason": "checked", "note": "lone \udfff"}),
            ("new-shoe", {"shoe_id": "S\ud83d"}),
        ]:
            with pytest.raises(UserError) as refused:
                request(table.socket_path, command, **arguments)
            refusals.append((refused.value.exit_code, str(refused.value)))
        assert table.status()["state"] == "idle"
        assert service.stop() == 0
        log = service.log_tail()
    assert [code for code, _ in refusals] == [2, 2, 2, 2]
    assert [message.split(" is not text")[0] for _, message in refusals] == [
        "void-round: --reason",
        "void-round: --note",
        "clear-hold: --note",
        "new-shoe: --shoe-id",
    ]
    assert all("lone surrogate" in message and "\n" not in message for _, message in refusals)
    assert "Traceback" not in log and "the service failed" not in log
    with Journal.open_readonly(table.journal_path) as journal:
        assert journal.verify().ok
        assert [r.kind for r in journal.records() if r.kind.startswith("command.")] == []
