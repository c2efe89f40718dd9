"""Issue 20: the procedure at the edges of the rule texts, each through the real `shoectl`.

Every test is named after the article it holds the table to (Macau 2007, MBS 7 Up 2011)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.other_users import DAEMON, NOBODY, as_user, needs_other_uids, open_to_other_users
from support.service_support import (
    control,
    open_manual_shoe,
    running_service,
    simulated_table,
    wait_until,
    with_relief_burn,
)
from support.session_support import journaled
from support.shoectl import ShoectlRunner

from cardshoe.controller.journal.store import Journal
from cardshoe.controller.service.control_client import request

Records = list[tuple[str, int | None, dict[str, Any]]]


def demo_records(
    shoectl: ShoectlRunner, tmp_path: Path, config_text: str, *options: str
) -> Records:
    """Deal a demo shoe into a fresh journal; its verified records as (kind, round, payload)."""
    config = tmp_path / "table.toml"
    config.write_text(config_text)
    journal = tmp_path / "journal.sqlite"
    done = shoectl(
        "demo",
        "--config",
        str(config),
        "--journal",
        str(journal),
        "--transport",
        "inproc",
        *options,
    )
    assert done.returncode == 0, done.stderr
    with Journal.open_readonly(journal) as opened:
        assert opened.verify().ok
        return [(record.kind, record.round_no, record.payload) for record in opened.records()]


def kinds(records: Records, *wanted: str) -> Records:
    return [record for record in records if record[0] in wanted]


STANDING_TIES = '[game]\nname = "macau-1"\ntie_bets = "stand"\n'


def test_art_11_a_tie_in_the_cut_card_round_returns_the_standing_bets(
    shoectl: ShoectlRunner, tmp_path: Path
) -> None:
    """Seed 0: round 79 is the cut card's round and ties. Its bets used to be carried into a
    round 80 that never came; no round may follow the last (Art. 3.1), so they are returned."""
    records = demo_records(shoectl, tmp_path, STANDING_TIES, "--seed", "0")
    (ended,) = [payload for kind, _, payload in records if kind == "shoe.ended"]
    assert ended["rounds"] == 79
    ends = kinds(records, "round.bets_carried", "round.carried_bets_returned")
    assert ends[-1] == (
        "round.carried_bets_returned",
        79,
        {"round_no": 79, "reason": "no_round_follows", "voided_round": None},
    )
    carried_into = [payload["into_round"] for kind, _, payload in ends if kind.endswith("carried")]
    assert all(into <= 79 for into in carried_into)


def test_art_11_a_tie_in_the_house_s_last_round_returns_the_standing_bets(
    shoectl: ShoectlRunner, tmp_path: Path
) -> None:
    """Seed 7, the house ending the shoe after round 13, which ties."""
    records = demo_records(shoectl, tmp_path, STANDING_TIES, "--seed", "7", "--rounds", "13")
    assert kinds(records, "round.bets_carried", "round.carried_bets_returned") == [
        (
            "round.carried_bets_returned",
            13,
            {"round_no": 13, "reason": "no_round_follows", "voided_round": None},
        )
    ]


def test_art_11_bets_carried_into_a_void_round_are_returned_with_it(
    shoectl: ShoectlRunner, tmp_path: Path
) -> None:
    """Seed 7: round 13 ties and a foreign card voids round 14, where its bets stood."""
    records = demo_records(
        shoectl, tmp_path, STANDING_TIES, "--seed", "7", "--inject", "foreign-card@round=14"
    )
    about_14 = [
        (kind, payload)
        for kind, round_no, payload in records
        if round_no == 14 and kind in ("round.void", "round.carried_bets_returned")
    ]
    assert [kind for kind, _ in about_14] == ["round.void", "round.carried_bets_returned"]
    assert about_14[1][1] == {"round_no": 13, "reason": "round_void", "voided_round": 14}


def test_art_10_void_round_after_a_round_s_last_card_voids_that_round(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    """ "该局取消作废": that round is cancelled. After round 1's last card the void used to
    cancel round 2, open for bets with no card dealt, and let round 1 stand."""
    with (
        simulated_table(tmp_path, game="macau-1") as table,
        running_service(table, "--betting-time", "600") as service,
    ):
        service.wait_for_notification("READY=1")
        socket = table.socket_path
        open_manual_shoe(table, "A10")
        wait_until(lambda: table.status()["state"] == "betting", "round 1 open for bets")
        code, error = control(shoectl, socket, "void-round", "--reason", "misdeal")
        assert code == 2 and "round 1 has no card dealt yet" in error, error
        request(socket, "no-more-bets")
        wait_until(lambda: table.status()["round_no"] == 2, "round 1 dealt, round 2 open")
        code, error = control(
            shoectl, socket, "void-round", "--round", "2", "--reason", "draw_against_rules"
        )
        assert code == 2 and "the round that may be voided now is 1" in error, error
        code, error = control(shoectl, socket, "void-round", "--reason", "draw_against_rules")
        assert code == 0, error
        code, error = control(shoectl, socket, "void-round", "--round", "1", "--reason", "misdeal")
        assert code == 2 and "round 2 has no card dealt yet" in error, error
        assert table.status()["round_no"] == 2
        assert service.stop() == 0
    (voided,) = [r.payload for r in journaled(table.journal_path, "round.void")]
    (result,) = [r.payload for r in journaled(table.journal_path, "round.result")]
    assert (voided["round_no"], voided["reason"]) == (1, "draw_against_rules")
    assert sorted(voided["cards"]) == sorted([*result["player"], *result["banker"]])


def test_art_2_2_a_misdeal_in_a_demonstration_round_before_any_card_is_refused(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    with simulated_table(tmp_path, game="macau-1") as table:
        config = table.config_path.read_text()
        table.config_path.write_text(config.replace("decks = 8\n", "decks = 8\ndemo_rounds = 1\n"))
        with running_service(table, "--betting-time", "600") as service:
            service.wait_for_notification("READY=1")
            open_manual_shoe(table, "DEMO")
            wait_until(lambda: table.status()["state"] == "betting", "demonstration round 1")
            code, error = control(shoectl, table.socket_path, "void-round", "--reason", "misdeal")
            assert code == 2 and "round 1 has no card dealt yet" in error, error
            assert service.stop() == 0
    assert journaled(table.journal_path, "round.void") == []
    (refused,) = [r.payload for r in journaled(table.journal_path, "command.refused")]
    assert refused["command"] == "void-round"


def test_7_up_5_a_table_offers_only_its_own_text_s_void_reasons(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    """7 Up 5.2-5.4's reasons used to be accepted on Macau tables, and Macau's on 7 Up."""
    with (
        simulated_table(tmp_path, game="macau-1") as table,
        running_service(table, "--betting-time", "600") as service,
    ):
        service.wait_for_notification("READY=1")
        open_manual_shoe(table, "TEXT")
        wait_until(lambda: table.status()["state"] == "betting", "round 1 open for bets")
        request(table.socket_path, "no-more-bets")
        wait_until(lambda: table.status()["round_no"] == 2, "round 1 dealt")
        for seven_up_only in ("cards_drawn_together", "player_hand_not_reconstructable"):
            code, error = control(
                shoectl, table.socket_path, "void-round", "--reason", seven_up_only
            )
            assert code == 2 and "is not a reason of macau-1: use one of misdeal" in error
            offered = error.split("use one of")[1]
            assert "7 Up 5.2" not in offered and "cards_drawn_together" not in offered
        assert service.stop() == 0
    assert journaled(table.journal_path, "round.void") == []


FIRST_CARD_BURN = '[game]\nname = "macau-1"\n[shoe]\nburn = "first-card"\n'


@pytest.mark.parametrize(
    ("fault", "correction"), [("misread-card", "reread"), ("unreadable-card", "entered")]
)
def test_art_2_1_an_unread_first_card_still_decides_the_first_card_burn(
    shoectl: ShoectlRunner, tmp_path: Path, fault: str, correction: str
) -> None:
    """Seed 15: the first card is KS, so the burn takes 11 cards. Unread, it used to take 8
    (one a deck); Art. 18 binds the table to the approved option, so it holds for the card."""
    records = demo_records(
        shoectl,
        tmp_path,
        FIRST_CARD_BURN,
        "--seed",
        "15",
        "--rounds",
        "1",
        "--inject",
        f"{fault}@card=1",
    )
    burns = [payload for kind, _, payload in records if kind == "card.burned"]
    assert len(burns) == 11 and burns[0]["card"] is None
    assert [payload["burn_remaining"] for payload in burns[1:]] == list(range(9, -1, -1))
    (corrected,) = [p for kind, _, p in records if kind == "shoe.first_card_corrected"]
    assert (corrected["card"], corrected["correction"], corrected["burn_total"]) == (
        "KS",
        correction,
        11,
    )
    holds = [p["reason"] for kind, _, p in records if kind == "hold.started"]
    assert holds == ["misread_card"]
    (ended,) = [payload for kind, _, payload in records if kind == "shoe.ended"]
    assert ended["reconciled"] and ended["burned"] == 11


def test_7_up_5_1_a_foreign_first_card_does_not_become_the_pack_s_deck_set(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    """Seed 5, 6 decks, no --deck-set: the foreign 9D came out first and was adopted as the
    pack's set, so every genuine card after it was foreign and rounds 1-3 were void."""
    with (
        simulated_table(
            tmp_path, seed=5, decks=6, game="macau-1", inject=("foreign-card@card=1",)
        ) as table,
        running_service(table, "--betting-time", "600") as service,
    ):
        service.wait_for_notification("READY=1")
        socket = table.socket_path
        open_manual_shoe(table, "FIRST")
        wait_until(lambda: table.status()["holds"] == ["deck_set_mismatch"], "the hold")
        code, error = control(shoectl, socket, "clear-hold")
        assert (code, error) == (
            2,
            "shoectl: error: clear-hold needs a hold: --reason deck_set_mismatch",
        )
        code, error = control(shoectl, socket, "clear-hold", "--reason", "deck_set_mismatch")
        assert code == 0, error
        for round_no in (1, 2, 3):
            wait_until(lambda: table.status()["state"] == "betting", f"round {round_no} open")
            request(socket, "no-more-bets")
            next_round = round_no + 1
            wait_until(lambda n=next_round: table.status()["round_no"] == n, f"round {round_no}")
        assert service.stop() == 0
    (adopted,) = [r.payload for r in journaled(table.journal_path, "shoe.deck_set")]
    assert adopted == {"deck_set": "0x00BC614E"}
    assert journaled(table.journal_path, "round.void") == []
    assert len(journaled(table.journal_path, "round.result")) == 3
    found = [r.payload for r in journaled(table.journal_path, "irregularity")]
    assert [(f["code"], f["card"], f["consequence"]) for f in found] == [
        ("foreign_card", "9D", "burn")
    ]


