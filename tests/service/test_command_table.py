"""The one table of operator commands (procedure/operator_commands.py): everything the service,
the role check, the refusals and `shoectl control` know of a command comes from its row."""

from __future__ import annotations

from support.session_support import table_config

from cardshoe.controller.procedure.inputs import HOST_INPUTS
from cardshoe.controller.procedure.operator_commands import (
    COMMANDS,
    CONTROL_COMMANDS,
    OPERATOR_COMMANDS,
    Role,
    least_role,
)
from cardshoe.controller.procedure.refusals import COMMAND_WORDS
from cardshoe.controller.service.command_routes import SESSION_COMMANDS, SESSION_SIDE
from cardshoe.controller.service.control_socket import SUBSCRIBE
from cardshoe.controller.service.table_service import TableService


def test_every_row_is_served_and_nothing_else() -> None:
    served = set(TableService(table_config())._handlers()) | {SUBSCRIBE}
    assert served == set(COMMANDS)
    assert set(SESSION_SIDE) <= {command.name for command in SESSION_COMMANDS}


def test_the_role_check_the_refusal_words_and_the_journal_kinds_come_from_the_rows() -> None:
    assert least_role("no-more-bets") is Role.DEALER
    assert least_role("void-round") is Role.SUPERVISOR
    assert least_role("firmware-update") is Role.TECHNICIAN
    assert least_role("no-such-command") is Role.TECHNICIAN
    for command in OPERATOR_COMMANDS:
        if command.trigger is not None:
            assert COMMAND_WORDS[command.trigger] == command.name
        if command.kind is not None:
            assert HOST_INPUTS[command.kind] is command.procedure_input


def test_shoectl_control_offers_the_rows_with_help_and_their_arguments() -> None:
    from cardshoe.controller.cli.control_cmd import control

    options = {option for param in control.params for option in getattr(param, "opts", ())}
    assert [command.name for command in CONTROL_COMMANDS][:3] == [
        "sign-in",
        "supervisor-sign-in",
        "new-shoe",
    ]
    for command in CONTROL_COMMANDS:
        assert f"{command.name}: {command.help}" in (control.help or "")
        for parameter in command.parameters:
            assert "--" + parameter.name.replace("_", "-") in options
