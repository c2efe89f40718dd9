"""Art. 10 corrections of a misread card through the real service, control socket and CLI.

The simulator on a real pty leaves card 15 (past any start-of-shoe burn, so a hand's) unread
(misread-card re-reads it after a while, unreadable-card never reads); `shoectl run` holds,
is killed and restarted in the middle of the hold, and the re-read or a supervisor's
`shoectl control enter-card` puts the card right.
Roles are told by the kernel (SO_PEERCRED): the clients run under `setpriv --reuid`.
"""

from __future__ import annotations

import os
import pwd
import signal
from pathlib import Path
from typing import Any

from support.other_users import (
    DAEMON,
    NOBODY,
    as_user,
    needs_other_uids,
    open_to_other_users,
)
from support.service_support import (
    Table,
    open_manual_shoe,
    running_service,
    simulated_table,
    wait_until,
)
from support.session_support import journaled
from support.shoectl import ShoectlRunner

from cardshoe.controller.procedure.irregularities import card_of
from cardshoe.controller.service.control_client import request


def held_for_a_misread(table: Table) -> bool:
    status = table.status()
    return status["holds"] == ["misread_card"] and status["held_state"] == "dealing"


def corrections(table: Table) -> list[dict[str, Any]]:
    return [dict(record.payload) for record in journaled(table.journal_path, "card.corrected")]


def unread_card_text(table: Table) -> str:
    unread = table.core.unread_card
    assert unread is not None
    return str(card_of(unread))


def voids(table: Table) -> list[tuple[int | None, str]]:
    """The rounds voided, but the one end-shoe withdraws when it comes between rounds."""
    return [
        (record.round_no, record.payload["reason"])
        for record in journaled(table.journal_path, "round.void")
        if record.payload["reason"] != "shoe_closed"
    ]


def end_and_reconcile(table: Table) -> dict[str, Any]:
    """The house ends the shoe after the round under way; its reconciliation, once in."""
    request(table.socket_path, "end-shoe")
    wait_until(lambda: bool(journaled(table.journal_path, "shoe.ended")), "the shoe's end")
    (ended,) = [dict(record.payload) for record in journaled(table.journal_path, "shoe.ended")]
    return ended


