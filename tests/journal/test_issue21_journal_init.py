"""Issue 21 case 7: `shoectl journal init` killed mid-write left a schema-less wedge.

8-10 of 32 SIGKILLs inside `journal init` left a 4 KB file without a schema that
`journal init --if-missing` (what udev/install.sh runs) kept and `shoectl run`
refused. The campaign here kills the real CLI with a real SIGKILL at every write,
sync, truncate and rename it makes, one kill per run: strace's fault injection
delivers the signal at the Nth such system call, so every point is reached,
in order, whatever the machine's speed.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from cardshoe.controller.journal.store import Journal

KILLED_AT = ("pwrite64", "write", "fdatasync", "fsync", "ftruncate", "rename")
"""The system calls that change files: a kill at each of them, at every one of its calls."""

needs_strace = pytest.mark.skipif(
    shutil.which("strace") is None, reason="strace (.ci/install-floor.sh installs it)"
)


def shoectl_killed_at(folder: Path, syscall: str, nth: int, *arguments: str) -> int:
    """Run `shoectl ARGUMENTS` in folder, SIGKILLed at its nth call of syscall; the exit code
    (-SIGKILL when the kill came: strace dies of its tracee's signal; the CLI's own when it
    made fewer calls)."""
    command = [
        "strace",
        "--quiet=all",
        "--follow-forks",
        "--output=/dev/null",
        f"--trace={syscall}",
        f"--inject={syscall}:signal=KILL:when={nth}",
        sys.executable,
        "-m",
        "cardshoe.controller.cli",
        *arguments,
    ]
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=60)
    assert "Traceback" not in done.stderr
    return done.returncode


def shoectl(folder: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "cardshoe.controller.cli", *arguments]
    return subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=60)


@needs_strace
def test_issue21_case_7_journal_init_killed_at_any_write_leaves_a_whole_journal_or_none(
    tmp_path: Path,
) -> None:
    kills = 0
    for syscall in KILLED_AT:
        nth = 0
        while True:
            nth += 1
            folder = tmp_path / f"{syscall}-{nth}"
            folder.mkdir()
            (folder / "table.toml").write_text(
                'table_id = "T1"\n[device]\nkind = "shoe"\nurl = "sim://cs-1"\n'
                '[service]\njournal_path = "journal.sqlite"\n'
            )
            journal = folder / "journal.sqlite"
            code = shoectl_killed_at(
                folder, syscall, nth, "journal", "init", "--config", "table.toml"
            )
            if code != -signal.SIGKILL:
                assert code == 0
                break
            kills += 1
            survived = journal.exists()
            again = shoectl(folder, "journal", "init", "--config", "table.toml", "--if-missing")
            assert again.returncode == 0, (syscall, nth, again.stderr)
            expected = "kept the journal already there" if survived else "new journal for table T1"
            assert expected in again.stdout, (syscall, nth, again.stdout)
            with Journal.open(journal, table_id="T1") as opened:
                assert opened.verify().ok and opened.check_since_anchor().ok, (syscall, nth)
            names = sorted(path.name for path in folder.iterdir())
            assert "journal.sqlite.signing-key" in names, (syscall, nth, names)
            assert not [name for name in names if name.startswith("journal.sqlite.new")], names
    assert kills >= 40
