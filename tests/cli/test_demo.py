"""shoectl demo through the real CLI: whole shoes, every injected fault, every transport."""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.demo_lines import Lines, demo_json, of, only
from support.shoectl import ShoectlRunner

from cardshoe.controller.journal.store import Journal
from cardshoe.controller.rules.cards import parse_card
from cardshoe.controller.rules.games import GAME_NAMES, get_game

FEWEST_DECKS = {"punto-banco": 2, "seven-up": 4, "macau-1": 6, "macau-2": 6}
RULES_PLAY_FIELDS = (
    "round",
    "dealt",
    "player",
    "banker",
    "player_total",
    "banker_total",
    "winner",
    "natural",
    "player_pair",
    "banker_pair",
    "sevens",
    "void",
)


def played_by_the_rules_engine(game_name: str, line: dict[str, Any]) -> None:
    """The round's cards, dealt afresh through get_game(...), give the round the demo printed."""
    played = get_game(game_name).new_round()
    for dealt in line["dealt"]:
        assert played.deal(parse_card(dealt["card"])).value == dealt["to"]
    assert line["player"] == [str(card) for card in played.player]
    assert line["banker"] == [str(card) for card in played.banker]
    if line["void"] is not None:
        return
    outcome = played.outcome()
    assert (line["player_total"], line["banker_total"]) == (
        outcome.player_total,
        outcome.banker_total,
    )
    assert line["winner"] == outcome.winner.value
    marks = get_game(game_name).marks(outcome)
    assert (line["natural"], line["player_pair"], line["banker_pair"], line["sevens"]) == (
        outcome.natural,
        marks.player_pair,
        marks.banker_pair,
        marks.sevens,
    )


def same_as_rules_play(shoectl: ShoectlRunner, game: str, rounds: Lines) -> None:
    """`shoectl rules play --json` on the shoe's dealt cards prints these very rounds."""
    cards = " ".join(dealt["card"] for line in rounds for dealt in line["dealt"])
    done = shoectl("rules", "play", "--game", game, "--cards", cards, "--json")
    assert done.returncode == 0, done.stderr
    expected = [json.loads(line) for line in done.stdout.splitlines()]
    assert [{key: line[key] for key in RULES_PLAY_FIELDS} for line in rounds] == expected


@pytest.mark.parametrize("game", GAME_NAMES)
def test_a_whole_manual_shoe_of_every_game_over_a_pty(shoectl: ShoectlRunner, game: str) -> None:
    decks = FEWEST_DECKS[game]
    lines = demo_json(shoectl, "--game", game, "--decks", str(decks), "--device", "shoe")
    assert only(lines, "device")["transport"] == "pty"
    started, ended = only(lines, "shoe_started"), only(lines, "shoe_ended")
    assert (started["game"], started["cards_loaded"]) == (game, 52 * decks)
    rounds = of(lines, "round")
    for line in rounds:
        played_by_the_rules_engine(game, line)
    same_as_rules_play(shoectl, game, rounds)
    (burn,) = of(lines, "burn")
    assert (burn["reason"], len(burn["cards"])) == ("start_of_shoe", decks)
    assert only(lines, "last_round")["cause"] == "cut_card"
    assert ended["reconciled"] and ended["rounds"] == len(rounds) > 5
    assert ended["dealt"] == sum(len(line["dealt"]) for line in rounds)
    assert ended["burned"] == decks
    assert ended["dealt"] + ended["burned"] == ended["device_cards_dealt"]
    assert 52 * decks - ended["device_cards_dealt"] <= 12
    assert not of(lines, "alarm") and not of(lines, "irregularity")


@pytest.mark.parametrize("game", GAME_NAMES)
def test_a_whole_automatic_shoe_of_every_game_over_a_pty(shoectl: ShoectlRunner, game: str) -> None:
    decks = FEWEST_DECKS[game]
    lines = demo_json(shoectl, "--game", game, "--decks", str(decks), "--device", "auto")
    ended = only(lines, "shoe_ended")
    rounds = of(lines, "round")
    assert len(rounds) == ended["rounds"] == 10 * decks
    for line in rounds:
        played_by_the_rules_engine(game, line)
        assert line["settlement"] is not None
    same_as_rules_play(shoectl, game, rounds)
    assert only(lines, "shuffled")["card_count"] == 52 * decks
    returns = of(lines, "cards_returned")
    assert [line["counted"] for line in returns] == [len(line["dealt"]) for line in rounds]
    assert ended["reconciled"] and not of(lines, "burn")
    assert ended["dealt"] == ended["returned"] == sum(len(line["dealt"]) for line in rounds)
    assert ended["remaining"] == ended["loaded"] == 52 * decks


