"""Operator commands through the real CLI and the running service's control socket."""

from __future__ import annotations

from pathlib import Path

from support.service_support import control, running_service, simulated_table, wait_until
from support.session_support import journaled
from support.shoectl import ShoectlRunner

from cardshoe.controller.service.control_client import request


def test_shoe_ids_are_safe_and_unique_and_deck_sets_are_u32_in_the_printed_form(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    """Issue 12 item 13 and issue 11 case 12: two shoes named S42 were accepted, -1 and 2^40
    were taken as deck sets, and the hex form every output prints was refused."""
    with simulated_table(tmp_path) as table, running_service(table) as service:
        service.wait_for_notification("READY=1")
        socket = table.socket_path
        for bad_id, why in (("S 42", "not usable"), ("../x", "not usable"), ("x" * 65, "")):
            code, error = control(shoectl, socket, "new-shoe", "--shoe-id", bad_id)
            assert code == 2 and error.startswith("shoectl: error: --shoe-id") and why in error
        for bad_set in ("-1", str(2**40), "0xZZ", "0x1FFFFFFFF"):
            code, error = control(shoectl, socket, "new-shoe", "--deck-set", bad_set)
            assert code == 2 and "is not a deck set" in error and "0x00BC614E" in error
        assert table.status()["state"] == "idle"
        code, error = control(
            shoectl, socket, "new-shoe", "--shoe-id", "S42", "--deck-set", "0x00bc614e"
        )
        assert code == 0, error
        assert control(shoectl, socket, "abandon-shoe", "--reason", "test")[0] == 0
        code, error = control(shoectl, socket, "new-shoe", "--shoe-id", "S42")
        assert code == 2 and "shoe S42 is already in the journal" in error
        assert service.stop() == 0
    (started,) = [r.payload for r in journaled(table.journal_path, "shoe.started")]
    assert (started["shoe_id"], started["deck_set"]) == ("S42", "0x00BC614E")
    assert [r.payload["deck_set"] for r in journaled(table.journal_path, "command.start_shoe")] == [
        0x00BC614E
    ]


def test_a_mistyped_deck_set_holds_at_the_first_card_instead_of_voiding_the_shoe(
    tmp_path: Path,
) -> None:
    """Issue 11 case 12: with a one-digit typo every card was foreign and about 290 rounds
    were voided in 4 s without a hold."""
    with simulated_table(tmp_path) as table, running_service(table) as service:
        service.wait_for_notification("READY=1")
        request(table.socket_path, "new-shoe", shoe_id="TYPO", deck_set="0x00BC614F")
        request(table.socket_path, "shoe-loaded")
        request(table.socket_path, "cut-done")
        wait_until(lambda: table.status()["holds"] == ["deck_set_mismatch"], "the hold")
        status = table.status()
        assert (status["state"], status["held_state"], status["burned"]) == ("held", "burning", 1)
        assert "abandon the shoe" in status["last_alarm"]["detail"]
        assert service.stop() == 0
    assert not journaled(table.journal_path, "round.void")


def test_refusals_are_in_the_operators_words_counted_and_never_the_last_alarm(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    """Issue 12 item 12: it used to say `close_bets is not allowed in state idle`,
    `abandon-shoe needs reason`, and make each refusal the table's last alarm."""
    with simulated_table(tmp_path) as table:
        socket = table.socket_path
        with running_service(table) as service:
            service.wait_for_notification("READY=1")
            code, error = control(shoectl, socket, "no-more-bets")
            assert (code, error) == (
                2,
                "shoectl: error: no-more-bets is not possible now: no shoe is open "
                "(possible now: new-shoe)",
            )
            code, error = control(shoectl, socket, "abandon-shoe")
            assert (code, error) == (2, "shoectl: error: abandon-shoe needs --reason")
            code, error = control(shoectl, socket, "clear-hold", "--reason", "the door")
            assert (code, error) == (
                2,
                "shoectl: error: clear-hold 'the door' is not possible now: "
                "no hold a person clears is active",
            )
            status = table.status()
            assert (status["refused_commands"], status["last_alarm"]) == (2, None)
            assert service.stop() == 0
        refused = [r.payload for r in journaled(table.journal_path, "command.refused")]
        assert [r["command"] for r in refused] == ["no-more-bets", "clear-hold"]
        with running_service(table) as again:
            again.wait_for_notification("READY=1")
            assert again.stop() == 0
        assert "refused" not in again.log_tail() and "warning" not in again.log_tail()


def test_clear_hold_names_the_active_holds_and_takes_a_note(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    with simulated_table(tmp_path) as table, running_service(table) as service:
        service.wait_for_notification("READY=1")
        socket = table.socket_path
        request(socket, "new-shoe", shoe_id="HELD", deck_set="0x00BC614F")
        request(socket, "shoe-loaded")
        request(socket, "cut-done")
        wait_until(lambda: table.status()["holds"] == ["deck_set_mismatch"], "the hold")
        code, error = control(shoectl, socket, "clear-hold", "--reason", "checked the box")
        assert code == 2
        assert "name one of the active holds a person clears: deck_set_mismatch" in error
        assert "(free text goes in --note)" in error
        code, error = control(
            shoectl,
            socket,
            "clear-hold",
            "--reason",
            "deck_set_mismatch",
            "--note",
            "a foreign card on top, taken out",
        )
        assert code == 0, error
        assert service.stop() == 0
    (cleared,) = [
        r.payload
        for r in journaled(table.journal_path, "command.clear_hold")
        if r.payload["reason"] == "deck_set_mismatch"
    ]
    assert cleared["note"] == "a foreign card on top, taken out"


def test_void_round_takes_a_reason_of_the_table_and_voids_the_round_under_way(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    """Issue 12 item 7: the only way out of an error the sensors cannot see was abandoning
    the whole shoe."""
    with (
        simulated_table(tmp_path) as table,
        running_service(table, "--betting-time", "600") as service,
    ):
        service.wait_for_notification("READY=1")
        socket = table.socket_path
        request(socket, "new-shoe", shoe_id="V1")
        request(socket, "shoe-loaded")
        request(socket, "cut-done")
        wait_until(lambda: table.status()["state"] == "betting", "round 1 open for bets")
        code, error = control(shoectl, socket, "void-round", "--reason", "bad luck")
        assert code == 2 and "is not a reason of punto-banco: use one of misdeal (" in error
        request(socket, "no-more-bets")
        wait_until(lambda: table.status()["round_no"] == 2, "round 1 dealt, round 2 open")
        code, error = control(
            shoectl, socket, "void-round", "--reason", "misdeal", "--note", "card on the floor"
        )
        assert code == 0, error
        assert service.stop() == 0
    (voided,) = [r.payload for r in journaled(table.journal_path, "round.void")]
    assert (voided["round_no"], voided["reason"]) == (1, "misdeal")
    commands = [r.payload for r in journaled(table.journal_path, "command.void_round")]
    assert commands[-1] == {"reason": "misdeal", "note": "card on the floor", "round_no": None}


def test_a_pack_of_other_decks_than_the_table_deals_holds_before_the_first_round(
    tmp_path: Path,
) -> None:
    """Issue 12 item 10: a 6-deck table dealt an 8-deck shoe for 147 rounds, voiding 94, and
    only the final reconciliation named the cause."""
    with simulated_table(tmp_path, decks=8) as table:
        table.config_path.write_text(
            table.config_path.read_text().replace("decks = 8\n", "decks = 6\n")
        )
        with running_service(table) as service:
            service.wait_for_notification("READY=1")
            request(table.socket_path, "new-shoe", shoe_id="BIG")
            request(table.socket_path, "shoe-loaded")
            request(table.socket_path, "cut-done")
            wait_until(lambda: table.status()["holds"] == ["pack_count_mismatch"], "the hold")
            status = table.status()
            assert status["round_no"] is None and status["held_state"] == "burning"
            detail = status["last_alarm"]["detail"]
            assert detail.startswith("the shoe holds 416 cards; 6 decks hold 312: load 6 decks")
            assert service.stop() == 0
    assert not journaled(table.journal_path, "round.opened")
