"""The Makefile's set-up stamp: `make demo` installs only when one of SETUP_INPUTS
(pyproject.toml, the Makefile, the set-up scripts its recipe runs) is newer than the last
successful set-up. Real make, in dry-run mode, on a copy of those files."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SETUP_INPUTS = next(
    line.split(":=")[1].split()
    for line in (REPO / "Makefile").read_text().splitlines()
    if line.startswith("SETUP_INPUTS :=")
)

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """The Makefile's set-up inputs, with a .venv whose set-up finished after all of them."""
    for name in SETUP_INPUTS:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / name, tmp_path / name)
        os.utime(tmp_path / name, (1_000_000, 1_000_000))
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / ".setup-done").touch()
    os.utime(tmp_path / ".venv" / ".setup-done", (2_000_000, 2_000_000))
    return tmp_path


def dry_run(checkout: Path, target: str) -> list[str]:
    result = subprocess.run(
        ["make", "--dry-run", "--no-print-directory", target],
        cwd=checkout,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_an_up_to_date_venv_makes_demo_run_the_demo_alone(checkout) -> None:
    assert dry_run(checkout, "demo") == [
        ".venv/bin/shoectl demo --game macau-1 --decks 8 --device shoe"
    ]


def test_the_inputs_are_the_project_file_and_the_makefile() -> None:
    assert {"pyproject.toml", "Makefile"} <= set(SETUP_INPUTS)


@pytest.mark.parametrize("changed", SETUP_INPUTS)
def test_a_changed_input_reinstalls_before_the_demo(checkout, changed) -> None:
    (checkout / changed).touch()

    lines = dry_run(checkout, "demo")

    assert any("pip install" in line and "-e '.[test" in line for line in lines)
    assert lines[-2:] == [
        "touch .venv/.setup-done",
        ".venv/bin/shoectl demo --game macau-1 --decks 8 --device shoe",
    ]


def test_a_missing_venv_is_set_up(checkout) -> None:
    shutil.rmtree(checkout / ".venv")

    assert "python3 -m venv .venv" in dry_run(checkout, "venv")[0]
