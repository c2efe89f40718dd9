"""Roles by the control socket's peer uid (SO_PEERCRED), with real uids: root, nobody, daemon.

The client runs under `setpriv --reuid`, so the kernel, not the client, says who asks.
"""

from __future__ import annotations

import json
import re
import signal
from pathlib import Path

from support.other_users import (
    DAEMON,
    NOBODY,
    as_user,
    needs_other_uids,
    open_to_other_users,
)
from support.service_support import (
    running_service,
    simulated_table,
    wait_until,
    with_relief_burn,
)
from support.session_support import journaled
from support.shoectl import ShoectlRunner

from cardshoe.controller.journal.records import Record
from cardshoe.controller.journal.store import Journal

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
            open_to_other_users(socket)
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
            # Permitted: the procedure itself answers (round 1 has no card to void yet).
            assert voided.returncode == 2 and "round 1 has no card dealt yet" in voided.stderr
            relief = as_user(0, socket, "control", "sign-in", "--json")
            assert json.loads(relief.stdout)["dealer"] == "root"
            assert service.stop() == 0
    operators = [r.payload for r in journaled(table.journal_path, "session.operator")]
    assert [(o["user"], o["uid"], o["role"], o["command"]) for o in operators] == [
        ("nobody", NOBODY, "dealer", "command.sign_in"),
        ("nobody", NOBODY, "dealer", "command.start_shoe"),
        ("nobody", NOBODY, "dealer", "command.shoe_loaded"),
        ("nobody", NOBODY, "dealer", "command.cut_done"),
        ("root", 0, "supervisor", "command.void_round"),
        ("root", 0, "supervisor", "command.sign_in"),
    ]
    denials = [r.payload for r in journaled(table.journal_path, "session.command_denied")]
    assert [(d["user"], d["command"], d["needs"]) for d in denials] == [
        ("nobody", "void-round", "supervisor"),
        ("daemon", "no-more-bets", "dealer"),
    ]
    signed_in = [r.payload for r in journaled(table.journal_path, "command.sign_in")]
    assert signed_in == [
        {"dealer": "nobody", "relieves": None},
        {"dealer": "root", "relieves": "nobody"},
    ]
    refused = [r.payload["command"] for r in journaled(table.journal_path, "command.refused")]
    assert refused == ["void-round"]


