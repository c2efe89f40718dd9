"""A command added as one row and its handling: the supervisor's note, journaled as given."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from support.session_support import journaled, session_on, simulated_device, table_config

from cardshoe.controller.procedure.operator_commands import COMMANDS, CONTROL_COMMANDS, Role
from cardshoe.controller.record_kinds import SESSION_OPERATOR, check_payload
from cardshoe.controller.service.command_routes import SESSION_COMMANDS


def test_a_note_is_served_checked_and_journaled_with_who_gave_it(tmp_path: Path) -> None:
    note = COMMANDS["note"]
    assert note.role is Role.SUPERVISOR
    assert note in SESSION_COMMANDS and note in CONTROL_COMMANDS
    config = table_config()
    path = tmp_path / "journal.db"
    with (
        session_on(config, simulated_device(config, seed=3), path) as (session, _),
        session.acting_as({"uid": 0, "user": "sam", "role": "supervisor"}),
    ):
        session.operate(note, text="the pit boss counted the float")
    [record] = journaled(path, "command.note")
    assert record.payload == {"text": "the pit boss counted the float"}
    check_payload(record.kind, record.payload)
    assert journaled(path, SESSION_OPERATOR)[-1].payload["user"] == "sam"
    shown = subprocess.run(
        [sys.executable, "-m", "cardshoe.controller.cli", "control", "--help"],
        capture_output=True,
        text=True,
    )
    assert "Journal a supervisor's note." in shown.stdout