def test_a_restart_in_the_middle_of_the_hold_resumes_it_and_the_re_read_corrects_the_card(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    with simulated_table(tmp_path, inject=("misread-card@card=15,for=8",)) as table:
        with running_service(table) as service:
            service.wait_for_notification("READY=1")
            request(table.socket_path, "sign-in")
            open_manual_shoe(table, "MR1")
            wait_until(lambda: held_for_a_misread(table), "the misread card's hold")
            service.stop(signal.SIGKILL)
        with running_service(table) as service:
            service.wait_for_notification("READY=1")
            assert held_for_a_misread(table) and table.status()["card_due"] is None
            assert not corrections(table)
            wait_until(lambda: bool(corrections(table)), "the re-read", timeout=20)
            (corrected,) = corrections(table)
            assert (corrected["correction"], corrected["by"]) == ("reread", None)
            assert corrected["physical_id"] in {str(card) for card in table.core.shoe.dealt}
            ended = end_and_reconcile(table)
            assert service.stop() == 0
    assert ended["reconciled"] and ended["dealt"] + ended["burned"] == ended["device_cards_dealt"]
    assert voids(table) == []
    results = [r.payload["round_no"] for r in journaled(table.journal_path, "round.result")]
    assert corrected["round_no"] in results
    found = [
        (r.payload["code"], r.payload["consequence"])
        for r in journaled(table.journal_path, "irregularity")
    ]
    assert ("misread_card", "hold") in found
    dealer = pwd.getpwuid(os.getuid()).pw_name
    (named,) = [r.payload for r in journaled(table.journal_path, "session.reread_by")]
    assert named == {"dealer": dealer, "card": corrected["card"]}
    recall = shoectl(
        "journal",
        "round",
        str(table.journal_path),
        "--shoe",
        "MR1",
        "--round",
        str(corrected["round_no"]),
    )
    assert recall.returncode == 0, recall.stderr
    assert (
        f"misread_card corrected (reread): {corrected['card']} to {corrected['to']}, by the "
        f"dealer at the reader ({dealer})"
    ) in recall.stdout


def test_enter_card_through_the_cli_after_a_restart_and_its_refusals_in_one_line(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    with simulated_table(tmp_path, inject=("unreadable-card@card=15",)) as table:
        socket = str(table.socket_path)
        with running_service(table) as service:
            service.wait_for_notification("READY=1")
            early = shoectl("control", "enter-card", "--card", "7H", "--socket", socket)
            assert early.returncode == 2
            assert early.stderr.startswith(
                "shoectl: error: enter-card 7H is not possible now: no misread card awaits "
                "correction"
            )
            open_manual_shoe(table, "MR2")
            wait_until(lambda: held_for_a_misread(table), "the misread card's hold")
            service.stop(signal.SIGKILL)
        with running_service(table) as service:
            service.wait_for_notification("READY=1")
            assert held_for_a_misread(table)
            for bad in ("ZZ", "7H 8H", "7*"):
                done = shoectl("control", "enter-card", "--card", bad, "--socket", socket)
                assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
                assert done.stderr.startswith("shoectl: error: --card")
            missing = shoectl("control", "enter-card", "--socket", socket)
            assert missing.returncode == 2 and "enter-card needs --card" in missing.stderr
            card = unread_card_text(table)
            entered = shoectl(
                "control",
                "enter-card",
                "--card",
                card.lower(),
                "--note",
                "torn tag",
                "--socket",
                socket,
                "--json",
            )
            assert entered.returncode == 0, entered.stderr
            ended = end_and_reconcile(table)
            assert service.stop() == 0
    (corrected,) = corrections(table)
    assert (corrected["correction"], corrected["card"], corrected["physical_id"]) == (
        "entered",
        card,
        "entered",
    )
    assert corrected["by"]["uid"] == os.getuid()
    assert ended["reconciled"] and ended["dealt"] + ended["burned"] == ended["device_cards_dealt"]
    commands = [r.payload for r in journaled(table.journal_path, "command.enter_card")]
    assert [(c["card"], c["note"]) for c in commands] == [("7H", None), (card, "torn tag")]
    refused = [r.payload["command"] for r in journaled(table.journal_path, "command.refused")]
    assert refused == ["enter-card"]


def test_void_round_stays_possible_while_the_table_awaits_a_re_read(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    with (
        simulated_table(tmp_path, inject=("unreadable-card@card=15",)) as table,
        running_service(table) as service,
    ):
        service.wait_for_notification("READY=1")
        open_manual_shoe(table, "MR4")
        wait_until(lambda: held_for_a_misread(table), "the misread card's hold")
        held_round = table.status()["round_no"]
        voided = shoectl(
            "control",
            "void-round",
            "--reason",
            "misdeal",
            "--note",
            "tag torn off",
            "--socket",
            str(table.socket_path),
        )
        assert voided.returncode == 0, voided.stderr
        wait_until(lambda: (table.status()["round_no"] or 0) > held_round, "the next round")
        ended = end_and_reconcile(table)
        assert service.stop() == 0
    assert voids(table) == [(held_round, "misdeal")]
    asides = [r.payload for r in journaled(table.journal_path, "card.set_aside")]
    assert [(a["card"], a["physical_id"], a["reason"]) for a in asides] == [(None, None, "misdeal")]
    assert not corrections(table)
    assert ended["reconciled"] and ended["dealt"] + ended["burned"] == ended["device_cards_dealt"]


@needs_other_uids
def test_only_a_supervisor_enters_a_card_and_the_correction_names_them(
    shared_folder: Path, shoectl: ShoectlRunner
) -> None:
    with simulated_table(shared_folder, inject=("unreadable-card@card=15",)) as table:
        config = (
            table.config_path.read_text() + '[roles]\nsupervisor = ["root"]\ndealer = ["nobody"]\n'
        )
        table.config_path.write_text(config)
        socket = table.socket_path
        with running_service(table) as service:
            service.wait_for_notification("READY=1")
            open_to_other_users(socket)
            for command in (("new-shoe", "--shoe-id", "MR3"), ("shoe-loaded",), ("cut-done",)):
                done = as_user(NOBODY, socket, "control", *command)
                assert done.returncode == 0, done.stderr
            wait_until(lambda: held_for_a_misread(table), "the misread card's hold")
            card = unread_card_text(table)
            for uid, role in ((NOBODY, "dealer"), (DAEMON, "watcher")):
                denied = as_user(uid, socket, "control", "enter-card", "--card", card)
                assert denied.returncode == 3
                (line,) = denied.stderr.splitlines()
                assert line.startswith("shoectl: error: enter-card needs a supervisor: ")
                assert f"is a {role} at this table" in line
            assert held_for_a_misread(table)
            entered = as_user(0, socket, "control", "enter-card", "--card", card)
            assert entered.returncode == 0, entered.stderr
            wait_until(lambda: not table.status()["holds"], "the hold's end")
            assert service.stop() == 0
        recall = shoectl(
            "journal", "round", str(table.journal_path), "--shoe", "MR3", "--round", "2"
        )
    (corrected,) = corrections(table)
    assert corrected["by"] == {"uid": 0, "user": "root", "role": "supervisor"}
    operators = [r.payload for r in journaled(table.journal_path, "session.operator")]
    assert ("root", 0, "supervisor", "command.enter_card") in [
        (o["user"], o["uid"], o["role"], o["command"]) for o in operators
    ]
    denials = [r.payload for r in journaled(table.journal_path, "session.command_denied")]
    assert [(d["user"], d["command"], d["needs"]) for d in denials] == [
        ("nobody", "enter-card", "supervisor"),
        ("daemon", "enter-card", "supervisor"),
    ]
    assert recall.returncode == 0, recall.stderr
    assert (
        f"misread_card corrected (entered): {card} to {corrected['to']}, by root (uid 0, "
        "supervisor)" in recall.stdout
    )