def test_refusals_offer_only_what_the_pack_count_hold_accepts(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    """An 8-deck pack at a 6-deck table holds (pack_count_mismatch); a refusal's "possible
    now" used to offer void-round, enter-card and confirm-face-up, none of which applies."""
    with simulated_table(tmp_path, decks=8, game="macau-1") as table:
        config = table.config_path.read_text()
        table.config_path.write_text(config.replace("decks = 8\n", "decks = 6\n"))
        with running_service(table) as service:
            service.wait_for_notification("READY=1")
            socket = table.socket_path
            code, error = control(shoectl, socket, "clear-hold")
            assert (code, error) == (
                2,
                "shoectl: error: clear-hold needs a hold (--reason), and no hold a person "
                "clears is active",
            )
            open_manual_shoe(table, "PACK")
            wait_until(lambda: "pack_count_mismatch" in table.status()["holds"], "the hold")
            code, error = control(shoectl, socket, "confirm-face-up")
            assert code == 2 and error.endswith("(possible now: abandon-shoe, clear-hold)"), error
            assert service.stop() == 0


@needs_other_uids
def test_relief_burn_still_due_when_the_shoe_ends_is_journaled(shared_folder: Path) -> None:
    """game.relief_burn = 1: daemon relieves nobody while round 1's bets are open, and the
    house ends the shoe there. The burn due used to vanish with the shoe, unrecorded."""
    with simulated_table(shared_folder) as table:
        with_relief_burn(table)
        with running_service(table, "--betting-time", "600") as service:
            service.wait_for_notification("READY=1")
            socket = table.socket_path
            open_to_other_users(socket)
            open_manual_shoe(table, "RELIEF")
            assert as_user(NOBODY, socket, "control", "sign-in").returncode == 0
            wait_until(lambda: table.status()["state"] == "betting", "round 1 open for bets")
            assert as_user(DAEMON, socket, "control", "sign-in").returncode == 0
            assert as_user(0, socket, "control", "end-shoe").returncode == 0
            wait_until(lambda: table.status()["state"] == "idle", "the shoe reconciled")
            assert service.stop() == 0
    with Journal.open_readonly(table.journal_path) as journal:
        wanted = ["shoe.relief_burn_due", "shoe.relief_burn_dropped", "shoe.ended"]
        kinds_seen = [record.kind for record in journal.records(kinds=wanted)]
    assert kinds_seen == ["shoe.relief_burn_due", "shoe.relief_burn_dropped", "shoe.ended"]
    (dropped,) = [r.payload for r in journaled(table.journal_path, "shoe.relief_burn_dropped")]
    assert dropped == {"cards": 1}


def test_7_up_5_1_and_art_7_2_the_machine_never_takes_an_intruder_back(
    shoectl: ShoectlRunner, tmp_path: Path
) -> None:
    """Seed 7: the foreign JD of round 2 used to be counted among the returned cards, dealt
    again in round 61 (void again) and the shoe ended unreconciled with 2 intruders."""
    records = demo_records(
        shoectl,
        tmp_path,
        '[game]\nname = "macau-1"\n[device]\nkind = "auto"\n',
        "--seed",
        "7",
        "--rounds",
        "80",
        "--inject",
        "foreign-card@round=2",
    )
    voids = [(p["round_no"], p["reason"]) for kind, _, p in records if kind == "round.void"]
    assert voids == [(2, "foreign_card")]
    holds = [(kind, p["reason"]) for kind, _, p in records if kind.startswith("hold.")]
    assert holds == [("hold.started", "intruder_on_table"), ("hold.ended", "intruder_on_table")]
    returns = [p for kind, _, p in records if kind == "round.cards_returned"]
    # Round 2's only card out was the intruder, set apart: nothing of it went back in.
    assert len(returns) == 79 and all(p["expected"] == p["counted"] for p in returns)
    (ended,) = [payload for kind, _, payload in records if kind == "shoe.ended"]
    assert (ended["rounds"], ended["intruders"], ended["reconciled"]) == (80, 1, True)
    assert ended["dealt"] - ended["returned"] == 1


def test_art_18_commission_rounding_is_an_approved_option_in_the_fingerprint(
    shoectl: ShoectlRunner, tmp_path: Path
) -> None:
    """Flooring winnings to the minor unit is in neither text: it used to be hard-coded."""
    fingerprints = {}
    for rounding in ("floor", "half-up"):
        folder = tmp_path / rounding
        folder.mkdir()
        config = f'[game]\nname = "macau-1"\ncommission_rounding = "{rounding}"\n'
        records = demo_records(shoectl, folder, config, "--seed", "3", "--rounds", "1")
        (started,) = [payload for kind, _, payload in records if kind == "shoe.started"]
        assert started["options"]["commission_rounding"] == rounding
        fingerprints[rounding] = started["fingerprint"]
    assert fingerprints["floor"] != fingerprints["half-up"]
    bad = tmp_path / "bad.toml"
    bad.write_text('[game]\nname = "macau-1"\ncommission_rounding = "up"\n')
    done = shoectl("demo", "--config", str(bad), "--transport", "inproc")
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert line.startswith("shoectl: error: ") and line.endswith(
        'game.commission_rounding = "up" is not an option of macau-1: use "floor" | "half-up"'
    )
