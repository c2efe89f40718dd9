"""Journals with whole shoes in them, dealt by the real table software (shoectl demo)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def deal_shoes(path: Path, shoes: int, rounds: int = 2) -> None:
    """Deal `shoes` short shoes, one after another, into the journal at path."""
    for _ in range(shoes):
        command = [sys.executable, "-m", "cardshoe.controller.cli", "demo", "--transport"]
        command += ["inproc", "--rounds", str(rounds), "--journal", str(path)]
        subprocess.run(command, check=True, capture_output=True, timeout=120)
