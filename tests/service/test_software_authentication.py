"""The running table answers a regulator's seed on its control socket and journals it; every
start journals the unkeyed digest of the software's manifest in session.started."""

from __future__ import annotations

import hashlib
import hmac
import json
import subprocess
import sys
from pathlib import Path

from support.other_users import NOBODY, as_user, needs_other_uids, open_to_other_users
from support.service_support import running_service, simulated_table
from support.session_support import journaled
from support.shoectl import ShoectlRunner

SEED = "a1b2c3d4e5f60718"


def printed_manifest() -> bytes:
    return subprocess.run(
        [sys.executable, "-m", "cardshoe.controller.cli", "authenticate", "--manifest"],
        capture_output=True,
        check=True,
    ).stdout


def test_the_service_answers_a_seed_and_journals_it_and_its_start_names_the_software(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    manifest = printed_manifest()
    with simulated_table(tmp_path) as table:
        with running_service(table, betting_time=None) as service:
            service.wait_for_notification("READY=1")
            socket = str(table.socket_path)
            asked = shoectl(
                "authenticate", "--seed", SEED, "--service", "--socket", socket, "--json"
            )
            assert asked.returncode == 0, asked.stderr
            bad = shoectl("authenticate", "--seed", "5e5", "--service", "--socket", socket)
            assert bad.returncode == 2 and len(bad.stderr.splitlines()) == 1
            assert service.stop() == 0
        answer = json.loads(asked.stdout)
        expected = hmac.new(bytes.fromhex(SEED), manifest, hashlib.sha256).hexdigest()
        assert answer["digest"] == expected
        records = journaled(table.journal_path, "software.authenticated")
        assert [(r.payload["seed"], r.payload["digest"]) for r in records] == [(SEED, expected)]
        assert records[0].payload["operator"]["role"] == "technician"
        started = journaled(table.journal_path, "session.started")
        assert started[-1].payload["software"] == {
            "version": "0.1.0",
            "manifest_sha256": hashlib.sha256(manifest).hexdigest(),
        }


@needs_other_uids
def test_only_a_technician_may_ask_the_table(shared_folder: Path) -> None:
    with simulated_table(shared_folder) as table:
        config = table.config_path.read_text()
        table.config_path.write_text(
            config + '[roles]\ntechnician = ["root"]\nsupervisor = ["nobody"]\n'
        )
        with running_service(table, betting_time=None) as service:
            service.wait_for_notification("READY=1")
            open_to_other_users(table.socket_path)
            denied = as_user(NOBODY, table.socket_path, "authenticate", "--seed", SEED, "--service")
            assert denied.returncode == 3
            assert denied.stderr.startswith(
                "shoectl: error: authenticate needs a technician: nobody (uid 65534) is a "
                "supervisor"
            )
            allowed = as_user(0, table.socket_path, "authenticate", "--seed", SEED, "--service")
            assert allowed.returncode == 0, allowed.stderr
            assert service.stop() == 0
    denials = journaled(table.journal_path, "session.command_denied")
    assert [(d.payload["user"], d.payload["command"]) for d in denials] == [
        ("nobody", "authenticate")
    ]
    answers = journaled(table.journal_path, "software.authenticated")
    assert [a.payload["operator"]["user"] for a in answers] == ["root"]
