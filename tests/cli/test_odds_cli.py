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
