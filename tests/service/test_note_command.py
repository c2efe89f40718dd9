"""A command added as one row and its handling: the supervisor's note, journaled as given."""

from __future__ import annotations

from pathlib import Path

from support.session_support import journaled, session_on, simulated_device, table_config

from cardshoe.controller.procedure.operator_commands import COMMANDS, CONTROL_COMMANDS, Role
from cardshoe.controller.service.command_routes import SESSION_COMMANDS
from cardshoe.controller.service.session import OPERATOR


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
    assert journaled(path, OPERATOR)[-1].payload["user"] == "sam"