def table_records(lines: Lines) -> Lines:
    """What the table recorded beyond its rounds: irregularities, holds, alarms."""
    return [line for line in lines if line["event"] in ("irregularity", "hold", "alarm")]


def kinds(lines: Lines, event: str, key: str) -> list[Any]:
    return [line[key] for line in of(lines, event)]


def voids(lines: Lines) -> dict[int, str]:
    return {line["round"]: line["void"] for line in of(lines, "round") if line["void"]}


def settled_and_reconciled(lines: Lines) -> None:
    assert voids(lines) == {}
    assert only(lines, "shoe_ended")["reconciled"]


def nothing_on_the_table_record(lines: Lines) -> None:
    assert table_records(lines) == []
    settled_and_reconciled(lines)


def a_void_with_its_alarm(reason: str, alarm: str) -> Callable[[Lines], None]:
    def check(lines: Lines) -> None:
        assert voids(lines) == {2: reason}
        assert (2, reason, "void_round") in [
            (line["round"], line["code"], line["consequence"]) for line in of(lines, "irregularity")
        ]
        assert alarm in kinds(lines, "alarm", "kind")
        assert {1, 3} <= {line["round"] for line in of(lines, "round") if not line["void"]}

    return check


def a_hold_that_ends(reason: str) -> Callable[[Lines], None]:
    def check(lines: Lines) -> None:
        assert kinds(lines, "hold", "reason") == [reason]
        assert kinds(lines, "hold_ended", "reason") == [reason]
        settled_and_reconciled(lines)

    return check


def double_feed(lines: Lines) -> None:
    assert voids(lines) == {2: "double_feed"}
    assert len(of(lines, "round")[1]["set_aside"]) == 2
    assert only(lines, "shoe_ended")["reconciled"]


def reversed_card(lines: Lines) -> None:
    assert [
        (line["round"], line["code"], line["consequence"]) for line in table_records(lines)
    ] == [(2, "face_up_card", "record")]
    settled_and_reconciled(lines)


def face_down(lines: Lines) -> None:
    assert (2, "face_down_card", "hold") in [
        (line["round"], line["code"], line["consequence"]) for line in of(lines, "irregularity")
    ]
    a_hold_that_ends("face_down_card")(lines)


def early_cut_card(lines: Lines) -> None:
    assert only(lines, "last_round") == {
        "event": "last_round",
        "last_round": 2,
        "cause": "cut_card",
        "reason": None,
    }
    assert only(lines, "shoe_ended")["rounds"] == 2
    settled_and_reconciled(lines)


def out_of_cards(lines: Lines) -> None:
    assert voids(lines) == {2: "insufficient_cards"}
    assert only(lines, "shoe_ended")["rounds"] == 2


def counted_on_the_link(*counters: str) -> Callable[[Lines], None]:
    """The link dealt with it (and counted it); the table saw nothing."""

    def check(lines: Lines) -> None:
        nothing_on_the_table_record(lines)
        counted = only(lines, "link")["counters"]
        assert sum(counted[name] for name in counters) >= 1

    return check


def a_foreign_card_set_apart_from_the_machine(lines: Lines) -> None:
    """The foreign card voids its round and is set apart, never returned into the machine
    (Art. 7.2 returns the round's own cards): the table holds until the demo's supervisor
    confirms it is removed, no later round meets it, and the shoe reconciles."""
    assert voids(lines) == {2: "foreign_card"}
    assert "foreign_card" in kinds(lines, "alarm", "kind")
    assert kinds(lines, "hold", "reason") == ["intruder_on_table"]
    ended = only(lines, "shoe_ended")
    assert ended["reconciled"] and ended["intruders"] == 1
    assert ended["remaining"] == ended["loaded"]


def self_test_failed_at_power_up(lines: Lines) -> None:
    assert kinds(lines, "hold", "reason") == ["self_test_failed"]
    assert {"device_fault", "shoe_abandoned"} <= set(kinds(lines, "alarm", "kind"))
    assert not of(lines, "round")
    ended = only(lines, "shoe_ended")
    assert (ended["dealt"], ended["burned"], ended["reconciled"]) == (0, 0, False)


