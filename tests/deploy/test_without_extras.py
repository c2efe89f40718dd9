"""A table PC's install: the package and its runtime dependencies from the lock, no extra.

One venv per session, made as a table PC makes it (docs/deployment.md): a clean venv with
no system site-packages, `pip install --constraint constraints.txt` of this checkout, so it
holds neither psycopg (the `floor` extra) nor matplotlib and scipy (`analysis`). Every
command that needs an extra must then say which, on one line, with exit 2, never 70.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cardshoe.controller.cli.main import EXTRA_OF_MODULE
from cardshoe.controller.errors import EXIT_BAD_INPUT

REPO = Path(__file__).resolve().parents[2]
PACKAGE_FILES = ("pyproject.toml", "README.md", "LICENSE", "controller", "drivers", "firmware_sim")
UNREACHABLE_DSN = "postgresql://floor@127.0.0.1:1/floor"


@pytest.fixture(scope="session")
def runtime_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv holding cardshoe and its runtime dependencies only, pinned by the lock."""
    folder = tmp_path_factory.mktemp("table-pc")
    source = folder / "cardshoe"
    source.mkdir()
    for name in PACKAGE_FILES:
        if (REPO / name).is_dir():
            caches = shutil.ignore_patterns("__pycache__")
            shutil.copytree(REPO / name, source / name, ignore=caches)
        else:
            shutil.copy(REPO / name, source / name)
    venv = folder / "venv"
    subprocess.run([sys._base_executable, "-m", "venv", venv], check=True, timeout=120)
    install = [venv / "bin" / "python", "-m", "pip", "install", "--quiet"]
    subprocess.run(
        [*install, "--constraint", REPO / "constraints.txt", source],
        check=True,
        capture_output=True,
        timeout=600,
    )
    return venv


def run(venv: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [venv / "bin" / "shoectl", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


def test_the_table_pc_venv_has_no_extra(runtime_venv: Path) -> None:
    for module in sorted(EXTRA_OF_MODULE):
        found = subprocess.run(
            [runtime_venv / "bin" / "python", "-c", f"import {module}"],
            capture_output=True,
            timeout=60,
        )
        assert found.returncode != 0, f"{module} is installed without its extra"


def test_the_runtime_commands_work_there(runtime_venv: Path, tmp_path: Path) -> None:
    dealt = run(runtime_venv, "demo", "--transport", "inproc", "--rounds", "3", "--seed", "4")
    assert dealt.returncode == 0, dealt.stderr
    assert ": reconciled" in dealt.stdout


@pytest.mark.parametrize(
    "args",
    [
        ("floor", "init-db", "--dsn", UNREACHABLE_DSN),
        ("floor", "status", "--dsn", UNREACHABLE_DSN),
        ("floor", "ingest", "--broker", "mqtt://127.0.0.1:1", "--dsn", UNREACHABLE_DSN),
        ("floor", "demo", "--tables", "1", "--rounds", "1"),
    ],
    ids=lambda args: " ".join(args[:2]),
)
def test_a_floor_command_names_the_floor_extra(runtime_venv: Path, args: tuple[str, ...]) -> None:
    done = run(runtime_venv, *args)

    assert done.returncode == EXIT_BAD_INPUT, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("shoectl: error: ") and "pip install 'cardshoe[floor]'" in line
    assert "Traceback" not in done.stderr


def test_the_shuffle_report_names_the_analysis_extra(runtime_venv: Path, tmp_path: Path) -> None:
    journal = tmp_path / "journal.sqlite"
    dealt = run(
        runtime_venv, "demo", "--transport", "inproc", "--seed", "8", "--journal", str(journal)
    )
    assert dealt.returncode == 0, dealt.stderr

    done = run(runtime_venv, "analyze", "shuffle", str(journal), "--report", "r.html", cwd=tmp_path)

    assert done.returncode == EXIT_BAD_INPUT, done.stderr
    (line,) = done.stderr.splitlines()
    assert "pip install 'cardshoe[analysis]'" in line
    assert not (tmp_path / "r.html").exists()
