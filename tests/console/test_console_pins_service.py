"""PINs at the running service: the console acts only for a person signed in with a PIN,
wrong PINs lock a name, a supervisor's command needs a supervisor's PIN at that moment, and
the journal holds every PIN given and both names of an approved command."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from support.console_support import (
    DEALER,
    DEALER_PIN,
    ME,
    OTHER_DEALER,
    OTHER_DEALER_PIN,
    SUPERVISOR,
    SUPERVISOR_PIN,
    set_pin,
    with_console,
)
from support.other_users import NOBODY, as_user, needs_other_uids, open_to_other_users
from support.service_support import running_service, simulated_table, wait_until
from support.session_support import journaled

from cardshoe.controller.errors import UserError
from cardshoe.controller.service.control_client import request


def refused(socket: Path, command: str, **arguments: object) -> str:
    with pytest.raises(UserError) as caught:
        request(socket, command, **arguments)
    return str(caught.value)


def test_the_console_commands_only_for_a_signed_in_person_and_a_supervisor_approves_with_a_pin(
    tmp_path: Path,
) -> None:
    with simulated_table(tmp_path) as table:
        with_console(table)
        pins = json.loads((tmp_path / "pins.json").read_text())
        assert stat.S_IMODE((tmp_path / "pins.json").stat().st_mode) == 0o640
        assert set(pins["people"]) == {DEALER, SUPERVISOR, OTHER_DEALER}
        assert DEALER_PIN not in (tmp_path / "pins.json").read_text()
        with running_service(table, betting_time=None) as service:
            service.wait_for_notification("READY=1")
            socket = table.socket_path
            # Without a sign-in the console's user is only a watcher.
            assert refused(socket, "new-shoe").startswith(f"new-shoe needs a dealer: {ME} (uid")
            for _ in range(2):
                assert refused(socket, "console-sign-in", name=OTHER_DEALER, pin="0000") == (
                    f"wrong name or PIN for {OTHER_DEALER}: type them again (3 wrong PINs lock "
                    "the name for 60 s)"
                )
            locked = f"{OTHER_DEALER} is locked after 3 wrong PINs: try again in 60 s"
            assert refused(socket, "console-sign-in", name=OTHER_DEALER, pin="0000").startswith(
                locked
            )
            assert "is locked after 3 wrong PINs" in refused(
                socket, "console-sign-in", name=OTHER_DEALER, pin=OTHER_DEALER_PIN
            )
            signed = request(socket, "console-sign-in", name=DEALER, pin=DEALER_PIN)
            token = signed["token"]
            assert signed["status"]["dealer"] == DEALER
            request(socket, "new-shoe", shoe_id="P1", console=token)
            request(socket, "shoe-loaded", console=token)
            assert refused(socket, "new-shoe", console=token).startswith(
                "new-shoe is not possible now: the pack is being cut (possible now: cut-done"
            )
            request(socket, "cut-done", console=token)
            wait_until(lambda: table.status()["state"] == "betting", "round 1 open for bets")
            assert refused(socket, "void-round", reason="misdeal", console=token) == (
                "void-round needs a supervisor: ann is a dealer at this table; ask a supervisor "
                "to approve it with their name and PIN"
            )
            approval = {"name": DEALER, "pin": DEALER_PIN}
            assert refused(
                socket, "void-round", reason="misdeal", console=token, supervisor=approval
            ).startswith("void-round needs a supervisor: ann is a dealer")
            wrong = {"name": SUPERVISOR, "pin": "1111"}
            assert refused(
                socket, "void-round", reason="misdeal", console=token, supervisor=wrong
            ).startswith(f"wrong name or PIN for {SUPERVISOR}")
            approved = {"name": SUPERVISOR, "pin": SUPERVISOR_PIN}
            # Permitted: the procedure itself answers (round 1 has no card yet).
            assert "round 1 has no card dealt yet" in refused(
                socket, "void-round", reason="misdeal", console=token, supervisor=approved
            )
            request(socket, "no-more-bets", console=token)
            request(socket, "console-sign-out", console=token)
            assert "nobody is signed in at the console" in refused(
                socket, "end-shoe", console=token
            )
            assert service.stop() == 0
    path = table.journal_path
    given = [r.payload for r in journaled(path, "session.console_pin")]
    assert [(p["name"], p["outcome"], p["purpose"]) for p in given] == [
        (OTHER_DEALER, "wrong", "console-sign-in"),
        (OTHER_DEALER, "wrong", "console-sign-in"),
        (OTHER_DEALER, "now_locked", "console-sign-in"),
        (OTHER_DEALER, "locked", "console-sign-in"),
        (DEALER, "accepted", "console-sign-in"),
        (DEALER, "accepted", "void-round"),
        (SUPERVISOR, "wrong", "void-round"),
        (SUPERVISOR, "accepted", "void-round"),
    ]
    assert all(p["via"] == ME for p in given)
    operators = [r.payload for r in journaled(path, "session.operator")]
    assert [(o["user"], o["role"], o.get("signed_in"), o["command"]) for o in operators] == [
        (DEALER, "dealer", None, "command.sign_in"),
        (DEALER, "dealer", None, "command.start_shoe"),
        (DEALER, "dealer", None, "command.shoe_loaded"),
        (DEALER, "dealer", None, "command.start_shoe"),
        (DEALER, "dealer", None, "command.cut_done"),
        (SUPERVISOR, "supervisor", DEALER, "command.void_round"),
        (DEALER, "dealer", None, "command.close_bets"),
    ]
    assert {o["via"] for o in operators} == {ME}
    denied = [r.payload for r in journaled(path, "session.command_denied")]
    assert [(d["user"], d["command"], d["needs"]) for d in denied] == [
        (ME, "new-shoe", "dealer"),
        (DEALER, "void-round", "supervisor"),
    ]  # ann's second try within the repeat interval is counted, not journaled again
    (out,) = [r.payload for r in journaled(path, "session.console_signed_out")]
    assert out == {"name": DEALER, "why": "sign-out"}


def test_pin_set_asks_twice_and_says_what_is_wrong_in_one_line(tmp_path: Path) -> None:
    with simulated_table(tmp_path) as table:
        no_file = set_pin(table, DEALER, "dealer", DEALER_PIN)
        assert no_file.returncode == 2
        assert no_file.stderr.strip().endswith(
            '[roles] names no pins_file: add pins_file = "pins.json" to its [roles] section, '
            "then run this again"
        )
        with_console(table)
        differ = set_pin(table, DEALER, "dealer", "1234", again="1235")
        assert (differ.returncode, differ.stderr.strip()) == (
            2,
            "shoectl: error: the two PINs differ: nothing changed; run the command again",
        )
        short = set_pin(table, DEALER, "dealer", "12")
        assert short.returncode == 2 and "a PIN is 4-64 characters" in short.stderr
        bad_name = set_pin(table, "a b", "dealer", "1234")
        assert bad_name.returncode == 2 and "'a b' is not usable at the console" in bad_name.stderr
        changed = set_pin(table, DEALER, "supervisor", "8642")
        assert changed.returncode == 0, changed.stderr
        assert changed.stdout.strip() == f"changed ann (supervisor) in {tmp_path / 'pins.json'}"
        assert "Traceback" not in no_file.stderr + differ.stderr + short.stderr


@needs_other_uids
def test_only_the_consoles_own_user_signs_people_in_and_bad_requests_get_one_line(
    shared_folder: Path,
) -> None:
    with simulated_table(shared_folder) as table:
        with_console(table)
        with running_service(table, betting_time=None) as service:
            service.wait_for_notification("READY=1")
            socket = table.socket_path
            open_to_other_users(socket)
            other = as_user(NOBODY, socket, "control", "console-sign-in")
            assert other.returncode == 3
            assert other.stderr.strip() == (
                "shoectl: error: only the table's console signs people in and acts for them: "
                "run shoectl console as the user [roles] console names"
            )
            assert refused(socket, "console-sign-in", name=DEALER) == (
                "console-sign-in needs a name and a PIN"
            )
            token = request(socket, "console-sign-in", name=DEALER, pin=DEALER_PIN)["token"]
            assert (
                refused(socket, "abandon-shoe", reason="x", console=token, supervisor="sam 9753")
                == 'abandon-shoe: "supervisor" is {"name": NAME, "pin": PIN}'
            )
            assert refused(socket, "new-shoe", console=42).startswith(
                "nobody is signed in at the console"
            )
            assert service.stop() == 0


def test_a_restart_lifts_no_lockout_and_forgets_no_wrong_pin(tmp_path: Path) -> None:
    """The PIN checks are journaled: the next run of the service counts them again, so a
    guesser gains no tries by getting the service restarted."""
    with simulated_table(tmp_path) as table:
        with_console(table)
        socket = table.socket_path
        with running_service(table, betting_time=None) as service:
            service.wait_for_notification("READY=1")
            for _ in range(3):
                refused(socket, "console-sign-in", name=OTHER_DEALER, pin="0000")
            refused(socket, "console-sign-in", name=DEALER, pin="0000")
            assert service.stop() == 0
        with running_service(table, betting_time=None) as service:
            service.wait_for_notification("READY=1")
            still = refused(socket, "console-sign-in", name=OTHER_DEALER, pin=OTHER_DEALER_PIN)
            assert still.startswith(f"{OTHER_DEALER} is locked after 3 wrong PINs: try again in")
            assert refused(socket, "console-sign-in", name=DEALER, pin="0000").startswith(
                f"wrong name or PIN for {DEALER}"
            )
            assert refused(socket, "console-sign-in", name=DEALER, pin="0000").startswith(
                f"{DEALER} is locked after 3 wrong PINs"
            ), "ann's wrong PIN before the restart and two after are three"
            assert service.stop() == 0
    given = [r.payload for r in journaled(table.journal_path, "session.console_pin")]
    assert [(p["name"], p["outcome"]) for p in given] == [
        (OTHER_DEALER, "wrong"),
        (OTHER_DEALER, "wrong"),
        (OTHER_DEALER, "now_locked"),
        (DEALER, "wrong"),
        (OTHER_DEALER, "locked"),
        (DEALER, "wrong"),
        (DEALER, "now_locked"),
    ]