def self_test_failed_mid_shoe(lines: Lines) -> None:
    assert kinds(lines, "hold", "reason") == ["self_test_failed"]
    assert {"device_fault", "shoe_abandoned"} <= set(kinds(lines, "alarm", "kind"))
    assert voids(lines) == {2: "shoe_abandoned"}
    assert not only(lines, "shoe_ended")["reconciled"]


INJECTIONS: list[tuple[str, str, Callable[[Lines], None]]] = [
    ("shoe", "foreign-card@round=2", a_void_with_its_alarm("foreign_card", "foreign_card")),
    ("auto", "foreign-card@round=2", a_foreign_card_set_apart_from_the_machine),
    ("shoe", "duplicate-card@round=2", a_void_with_its_alarm("duplicate_card", "tamper")),
    ("shoe", "double-feed@round=2", double_feed),
    ("auto", "double-feed@round=2", double_feed),
    ("shoe", "reversed-card@round=2", reversed_card),
    ("auto", "face-down@round=2", face_down),
    ("shoe", "jam@round=2,for=0.05", a_hold_that_ends("fault.jam")),
    ("auto", "jam@round=2,for=0.05", a_hold_that_ends("fault.jam")),
    ("shoe", "door-open@round=2,for=0.05", a_hold_that_ends("fault.door_open")),
    ("shoe", "early-cut-card@round=2", early_cut_card),
    ("shoe", "out-of-cards@round=2", out_of_cards),
    ("shoe", "unplug@round=2,for=0.1", a_hold_that_ends("link_lost")),
    ("auto", "unplug@round=2,for=0.1", a_hold_that_ends("link_lost")),
    ("shoe", "corrupt-bytes@round=2", counted_on_the_link("crc_errors")),
    ("shoe", "drop-frame@round=2", nothing_on_the_table_record),
    ("shoe", "duplicate-frame@round=2", counted_on_the_link("duplicates", "retransmissions")),
    ("shoe", "delay-ack@round=2", nothing_on_the_table_record),
    ("shoe", "bad-firmware-hash", self_test_failed_at_power_up),
    ("shoe", "bad-firmware-hash@round=2", self_test_failed_mid_shoe),
]


@pytest.mark.parametrize(
    ("device", "inject", "record"), INJECTIONS, ids=[f"{d}-{i}" for d, i, _ in INJECTIONS]
)
def test_each_injected_fault_leaves_the_record_the_rules_call_for(
    shoectl: ShoectlRunner, device: str, inject: str, record: Callable[[Lines], None]
) -> None:
    lines = demo_json(
        shoectl,
        "--device",
        device,
        "--decks",
        "1",
        "--rounds",
        "4",
        "--seed",
        "3",
        "--inject",
        inject,
    )
    record(lines)
    for line in of(lines, "round"):
        played_by_the_rules_engine("punto-banco", line)


@pytest.mark.parametrize("transport", ["tcp", "usb", "inproc"])
def test_every_transport_carries_the_table(shoectl: ShoectlRunner, transport: str) -> None:
    lines = demo_json(shoectl, "--transport", transport, "--rounds", "3", "--decks", "1")
    device = only(lines, "device")
    assert device["transport"] == transport
    scheme = {"tcp": "socket://", "usb": "usb://", "inproc": "sim://"}[transport]
    assert device["url"].startswith(scheme)
    assert len(of(lines, "round")) == 3
    assert only(lines, "shoe_ended")["reconciled"]


def test_a_seed_repeats_the_shoe_card_for_card(shoectl: ShoectlRunner) -> None:
    def table_lines() -> Lines:
        lines = demo_json(shoectl, "--seed", "11", "--decks", "1", "--inject", "jam@round=2")
        return [line for line in lines if line["event"] in ("burn", "round", "hold", "last_round")]

    first = table_lines()
    assert len(of(first, "round")) > 5
    assert table_lines() == first


def test_a_kept_journal_holds_the_shoe_and_verifies(shoectl: ShoectlRunner, tmp_path: Path) -> None:
    path = tmp_path / "table.sqlite"
    lines = demo_json(shoectl, "--journal", str(path), "--decks", "1", "--rounds", "2")
    with Journal.open_readonly(path) as journal:
        assert journal.verify().ok
        results = [record.payload for record in journal.records(kinds=["round.result"])]
    assert [result["winner"] for result in results] == kinds(lines, "round", "winner")


