"""The Makefile's set-up stamps: `make demo` installs only when one of SETUP_INPUTS
(pyproject.toml, the Makefile, the lock) is newer than the last successful runtime set-up,
and installs the runtime dependencies alone; `make test` adds its own set-up, with the test
extras, over it. Real make, in dry-run mode, on a copy of those files."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MAKEFILE_LINES = (REPO / "Makefile").read_text().splitlines()
SETUP_INPUTS = next(
    line.split(":=")[1].split() for line in MAKEFILE_LINES if line.startswith("SETUP_INPUTS :=")
)
LOCK = next(line.split(":=")[1].strip() for line in MAKEFILE_LINES if line.startswith("LOCK :="))
SETUP_INPUTS = [LOCK if name == "$(LOCK)" else name for name in SETUP_INPUTS]
TEST_SETUP_SCRIPTS = [".ci/install-floor.sh", ".ci/install-console.sh", ".ci/lock.sh"]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """The Makefile's set-up inputs, with a .venv whose set-up finished after all of them."""
    for name in [*SETUP_INPUTS, *TEST_SETUP_SCRIPTS]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / name, tmp_path / name)
        os.utime(tmp_path / name, (1_000_000, 1_000_000))
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    for made in ("bin/python", ".setup-done", ".test-setup-done"):
        (tmp_path / ".venv" / made).touch()
        os.utime(tmp_path / ".venv" / made, (2_000_000, 2_000_000))
    return tmp_path


def dry_run(checkout: Path, target: str) -> list[str]:
    # A make of its own, as a user types it: under `make test` the suite inherits MAKELEVEL
    # and the outer make's flags, and a nested make names itself make[1].
    own_make = {
        name: value
        for name, value in os.environ.items()
        if name not in {"MAKELEVEL", "MAKEFLAGS", "MFLAGS"}
    }
    result = subprocess.run(
        ["make", "--dry-run", "--no-print-directory", target],
        cwd=checkout,
        env=own_make,
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


def test_an_up_to_date_venv_makes_venv_install_nothing(checkout) -> None:
    assert dry_run(checkout, "venv") == ["make: Nothing to be done for 'venv'."]


def test_the_inputs_are_the_project_file_the_makefile_and_the_lock() -> None:
    assert {"pyproject.toml", "Makefile", "constraints.txt"} <= set(SETUP_INPUTS)


@pytest.mark.parametrize("changed", SETUP_INPUTS)
def test_a_changed_input_reinstalls_before_the_demo(checkout, changed) -> None:
    (checkout / changed).touch()

    lines = dry_run(checkout, "demo")

    installs = [line for line in lines if "pip install" in line]
    assert len(installs) == 1 and installs[0].endswith("--constraint constraints.txt -e .")
    assert lines[-2:] == [
        "touch .venv/.setup-done",
        ".venv/bin/shoectl demo --game macau-1 --decks 8 --device shoe",
    ]


def test_the_demo_installs_no_extra_and_nothing_from_apt(checkout) -> None:
    shutil.rmtree(checkout / ".venv")

    lines = dry_run(checkout, "demo")

    assert not any("[" in line or "apt" in line or ".ci/" in line for line in lines)
    assert lines[-1] == ".venv/bin/shoectl demo --game macau-1 --decks 8 --device shoe"


@pytest.mark.parametrize("changed", [*SETUP_INPUTS, *TEST_SETUP_SCRIPTS])
def test_a_changed_input_redoes_the_test_set_up_with_its_extras_and_the_lock_check(
    checkout, changed
) -> None:
    (checkout / changed).touch()

    lines = dry_run(checkout, "venv")

    assert any(
        line.endswith("--constraint constraints.txt -e '.[test,analysis,lock]'") for line in lines
    )
    assert "bash .ci/lock.sh --check" in lines
    assert lines[-1] == "touch .venv/.test-setup-done"


def test_a_missing_venv_is_set_up(checkout) -> None:
    shutil.rmtree(checkout / ".venv")

    assert "python3 -m venv .venv" in dry_run(checkout, "venv")[0]
