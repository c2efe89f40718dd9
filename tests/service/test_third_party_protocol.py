"""A protocol family from another installed distribution deals a shoe (issue #19, item 8):
found only through its `cardshoe.protocols` entry point, in a process of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from support.session_support import assert_every_event_journaled_once
from support.session_support import rounds_as_the_rules_engine_plays_them as rounds_match
from support.tiny_dealer import CONFIG
from support.tiny_protocol import install_tiny_family

DEALER = Path(__file__).parents[1] / "support" / "tiny_dealer.py"


def test_a_family_installed_from_another_distribution_deals_a_shoe(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    install_tiny_family(site)
    journal_path = tmp_path / "journal.sqlite"
    environment = {**os.environ, "PYTHONPATH": str(site)}
    dealt = subprocess.run(
        [sys.executable, str(DEALER), str(journal_path), "19", "12"],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert dealt.returncode == 0, dealt.stderr
    ended = json.loads(dealt.stdout.splitlines()[-1])
    assert 6 <= ended["rounds"] < 12  # the cut card after 31 cards ended the shoe, not the house
    assert (ended["burned"], ended["loaded"], ended["intruders"]) == (1, 416, 0)
    assert ended["reconciled"] and ended["device_cards_dealt"] is None  # counts nothing
    rounds_match(journal_path, CONFIG)
    assert_every_event_journaled_once(journal_path)
