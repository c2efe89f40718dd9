"""shoectl odds, run as a technician would."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest


def odds_json(shoectl, *args: str) -> dict:
    result = shoectl("odds", *args, "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_punto_banco_8_decks_json(shoectl) -> None:
    report = odds_json(shoectl, "--game", "punto-banco", "--decks", "8")
    assert (report["game"], report["decks"], report["commission"]) == ("punto-banco", 8, "5pct")
    assert report["total"] == 4_998_398_275_503_360
    outcomes = report["outcomes"]
    assert outcomes["banker"]["count"] == 2_292_252_566_437_888
    assert outcomes["player"]["count"] == 2_230_518_282_592_256
    assert outcomes["tie"]["count"] == 475_627_426_473_216
    numerator, denominator = map(int, outcomes["tie"]["exact"].split("/"))
    assert numerator * report["total"] == 475_627_426_473_216 * denominator
    assert outcomes["tie"]["p"] == pytest.approx(475_627_426_473_216 / report["total"], rel=1e-15)
    assert {bet: round(edge * 100, 4) for bet, edge in report["house_edge"].items()} == {
        "player": 1.2351,
        "banker": 1.0579,
        "tie": 14.3596,
        "player_pair": 10.3614,
        "banker_pair": 10.3614,
    }
    assert report["house_edge_exact"]["player_pair"] == "43/415"


def test_seven_up_json_has_only_its_bets_and_the_published_player_counts(shoectl) -> None:
    report = odds_json(shoectl, "--game", "seven-up", "--decks", "6")
    assert report["total"] == 2_862_766_146_240
    assert set(report["house_edge"]) == {"player", "banker", "tie", "super_sevens"}
    assert report["returns"]["player"] == [
        {"gain": "1/1", "count": 818_970_471_360},
        {"gain": "1/2", "count": 561_338_904_384},
        {"gain": "0/1", "count": 308_245_281_984},
        {"gain": "-1/1", "count": 1_174_211_488_512},
    ]


def test_another_published_super_sevens_paytable_changes_only_that_bet(shoectl) -> None:
    mbs = odds_json(shoectl, "--game", "seven-up", "--decks", "6")
    other = odds_json(
        shoectl,
        "--game",
        "seven-up",
        "--decks",
        "6",
        "--paytable",
        "seven-up-super-sevens-2-5-17-70-700",
    )
    assert (mbs["paytable"], other["paytable"]) == (
        "seven-up-mbs-2011",
        "seven-up-super-sevens-2-5-17-70-700",
    )
    assert other["returns"]["player"] == mbs["returns"]["player"]
    counts = [row["count"] for row in mbs["returns"]["super_sevens"]]
    assert [row["count"] for row in other["returns"]["super_sevens"]] == counts
    assert [row["gain"] for row in other["returns"]["super_sevens"]] == [
        "700/1",
        "70/1",
        "17/1",
        "5/1",
        "2/1",
        "-1/1",
    ]
    expected = -sum(
        count * gain for count, gain in zip(counts, (700, 70, 17, 5, 2, -1), strict=True)
    )
    assert Fraction(other["house_edge_exact"]["super_sevens"]) == Fraction(expected, other["total"])


def test_macau_commission_option(shoectl) -> None:
    default = odds_json(shoectl, "--game", "macau-2", "--decks", "8")
    half_on_4 = odds_json(shoectl, "--game", "macau-2", "--decks", "8", "--commission", "half-on-4")
    assert (default["commission"], half_on_4["commission"]) == ("5pct-on-789", "half-on-4")
    assert default["outcomes"] == half_on_4["outcomes"]
    assert default["house_edge"]["tie"] == half_on_4["house_edge"]["tie"]
    assert default["house_edge"]["banker"] != half_on_4["house_edge"]["banker"]


def test_readable_output(shoectl) -> None:
    result = shoectl("odds", "--game", "punto-banco", "--decks", "8")
    assert result.returncode == 0, result.stderr
    assert "4,998,398,275,503,360" in result.stdout
    assert "1.0579%" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--game", "faro", "--decks", "8"], "unknown game 'faro'"),
        (["--game", "punto-banco", "--decks", "8", "--commission", "10pct"], "5pct, half-on-6"),
        (["--game", "seven-up", "--decks", "6", "--commission", "5pct"], "none"),
        (["--game", "punto-banco", "--decks", "0"], "--decks = 0 is out of range: use 1-8"),
        (["--game", "punto-banco", "--decks", "eight"], "--decks"),
        (["--game", "macau-1", "--decks", "8", "--paytable", "seven-up-mbs-2011"], "macau-2007"),
    ],
)
def test_bad_input_is_one_line_exit_2(shoectl, args: list[str], message: str) -> None:
    result = shoectl("odds", *args)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_seen_cards_price_the_remaining_shoe(shoectl) -> None:
    """Sevens out of a 7 Up shoe make the Super 7's worse; the counts say how many are left."""
    full = odds_json(shoectl, "--game", "seven-up", "--decks", "4")
    sevens_out = odds_json(
        shoectl, "--game", "seven-up", "--decks", "4", "--seen", "7S 7H,7D 7C 7S 2D"
    )
    assert (sevens_out["cards_left"], sevens_out["seen"]) == (202, 6)
    assert sevens_out["total"] == 202 * 201 * 200 * 199 * 198
    assert sevens_out["house_edge"]["super_sevens"] > full["house_edge"]["super_sevens"]


