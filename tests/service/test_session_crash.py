"""SIGKILL the controller process at many points of a shoe; restarted, it loses no card and
counts none twice.

The simulator runs in this process on a real pty, so it outlives the
controller, which runs in a child process (tests/support/crash_child.py) on the
real journal, driver and session. Each child is killed at a different point
(inside a transaction, between commit and acknowledgement, just after it,
just after a draw-control command, or at a random moment), and the next
child recovers from the journal and carries on until the shoe is reconciled.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.crash_child import config_for
from support.session_support import journaled, rounds_as_the_rules_engine_plays_them

from cardshoe.controller.journal.store import Journal
from cardshoe.controller.service.recovery import recover
from cardshoe.firmware_sim.attach_pty import serve_pty
from cardshoe.firmware_sim.devices import create_device

CHILD = Path(__file__).parents[1] / "support" / "crash_child.py"
CHILD_TIMEOUT_S = 60

Crash = tuple[str, int]
"""(point, nth) for crash_child.py, or ("timer", milliseconds) for a kill from outside."""

MANUAL_CRASHES: list[Crash] = [
    ("ack", 2),
    ("append", 7),
    ("timer", 250),
    ("acked", 5),
    ("command", 3),
    ("timer", 300),
    ("ack", 9),
    ("append", 23),
    ("command", 8),
    ("acked", 14),
]
AUTOMATIC_CRASHES: list[Crash] = [
    ("command", 1),
    ("ack", 4),
    ("timer", 300),
    ("append", 12),
    ("acked", 7),
    ("command", 5),
    ("ack", 10),
]


def run_child(journal: Path, device: str, game: str, kind: str, decks: int, crash: Crash | None):
    command = [sys.executable, str(CHILD), str(journal), device, game, kind, str(decks)]
    if crash is not None and crash[0] != "timer":
        command += [crash[0], str(crash[1])]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if crash is not None and crash[0] == "timer":
        time.sleep(crash[1] / 1000)
        child.send_signal(signal.SIGKILL)
    stdout, stderr = child.communicate(timeout=CHILD_TIMEOUT_S)
    return child.returncode, stdout, stderr


@pytest.mark.parametrize(
    ("game", "kind", "decks", "crashes"),
    [
        ("punto-banco", "shoe", 8, MANUAL_CRASHES),
        ("macau-1", "auto", 6, AUTOMATIC_CRASHES),
    ],
)
def test_sigkill_at_many_points_loses_no_card_and_counts_none_twice(
    tmp_path: Path, game: str, kind: str, decks: int, crashes: list[Crash]
) -> None:
    journal = tmp_path / "journal.sqlite"
    profile = "cs-1" if kind == "shoe" else "cs-auto"
    core = create_device(profile, seed=31, decks=decks)
    core.dealer.auto = True
    with serve_pty(core) as pty:
        for crash in crashes:
            code, _, stderr = run_child(journal, str(pty.link), game, kind, decks, crash)
            assert code == -signal.SIGKILL, (crash, code, stderr[-2000:])
        code, stdout, stderr = run_child(journal, str(pty.link), game, kind, decks, None)
        assert code == 0, stderr[-2000:]
        device_count = core.status().cards_dealt
    ended = json.loads(stdout)
    assert ended["reconciled"]
    assert ended["dealt"] + ended["burned"] == device_count == ended["device_cards_dealt"]
    with Journal.open_readonly(journal) as reader:
        assert reader.verify().ok
        seqs = [r.device_seq for r in reader.records() if r.kind.startswith("device.")]
    assert seqs == list(range(1, len(seqs) + 1))
    started = len(journaled(journal, "session.started"))
    timers = sum(point == "timer" for point, _ in crashes)
    assert len(crashes) + 1 - timers <= started <= len(crashes) + 1
    config = config_for(game, kind, decks)
    rounds_as_the_rules_engine_plays_them(journal, config)
    with Journal.open(journal, table_id="T1", create=True) as writer:
        rebuilt = recover(config, writer)
    assert rebuilt.mismatches == ()
    assert rebuilt.model.state == "idle"
