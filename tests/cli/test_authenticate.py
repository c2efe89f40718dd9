"""shoectl authenticate: the keyed digest of the installed files, recomputed here on its own.

The digest is recomputed from the package's folders with hashlib and hmac alone, as a lab
would from docs/security.md, never through the command's own code. Changes are made to a
copy of the installed tree that the real CLI then runs from (PYTHONPATH puts the copy first),
so the repository is never edited.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.installed_package import (
    FOLDERS,
    installed_tree,
    lab_digest,
    lab_manifest,
    tree_files,
)
from support.shoectl import ShoectlRunner

SEED = "5eed0123456789abcdef"


def tree_manifest(tree: dict[str, Path]) -> bytes:
    return lab_manifest(tree_files(tree))


def test_the_answer_is_the_seeds_hmac_over_the_installed_files(shoectl: ShoectlRunner) -> None:
    answered = shoectl("authenticate", "--seed", SEED, "--json")
    assert answered.returncode == 0, answered.stderr
    answer = json.loads(answered.stdout)
    manifest = tree_manifest(installed_tree())
    assert answer["seed"] == SEED
    assert answer["digest"] == lab_digest(SEED, manifest)
    assert answer["files"] == manifest.count(b"\n")
    assert answer["version"] == "0.1.0"
    assert answer["python"] == ".".join(map(str, sys.version_info[:3]))
    assert {"click", "pyserial", "transitions"} <= set(answer["dependencies"])


def test_the_manifest_printed_is_the_one_a_lab_computes(shoectl: ShoectlRunner) -> None:
    printed = subprocess.run(
        [sys.executable, "-m", "cardshoe.controller.cli", "authenticate", "--manifest"],
        capture_output=True,
        check=True,
    ).stdout
    manifest = tree_manifest(installed_tree())
    assert printed == manifest
    assert b"controller/web/static/index.html\0" in printed
    assert b"firmware_sim/profiles.toml\0" in printed
    assert b"__pycache__" not in printed
    plain = shoectl("authenticate", "--seed", SEED)
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout.strip().endswith(f"seed {SEED} digest {lab_digest(SEED, manifest)}")


def test_a_fresh_seed_gives_a_different_answer(shoectl: ShoectlRunner) -> None:
    first = json.loads(shoectl("authenticate", "--seed", "00", "--json").stdout)
    second = json.loads(shoectl("authenticate", "--seed", "01", "--json").stdout)
    assert first["digest"] != second["digest"]


@pytest.fixture
def copied_tree(tmp_path: Path) -> Path:
    """A copy of the installed package (no byte-code caches) that Python imports first."""
    root = tmp_path / "site"
    for name, folder in installed_tree().items():
        shutil.copytree(
            folder, root / "cardshoe" / name, ignore=shutil.ignore_patterns("__pycache__")
        )
    return root


def answer_from(root: Path) -> dict[str, object]:
    """The real CLI's answer when Python imports cardshoe from root."""
    environment = {**os.environ, "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
    command = [sys.executable, "-m", "cardshoe.controller.cli", "authenticate", "--seed", SEED]
    ran = subprocess.run(
        [*command, "--json"], capture_output=True, text=True, env=environment, timeout=60
    )
    assert ran.returncode == 0, ran.stderr
    return json.loads(ran.stdout)


def test_the_answer_is_stable_while_no_file_changes(copied_tree: Path) -> None:
    copy = {name: copied_tree / "cardshoe" / name for name in FOLDERS}
    first = answer_from(copied_tree)
    assert first["digest"] == lab_digest(SEED, tree_manifest(copy))
    assert answer_from(copied_tree) == first
    installed = lab_digest(SEED, tree_manifest(installed_tree()))
    assert first["digest"] == installed


CHANGES = {
    "a module's byte": lambda root: _flip_last_byte(root / "controller/rules/drawing.py"),
    "a page file": lambda root: _flip_last_byte(root / "controller/web/static/board.css"),
    "a simulator data file": lambda root: _flip_last_byte(
        next((root / "firmware_sim").glob("*.toml"))
    ),
    "a file added": lambda root: (root / "drivers/extra.py").write_text("# added\n"),
    "a file removed": lambda root: (root / "controller/web/static/board.js").unlink(),
    "a file renamed": lambda root: (root / "drivers/errors.py").rename(root / "drivers/errors2.py"),
}


def _flip_last_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x01
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_any_change_to_an_installed_file_changes_the_answer(copied_tree: Path, change: str) -> None:
    package = copied_tree / "cardshoe"
    before = answer_from(copied_tree)
    CHANGES[change](package)
    after = answer_from(copied_tree)
    assert after["digest"] != before["digest"]
    copy = {name: package / name for name in FOLDERS}
    assert after["digest"] == lab_digest(SEED, tree_manifest(copy))


def test_byte_code_caches_are_left_out(copied_tree: Path) -> None:
    before = answer_from(copied_tree)
    cache = copied_tree / "cardshoe/controller/__pycache__"
    cache.mkdir(exist_ok=True)
    (cache / "stray.cpython-311.pyc").write_bytes(b"\0" * 16)
    assert answer_from(copied_tree)["digest"] == before["digest"]


@pytest.mark.parametrize(
    ("seed", "complaint"),
    [
        ("", "is not hex bytes"),
        ("abc", "is not hex bytes"),
        ("0x5eed", "is not hex bytes"),
        ("zz", "is not hex bytes"),
        ("ab" * 65, "give at most 64"),
    ],
)
def test_a_bad_seed_is_one_line_and_exit_2(
    shoectl: ShoectlRunner, seed: str, complaint: str
) -> None:
    refused = shoectl("authenticate", "--seed", seed)
    assert refused.returncode == 2
    assert refused.stdout == ""
    assert len(refused.stderr.splitlines()) == 1
    assert refused.stderr.startswith("shoectl: error: ")
    assert complaint in refused.stderr


def test_no_seed_and_a_manifest_with_a_seed_are_refused(shoectl: ShoectlRunner) -> None:
    missing = shoectl("authenticate")
    assert missing.returncode == 2
    assert missing.stderr.strip() == (
        "shoectl: error: give the regulator's seed with --seed HEX (or --manifest for the list)"
    )
    both = shoectl("authenticate", "--manifest", "--seed", "00")
    assert both.returncode == 2
    assert len(both.stderr.splitlines()) == 1
