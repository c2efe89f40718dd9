"""shoectl rules play, run as a technician would."""

from __future__ import annotations

import json

import pytest


def rounds(result) -> list[dict]:
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_punto_banco_rounds_as_json(shoectl) -> None:
    # Round 1: Player A+3 = 4 draws 9 (3); Banker 2+K = 2 draws on anything: 7 (9).
    # Round 2: Player 8 (natural) v Banker 4.
    played = rounds(
        shoectl(
            "rules",
            "play",
            "--game",
            "punto-banco",
            "--cards",
            "AS 2H 3D KC 9S 7H 3S 4H 5D KD",
            "--json",
        )
    )
    assert len(played) == 2
    first, second = played
    assert first["round"] == 1
    assert first["dealt"] == [
        {"card": "AS", "to": "player"},
        {"card": "2H", "to": "banker"},
        {"card": "3D", "to": "player"},
        {"card": "KC", "to": "banker"},
        {"card": "9S", "to": "player"},
        {"card": "7H", "to": "banker"},
    ]
    assert (first["player"], first["banker"]) == (["AS", "3D", "9S"], ["2H", "KC", "7H"])
    assert (first["player_total"], first["banker_total"], first["winner"]) == (3, 9, "banker")
    assert (first["natural"], first["void"]) == (False, None)
    assert (second["round"], second["winner"], second["natural"]) == (2, "player", True)


def test_seven_up_player_hand_starts_with_the_mandatory_seven(shoectl) -> None:
    (played,) = rounds(
        shoectl("rules", "play", "--game", "seven-up", "--cards", "7S 7H 7D 7C 7S", "--json")
    )
    assert played["player"] == ["7*", "7H", "7C"]
    assert [dealt["to"] for dealt in played["dealt"]] == [
        "banker",
        "player",
        "banker",
        "player",
        "banker",
    ]
    assert (played["sevens"], played["winner"]) == (6, "tie")


@pytest.mark.parametrize(
    ("game", "banker_third_first"),
    [("macau-1", True), ("macau-2", True), ("punto-banco", False)],
)
def test_macau_lower_hand_draws_first(shoectl, game: str, banker_third_first: bool) -> None:
    # Player A+2 = 3, Banker A+A = 2: Macau deals the lower hand (Banker) first.
    first = rounds(
        shoectl("rules", "play", "--game", game, "--cards", "AS AH 2D AC 9H KS", "--json")
    )[0]
    assert (first["dealt"][4]["to"] == "banker") is banker_third_first


def test_macau_method_2_tie_when_the_drawer_draws_level(shoectl) -> None:
    played = rounds(
        shoectl("rules", "play", "--game", "macau-2", "--cards", "AS 2H AD 3C 3H", "--json")
    )
    assert [
        (entry["player_total"], entry["banker_total"], entry["winner"]) for entry in played
    ] == [(5, 5, "tie")]


def test_too_few_cards_voids_the_last_round(shoectl) -> None:
    played = rounds(
        shoectl("rules", "play", "--game", "macau-1", "--cards", "4S 4H 5D 5C 2S 3H", "--json")
    )
    assert [entry["void"] for entry in played] == [None, "insufficient_cards"]
    assert played[1]["dealt"] == [{"card": "2S", "to": "player"}, {"card": "3H", "to": "banker"}]
    assert played[1]["winner"] is None


def test_cards_ending_at_a_round_boundary_make_no_void_round(shoectl) -> None:
    played = rounds(
        shoectl("rules", "play", "--game", "punto-banco", "--cards", "4S 4H 5D 5C", "--json")
    )
    assert [entry["void"] for entry in played] == [None]


def test_readable_table(shoectl) -> None:
    result = shoectl("rules", "play", "--game", "seven-up", "--cards", "AS 2H 3D KC")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["round", "player", "banker", "P", "B", "winner", "notes"]
    assert lines[1].split()[:7] == ["1", "7*", "2H", "AS", "3D", "9", "4"]
    assert "natural" in lines[1]
    assert "void: insufficient_cards" in lines[2]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--game", "punto-banco", "--cards", "AS ZZ 3D"], "bad card 'ZZ'"),
        (["--game", "seven-up", "--cards", "7* AS 3D"], "7*"),
        (["--game", "baccarat", "--cards", "AS 2H 3D KC"], "unknown game 'baccarat'"),
        (["--game", "punto-banco", "--cards", " "], "--cards is empty"),
        (["--game", "punto-banco"], "--cards"),
    ],
)
def test_bad_input_is_one_line_exit_2(shoectl, args: list[str], message: str) -> None:
    result = shoectl("rules", "play", *args)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""