def test_a_dealer_relieving_another_burns_before_the_next_deal_even_across_a_crash(
    shared_folder: Path, shoectl: ShoectlRunner
) -> None:
    """game.relief_burn = 1: nobody deals, daemon relieves them while bets are open; the
    service is killed and restarted, and the burn still comes after no more bets."""
    with simulated_table(shared_folder) as table:
        with_relief_burn(table)
        socket = table.socket_path
        with running_service(table, betting_time=None) as service:
            service.wait_for_notification("READY=1")
            open_to_other_users(socket)
            assert as_user(NOBODY, socket, "control", "sign-in").returncode == 0
            for command in (("new-shoe", "--shoe-id", "R2"), ("shoe-loaded",), ("cut-done",)):
                done = as_user(NOBODY, socket, "control", *command)
                assert done.returncode == 0, done.stderr
            wait_until(lambda: table.status()["state"] == "betting", "round 1 open for bets")
            assert table.status()["relief_burn_due"] is False
            relief = as_user(DAEMON, socket, "control", "sign-in", "--json")
            assert relief.returncode == 0, relief.stderr
            answer = json.loads(relief.stdout)
            assert (answer["dealer"], answer["relief_burn_due"]) == ("daemon", True)
            shown = as_user(DAEMON, socket, "status")
            assert shown.returncode == 0, shown.stderr
            rows = dict(re.split(r"\s{2,}", line, maxsplit=1) for line in shown.stdout.splitlines())
            assert "relief_burn 1" in rows["options"]
            assert rows["dealer"] == "daemon"
            assert rows["relief burn"] == (
                "1 card(s) when a dealer is relieved: due after the next no more bets"
            )
            assert service.stop(signal.SIGKILL) == -signal.SIGKILL
        with running_service(table, betting_time=None) as service:
            service.wait_for_notification("READY=1")
            open_to_other_users(socket)
            status = table.status()
            assert (status["state"], status["round_no"], status["dealer"]) == (
                "betting",
                1,
                "daemon",
            )
            assert status["relief_burn_due"] is True
            closed = as_user(DAEMON, socket, "control", "no-more-bets")
            assert closed.returncode == 0, closed.stderr
            wait_until(lambda: table.status()["round_no"] == 2, "round 1 dealt")
            assert table.status()["relief_burn_due"] is False
            assert service.stop() == 0
    due = [r.payload for r in journaled(table.journal_path, "shoe.relief_burn_due")]
    assert due == [{"dealer": "daemon", "relieves": "nobody", "cards": 1, "before_round": 1}]
    round_one = [r for r in all_records(table.journal_path) if r.round_no == 1]
    kinds = [r.kind for r in round_one if r.kind in ("round.bets_closed", "card.burned")]
    assert kinds[:2] == ["round.bets_closed", "card.burned"]
    burns = [r.payload["reason"] for r in journaled(table.journal_path, "card.burned")]
    assert burns == ["start_of_shoe"] * 8 + ["dealer_relief"]
    first_card = next(r for r in round_one if r.kind == "card.assigned")
    relief_burn = next(r for r in round_one if r.kind == "card.burned")
    assert relief_burn.id < first_card.id
    signers = [
        (r.payload["user"], r.payload["role"])
        for r in journaled(table.journal_path, "session.operator")
        if r.payload["command"] == "command.sign_in"
    ]
    assert signers == [("nobody", "dealer"), ("daemon", "dealer")]
    recalled = shoectl("journal", "round", str(table.journal_path), "--shoe", "R2", "--round", "1")
    assert recalled.returncode == 0, recalled.stderr
    (burn_line,) = [line for line in recalled.stdout.splitlines() if "-> burn" in line]
    assert burn_line.endswith("-> burn (dealer_relief)")
    as_json = shoectl(
        "journal", "round", str(table.journal_path), "--shoe", "R2", "--round", "1", "--json"
    )
    cards = json.loads(as_json.stdout)["cards"]
    assert (cards[0]["to"], cards[0]["reason"]) == ("burn", "dealer_relief")
    assert {card["reason"] for card in cards[1:]} == {None}


def all_records(path: Path) -> list[Record]:
    with Journal.open_readonly(path) as journal:
        return list(journal.records())


def test_on_the_automatic_machine_the_relief_burn_is_dealt_returned_and_reconciled(
    shared_folder: Path,
) -> None:
    """The machine deals the relief burn on DEAL_NEXT like any card; it goes back in with the
    round's cards, and the shoe still reconciles."""
    with simulated_table(shared_folder, kind="auto") as table:
        config = table.config_path.read_text().replace("]\nname", "]\nrelief_burn = 1\nname", 1)
        config += '[roles]\ndealer = ["nobody", "daemon"]\n'
        table.config_path.write_text(config)
        socket = table.socket_path
        with running_service(table, betting_time=None) as service:
            service.wait_for_notification("READY=1")
            open_to_other_users(socket)
            assert as_user(NOBODY, socket, "control", "sign-in").returncode == 0
            opened = as_user(NOBODY, socket, "control", "new-shoe", "--shoe-id", "A1")
            assert opened.returncode == 0, opened.stderr
            wait_until(lambda: table.status()["state"] == "betting", "round 1 open for bets")
            assert as_user(DAEMON, socket, "control", "sign-in").returncode == 0
            for command in ("no-more-bets", "end-shoe"):
                done = as_user(DAEMON, socket, "control", command)
                assert done.returncode == 0, done.stderr
            wait_until(lambda: table.status()["state"] == "idle", "the shoe reconciled")
            assert service.stop() == 0
    (burned,) = journaled(table.journal_path, "card.burned")
    assert (burned.payload["reason"], burned.round_no) == ("dealer_relief", 1)
    (returned,) = journaled(table.journal_path, "round.cards_returned")
    (result,) = journaled(table.journal_path, "round.result")
    in_hands = len(result.payload["player"]) + len(result.payload["banker"])
    assert returned.payload["expected"] == returned.payload["counted"] == in_hands + 1
    (ended,) = [r.payload for r in journaled(table.journal_path, "shoe.ended")]
    assert (ended["burned"], ended["returned"], ended["reconciled"]) == (1, in_hands + 1, True)
