"""The lock, constraints.txt: PyPI releases only, pinned, and checked against pyproject.toml by
the real .ci/lock.sh with the real uv (the `lock` extra), on a copy of the three files."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LOCK = REPO / "constraints.txt"
UV = Path(sys.executable).parent / "uv"
PIN = re.compile(r"^[a-z0-9][a-z0-9._-]*==[0-9][0-9a-z.]*( ; .+)?$")


def test_every_line_of_the_lock_is_a_pypi_pin() -> None:
    lines = [line for line in LOCK.read_text().splitlines() if not line.lstrip().startswith("#")]

    assert lines and all(PIN.match(line) for line in lines), [
        line for line in lines if not PIN.match(line)
    ]
    assert not re.search(r"file:|https?:|--index|--find-links|\+", LOCK.read_text())


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    for name in ("pyproject.toml", "constraints.txt", ".ci/lock.sh"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        shutil.copy(REPO / name, tmp_path / name)
    return tmp_path


def check(checkout: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", ".ci/lock.sh", "--check", str(UV)],
        cwd=checkout,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.skipif(not UV.exists(), reason="needs uv, the `lock` extra (make test installs it)")
def test_the_lock_agrees_with_pyproject_and_a_new_dependency_breaks_that(checkout: Path) -> None:
    agreed = check(checkout)
    assert agreed.returncode == 0, agreed.stderr

    project = checkout / "pyproject.toml"
    project.write_text(project.read_text().replace('    "rich>=13.7",\n', '    "rich>=13.7",\n'
                                                   '    "tomli-w>=1.0",\n'))  # fmt: skip
    disagreed = check(checkout)

    assert disagreed.returncode == 1
    assert "+tomli-w==" in disagreed.stderr
    assert disagreed.stderr.splitlines()[-1] == (
        "lock: error: constraints.txt does not match pyproject.toml: run 'make lock' and "
        "commit constraints.txt"
    )