def test_readable_output_names_a_bet_the_player_has_the_edge_on(shoectl) -> None:
    no_sevens_yet = " ".join(f"{rank}{suit}" for rank in "AKQJT98" for suit in "SHDC")
    result = shoectl("odds", "--game", "seven-up", "--decks", "4", "--seen", no_sevens_yet)
    assert result.returncode == 0, result.stderr
    (super_sevens,) = [line for line in result.stdout.splitlines() if line.startswith("super_")]
    assert super_sevens.endswith("the player's edge")
    assert "180 cards left after 28 seen" in result.stdout
    full = shoectl("odds", "--game", "seven-up", "--decks", "4").stdout
    assert "the player's edge" not in full


def test_journal_gives_the_seen_cards_game_and_decks(shoectl, tmp_path) -> None:
    journal = tmp_path / "journal.sqlite"
    dealt = shoectl(
        "demo", "--journal", str(journal), "--transport", "inproc", "--seed", "3",
        "--game", "seven-up", "--decks", "4", "--rounds", "6", "--json",
    )  # fmt: skip
    assert dealt.returncode == 0, dealt.stderr
    events = [json.loads(line) for line in dealt.stdout.splitlines()]
    seen: list[str] = []
    seen_by_round: dict[int, list[str]] = {}
    for event in events:
        if event["event"] == "burn":
            seen += event["cards"]
        if event["event"] == "round":
            seen += [dealt["card"] for dealt in event["dealt"]] + event["set_aside"]
            seen_by_round[event["round"]] = list(seen)
    seen_by_3 = seen_by_round[3]
    from_journal = odds_json(shoectl, "--journal", str(journal), "--after-round", "3")
    by_hand = odds_json(
        shoectl, "--game", "seven-up", "--decks", "4", "--seen", " ".join(seen_by_3)
    )
    assert from_journal == by_hand
    assert odds_json(shoectl, "--journal", str(journal))["seen"] == len(seen)
    refused = shoectl("odds", "--journal", str(journal), "--decks", "8")
    assert refused.returncode == 2
    assert "--decks 8 disagrees with shoe" in refused.stderr
    (shoe_id,) = {event["shoe_id"] for event in events if event.get("shoe_id")}
    named = odds_json(shoectl, "--journal", str(journal), "--shoe", shoe_id)
    assert named == odds_json(shoectl, "--journal", str(journal))
    unknown = shoectl("odds", "--journal", str(journal), "--shoe", "S-none")
    assert unknown.returncode == 2
    assert f"holds no shoe 'S-none'; its latest shoes are {shoe_id}" in unknown.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--game", "punto-banco", "--decks", "1", "--seen", "AS KD AS"], "AS seen 2 times"),
        (["--game", "punto-banco", "--decks", "1", "--seen", "AS 7*"], "mandatory seven"),
        (["--game", "punto-banco", "--decks", "1", "--seen", "AS XX"], "bad card 'XX'"),
        (["--game", "punto-banco", "--decks", "8", "--shoe", "S1"], "--shoe and --after-round"),
        (["--journal", "/nonexistent/j.sqlite"], "no such journal file"),
        (["--journal", "/dev/null", "--seen", "AS"], "not both"),
    ],
)
def test_bad_seen_cards_are_one_line_exit_2(shoectl, args: list[str], message: str) -> None:
    result = shoectl("odds", *args)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1
    assert message in result.stderr
