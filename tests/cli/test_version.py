"""`shoectl --version` names the installed package's version, through the real entry point."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

INSTALLED_SHOECTL = Path(sys.executable).parent / "shoectl"


def test_version_is_the_package_version(shoectl) -> None:
    result = shoectl("--version")

    assert result.returncode == 0, result.stderr
    assert result.stdout == f"shoectl, version {version('cardshoe')}\n"
    assert result.stderr == ""


def test_the_console_script_prints_the_same_version() -> None:
    result = subprocess.run(
        [str(INSTALLED_SHOECTL), "--version"], capture_output=True, text=True, timeout=30
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout == f"shoectl, version {version('cardshoe')}\n"
