"""`shoectl console` in a real terminal (tmux): a whole shoe dealt with the dealer's keys and
one supervisor's PIN for a hold, the refusals in the operator's words, each journaled, and
the console riding out a restart of the service."""

from __future__ import annotations

import sys
from pathlib import Path

from support.console_support import (
    DEALER,
    DEALER_PIN,
    ME,
    OTHER_DEALER,
    SUPERVISOR,
    SUPERVISOR_PIN,
    with_console,
)
from support.service_support import (
    Table,
    assert_shoe_dealt_once,
    running_service,
    simulated_table,
    wait_until,
)
from support.session_support import journaled
from support.tmux_support import TmuxTerminal, tmux_running

from cardshoe.controller.procedure.irregularities import card_of

SCREEN = Path(__file__).resolve().parents[2] / "docs" / "console-terminal.txt"
"""The console as tmux shows it during the hold, for docs/console.md."""


def sign_in(terminal: TmuxTerminal, name: str, pin: str) -> None:
    terminal.press("i")
    terminal.wait_for("Your name:")
    terminal.type(name)
    terminal.press("Enter")
    terminal.wait_for("Your PIN:")
    terminal.type(pin)
    terminal.press("Enter")


def answer(terminal: TmuxTerminal, *lines: str) -> None:
    for line in lines:
        terminal.type(line)
        terminal.press("Enter")


def held_for_a_misread(table: Table) -> bool:
    return table.status()["holds"] == ["misread_card"]


def test_a_whole_shoe_from_the_console_with_dealer_keys_and_one_supervisor_pin(
    tmp_path: Path,
) -> None:
    with simulated_table(tmp_path, decks=1, inject=("unreadable-card@card=15",)) as table:
        with_console(table)
        console = [sys.executable, "-m", "cardshoe.controller.cli", "console"]
        console += ["--config", str(table.config_path)]
        with (
            running_service(table, betting_time=None) as service,
            tmux_running(tmp_path, console) as terminal,
        ):
            service.wait_for_notification("READY=1")
            terminal.wait_for("Nobody is signed in: press i", " i  sign in")
            sign_in(terminal, DEALER, "1111")
            terminal.wait_for(f"wrong name or PIN for {DEALER}: type them again")
            for _ in range(3):
                sign_in(terminal, OTHER_DEALER, "0000")
            terminal.wait_for(f"{OTHER_DEALER} is locked after 3 wrong PINs: try again in 60 s")
            sign_in(terminal, DEALER, DEALER_PIN)
            terminal.wait_for(f"Signed in: {DEALER} (dealer)", " n  new shoe")
            terminal.press("n")
            terminal.wait_for(" l  shoe loaded")
            terminal.press("l")
            terminal.wait_for(" c  cut done")
            terminal.press("c")
            terminal.wait_for(" b  no more bets")
            terminal.press("n")  # not on screen: the service says why, in the dealer's words
            terminal.wait_for("new-shoe is not possible now: bets are open (possible now:")
            supervised = False
            while not journaled(table.journal_path, "shoe.ended"):
                status = table.status()
                if held_for_a_misread(table) and not supervised:
                    held = terminal.wait_for("A card could not be read", " k  enter card")
                    SCREEN.write_text(held.rstrip() + "\n")
                    card = str(card_of(table.core.unread_card))
                    terminal.press("k")
                    answer(terminal, card, DEALER, DEALER_PIN)
                    terminal.wait_for(
                        f"enter-card needs a supervisor: {DEALER} is a dealer at this table"
                    )
                    terminal.press("k")
                    answer(terminal, card, SUPERVISOR, SUPERVISOR_PIN)
                    wait_until(lambda: not held_for_a_misread(table), "the hold's end")
                    supervised = True
                elif status["state"] == "betting" and not status["holds"]:
                    terminal.wait_for(" b  no more bets")
                    terminal.press("b")
                    wait_until(
                        lambda round_no=status["round_no"]: (
                            table.status()["round_no"] != round_no
                            or table.status()["state"] != "betting"
                        ),
                        "bets closed",
                    )
            terminal.wait_for("shoe ended", "reconciled", " n  new shoe")
            assert supervised
            assert service.stop() == 0
            terminal.wait_for("service restarting")
            with running_service(table, betting_time=None) as again:
                again.wait_for_notification("READY=1")
                terminal.wait_for("Nobody is signed in: press i", gone="service restarting")
                assert again.stop() == 0
    (ended,) = [r.payload for r in journaled(table.journal_path, "shoe.ended")]
    assert_shoe_dealt_once(table, ended["shoe_id"])
    path = table.journal_path
    given = [
        (r.payload["name"], r.payload["outcome"]) for r in journaled(path, "session.console_pin")
    ]
    assert given == [
        (DEALER, "wrong"),
        (OTHER_DEALER, "wrong"),
        (OTHER_DEALER, "wrong"),
        (OTHER_DEALER, "now_locked"),
        (DEALER, "accepted"),
        (DEALER, "accepted"),
        (SUPERVISOR, "accepted"),
    ]
    operators = [r.payload for r in journaled(path, "session.operator")]
    assert {o["via"] for o in operators} == {ME}
    assert {o["user"] for o in operators if o["command"] != "command.enter_card"} == {DEALER}
    (entered,) = [o for o in operators if o["command"] == "command.enter_card"]
    assert (entered["user"], entered["role"], entered["signed_in"]) == (
        SUPERVISOR,
        "supervisor",
        DEALER,
    )
    (denied,) = [r.payload for r in journaled(path, "session.command_denied")]
    assert (denied["user"], denied["command"], denied["needs"]) == (
        DEALER,
        "enter-card",
        "supervisor",
    )
    refused = [r.payload["command"] for r in journaled(path, "command.refused")]
    assert refused == ["new-shoe"]
