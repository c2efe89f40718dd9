"""Art. 11's tie options and Art. 18's fingerprint, through the real CLI and service."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support.service_support import open_manual_shoe, running_service, simulated_table, wait_until
from support.shoectl import ShoectlRunner

from cardshoe.controller.config import GameConfig, TableConfig
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.rules.ties import TIE_RULES, TieOption


def demo_journal(shoectl: ShoectlRunner, tmp_path: Path, tie_bets: str) -> list[tuple[str, dict]]:
    config = tmp_path / f"{tie_bets}.toml"
    config.write_text(f'[game]\nname = "macau-1"\ndecks = 6\ntie_bets = "{tie_bets}"\n')
    journal = tmp_path / f"{tie_bets}.sqlite"
    done = shoectl(
        "demo", "--config", str(config), "--journal", str(journal), "--seed", "4", "--json"
    )
    assert done.returncode == 0, done.stderr
    with Journal.open_readonly(journal) as opened:
        assert opened.verify().ok
        kinds = ["round.result", "round.bets_carried", "shoe.started"]
        return [(record.kind, record.payload) for record in opened.records(kinds=kinds)]


@pytest.mark.parametrize("option", list(TieOption))
def test_case_8_the_tie_option_is_carried_into_the_round_record(
    shoectl: ShoectlRunner, tmp_path: Path, option: TieOption
) -> None:
    """Ties used to be a hard-coded push with nothing recorded about the bets."""
    records = demo_journal(shoectl, tmp_path, str(option))
    (started,) = [payload for kind, payload in records if kind == "shoe.started"]
    assert started["options"]["tie_bets"] == str(option)
    results = [payload for kind, payload in records if kind == "round.result"]
    carried = [payload for kind, payload in records if kind == "round.bets_carried"]
    ties = [result for result in results if result["winner"] == "tie" and not result["demo"]]
    assert ties, "seed 4 deals at least one tie"
    assert all(result["tie_bets"] == str(option) for result in ties)
    assert all(r["tie_bets"] is None for r in results if r["winner"] != "tie")
    assert all(tie["settlement"]["player"] == tie["settlement"]["banker"] == "0" for tie in ties)
    expected = [
        {"round_no": tie["round_no"], "into_round": tie["round_no"] + 1, "option": str(option)}
        for tie in ties
    ]
    assert carried == (expected if TIE_RULES[option].carried else [])


def test_a_game_offers_only_its_own_tie_options(tmp_path: Path, shoectl: ShoectlRunner) -> None:
    config = tmp_path / "table.toml"
    config.write_text('[game]\nname = "seven-up"\ndecks = 8\ntie_bets = "stand"\n')
    done = shoectl("demo", "--config", str(config), "--transport", "inproc")
    assert done.returncode == 2
    assert 'game.tie_bets = "stand" is not an option of seven-up: use "cancel"' in done.stderr


def test_case_9_every_art_18_option_is_in_the_fingerprint() -> None:
    base = TableConfig(game=GameConfig(name="macau-1", decks=8))
    options = base.fingerprint_options()
    assert {"burn", "demo_rounds", "cut_card", "device_kind", "drawing", "tie_bets"} <= set(options)
    assert {"paytable", "commission", "round_burn", "relief_burn"} <= set(options)
    stand = TableConfig(game=GameConfig(name="macau-1", decks=8, tie_bets="stand"))
    method_2 = TableConfig(game=GameConfig(name="macau-2", decks=8))
    assert len({base.fingerprint, stand.fingerprint, method_2.fingerprint}) == 3


def test_case_9_status_shows_the_fingerprint_and_a_change_mid_shoe_is_refused(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    with simulated_table(tmp_path, game="macau-1", decks=6) as table:
        with running_service(table) as service:
            service.wait_for_notification("READY=1")
            open_manual_shoe(table, "OPT-1")
            wait_until(lambda: table.status()["rounds_finished"] >= 1, "a round")
            status = json.loads(
                shoectl("status", "--socket", str(table.socket_path), "--json").stdout
            )
            assert status["fingerprint"] == table.config().fingerprint
            assert status["options"]["tie_bets"] == "cancel"
            text = shoectl("status", "--socket", str(table.socket_path)).stdout
            assert re.search(rf"^options +{status['fingerprint'][:12]} \(decks 6", text, re.M)
            assert "relief_burn 0" in text
            assert service.stop() == 0
        started = table.config_path.read_text()
        for option in ('tie_bets = "stand"', "relief_burn = 1"):
            table.config_path.write_text(started.replace("decks = 6\n", f"decks = 6\n{option}\n"))
            refused = shoectl("run", "--config", str(table.config_path))
            assert refused.returncode == 2, option
            (line,) = refused.stderr.splitlines()
            assert "the game options changed while shoe OPT-1 is open" in line, option
