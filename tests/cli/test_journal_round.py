"""shoectl journal round: last-game recall from a journal the real service wrote."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.service_support import running_service, simulated_table, wait_until
from support.shoectl import ShoectlRunner

from cardshoe.controller.service.control_client import request


def test_a_round_is_recalled_with_its_cards_result_settlement_commands_and_records(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    with (
        simulated_table(tmp_path) as table,
        running_service(table, "--betting-time", "600") as service,
    ):
        service.wait_for_notification("READY=1")
        socket = table.socket_path
        request(socket, "new-shoe", shoe_id="D1")
        request(socket, "shoe-loaded")
        request(socket, "cut-done")
        wait_until(lambda: table.status()["state"] == "betting", "round 1 open")
        request(socket, "no-more-bets")
        wait_until(lambda: table.status()["round_no"] == 2, "round 2 open")
        request(socket, "no-more-bets")
        wait_until(lambda: table.status()["round_no"] == 3, "round 3 open")
        request(socket, "void-round", reason="misdeal", note="card flipped")
        assert service.stop() == 0
    journal = str(table.journal_path)
    done = shoectl("journal", "round", journal, "--shoe", "D1", "--round", "1", "--json")
    assert done.returncode == 0, done.stderr
    settled = json.loads(done.stdout)
    hands = {"player": settled["player"], "banker": settled["banker"]}
    for hand, cards in hands.items():
        assert cards == [c["card"] for c in settled["cards"] if c["to"] == hand]
    assert 4 <= len(settled["cards"]) <= 6 and settled["void"] is None
    assert settled["result"]["winner"] in ("player", "banker", "tie")
    assert set(settled["settlement"]) == {"player", "banker", "tie", "player_pair", "banker_pair"}
    (closed,) = [c for c in settled["commands"] if c["kind"] == "command.close_bets"]
    assert closed["by"]["user"] == "root" and closed["by"]["role"] == "technician"
    assert settled["records"] == sorted(settled["records"]) and len(settled["records"]) > 10
    voided = json.loads(
        shoectl("journal", "round", journal, "--shoe", "D1", "--round", "2", "--json").stdout
    )
    assert (voided["void"], voided["settlement"]) == ("misdeal", None)
    # Voided within its correction window, while round 3 was open for bets: the command is
    # journaled where the table stood, with round 3's records.
    open_then = json.loads(
        shoectl("journal", "round", journal, "--shoe", "D1", "--round", "3", "--json").stdout
    )
    (void_command,) = [c for c in open_then["commands"] if c["kind"] == "command.void_round"]
    assert void_command["payload"] == {
        "reason": "misdeal",
        "note": "card flipped",
        "round_no": None,
    }
    text = shoectl("journal", "round", journal, "--shoe", "D1", "--round", "1").stdout
    assert "cards in shoe order:" in text and "settlement per unit: " in text
    assert "command.close_bets by root (uid 0, technician)" in text
    missing = shoectl("journal", "round", journal, "--shoe", "D1", "--round", "99")
    assert missing.returncode == 2
    assert missing.stderr.strip().startswith("shoectl: error: ") and "no round 99" in missing.stderr


def test_the_bets_a_tie_carried_are_recalled_with_where_they_went(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    """Seed 9, tie bets standing (Art. 11(2)): round 1 ties, its bets stand for round 2, a
    foreign card voids round 2 and returns them with it; round 3 has nothing carried."""
    journal = tmp_path / "journal.sqlite"
    config = tmp_path / "table.toml"
    config.write_text('[game]\nname = "macau-1"\ntie_bets = "stand"\n', encoding="utf-8")
    dealt = shoectl(
        *("demo", "--config", str(config), "--journal", str(journal), "--transport", "inproc"),
        *("--seed", "9", "--rounds", "3", "--inject", "foreign-card@round=2"),
    )
    assert dealt.returncode == 0, dealt.stderr
    shown = shoectl("journal", "show", str(journal), "--kind", "round.opened", "--json")
    shoe_id = json.loads(shown.stdout)[0]["shoe_id"]

    def recalled(round_no: int) -> dict[str, Any]:
        done = shoectl(
            *("journal", "round", str(journal), "--shoe", shoe_id),
            *("--round", str(round_no), "--json"),
        )
        assert done.returncode == 0, done.stderr
        return dict(json.loads(done.stdout))

    tied, voided, after = recalled(1), recalled(2), recalled(3)
    assert tied["result"]["tie_bets"] == "stand" and tied["carried_in"] is None
    carried = tied["carried_out"]
    assert (carried["into_round"], carried["option"], carried["returned"]) == (2, "stand", None)
    assert voided["void"] == "foreign_card"
    assert voided["carried_in"]["record"] == carried["record"] == voided["records"][0]
    assert (voided["carried_in"]["from_round"], voided["carried_in"]["went"]) == (1, "returned")
    assert voided["carried_in"]["went_record"] in voided["records"]
    assert voided["carried_out"] is None
    assert (after["carried_in"], after["carried_out"]) == (None, None)
    text = shoectl("journal", "round", str(journal), "--shoe", shoe_id, "--round", "2").stdout
    assert (
        f"bets carried in [{carried['record']}] from round 1 (stand): returned to the players "
        f"undecided [{voided['carried_in']['went_record']}]"
    ) in text
