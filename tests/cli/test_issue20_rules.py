"""Issue 20: the procedure at the edges of the rule texts, each through the real `shoectl`.

Every test is named after the article it holds the table to (Macau 2007, MBS 7 Up 2011)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support.shoectl import ShoectlRunner

from cardshoe.controller.journal.store import Journal

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
