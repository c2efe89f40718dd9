"""Shared fixtures: running the real shoectl as a subprocess."""

from __future__ import annotations

import subprocess
import sys

import pytest
from support.shoectl import ShoectlRunner


@pytest.fixture
def shoectl() -> ShoectlRunner:
    """Run the installed shoectl in a child process, as a technician would."""

    def run(
        *args: str, timeout: float = 60, check: bool = False
    ) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "cardshoe.controller.cli", *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=check)

    return run