@pytest.mark.parametrize(
    ("options", "complaint"),
    [
        (("--inject", "jam-round-2"), "bad injection"),
        (("--inject", "lightning@round=2"), "unknown fault kind"),
        (("--device", "auto", "--inject", "reversed-card@round=2"), "cannot happen"),
        (("--game", "blackjack"), "not a game"),
        (("--game", "macau-1", "--decks", "2"), "game.decks"),
        (("--transport", "carrier-pigeon"), "--transport"),
        (("--rounds", "0"), "--rounds"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(
    shoectl: ShoectlRunner, options: tuple[str, ...], complaint: str
) -> None:
    done = shoectl("demo", *options)
    assert done.returncode == 2
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("shoectl: error: ") and complaint in line


def test_off_a_terminal_it_prints_plain_lines_and_finishes(shoectl: ShoectlRunner) -> None:
    done = shoectl("demo", "--game", "macau-1", "--decks", "6", "--seed", "5")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "over pty" in lines[0]
    assert "macau-1, 6 decks, shoe" in lines[1]
    assert any(line.startswith("round 1: player ") for line in lines)
    # The watcher prices rounds beside the dealing: its alarms may follow the shoe's end.
    (ended,) = [line for line in lines if " ended after " in line]
    assert ended.endswith(": reconciled") and lines[-2].startswith("link: ")
    assert any(line.startswith("surveillance alarm ") for line in lines)
    assert lines[-1] == "seed 5: the same options with --seed 5 deal this shoe again"
    assert "\x1b[" not in done.stdout


def test_on_a_terminal_it_draws_the_live_table_to_the_end(tmp_path: Path) -> None:
    """stdout is a real pseudo-terminal: the rich view runs, and the shoe still finishes."""
    controller, terminal = os.openpty()
    command = [sys.executable, "-m", "cardshoe.controller.cli", "demo"]
    options = ["--decks", "1", "--rounds", "3", "--speed", "0"]
    child = subprocess.Popen(
        command + options,
        stdout=terminal,
        stderr=subprocess.PIPE,
        env=os.environ | {"COLUMNS": "100"},
    )
    os.close(terminal)
    screen = b""
    while True:
        readable, _, _ = select.select([controller], [], [], 60)
        assert readable, "the demo stopped drawing"
        try:
            chunk = os.read(controller, 65536)
        except OSError:
            break
        if not chunk:
            break
        screen += chunk
    os.close(controller)
    assert child.wait(timeout=60) == 0
    text = screen.decode("utf-8", "replace")
    for expected in ("Bead road", "Big road", "Last results", "reconciled", "link: "):
        assert expected in text
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)
    for row in (r"loaded\s+52\b", r"intruders\s+0\b", r"remaining\s+\d+", r"device\s+\d+ out"):
        assert re.search(row, plain), f"the last screen shows the reconciliation: {row}"


def test_a_rerun_on_a_kept_journal_resumes_a_shoe_cut_short(
    shoectl: ShoectlRunner, tmp_path: Path
) -> None:
    """SIGKILL the demo mid-shoe; the rerun picks the shoe up where the journal left it and
    deals it to a reconciled end, every card once."""
    path = tmp_path / "table.sqlite"
    command = [sys.executable, "-m", "cardshoe.controller.cli", "demo", "--json"]
    options = ["--journal", str(path), "--game", "macau-1", "--decks", "6", "--speed", "0.005"]
    first = subprocess.Popen(command + options, stdout=subprocess.PIPE, text=True)
    assert first.stdout is not None
    rounds_seen = 0
    while rounds_seen < 5:
        rounds_seen += json.loads(first.stdout.readline())["event"] == "round"
    first.kill()
    assert first.wait(timeout=30) == -9
    first.stdout.close()
    lines = demo_json(shoectl, "--journal", str(path), "--game", "macau-1", "--decks", "6")
    resumed = only(lines, "resumed")
    assert resumed["rounds_finished"] >= 5
    assert not of(lines, "shoe_started") and not table_records(lines)
    rounds = of(lines, "round")
    assert rounds[0]["round"] == resumed["rounds_finished"] + 1
    for line in rounds:
        played_by_the_rules_engine("macau-1", line)
    ended = only(lines, "shoe_ended")
    assert ended["reconciled"] and ended["rounds"] == rounds[-1]["round"]
    with Journal.open_readonly(path) as journal:
        assert journal.verify().ok
        seqs = [r.device_seq for r in journal.records() if r.kind.startswith("device.")]
        cards = [r.payload["physical_id"] for r in journal.records(kinds=["card.assigned"])]
    assert seqs == list(range(1, len(seqs) + 1))
    assert len(cards) == len(set(cards)) == ended["dealt"]
