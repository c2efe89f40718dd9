"""A program in a real terminal: tmux on its own server socket, keys sent, the screen read.

Each TmuxTerminal starts a private tmux server (-S in the test's folder), so tests never
meet the user's tmux or each other's, and kills it on the way out.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

TERMINAL_ENVIRONMENT = {
    key: value for key, value in os.environ.items() if key not in ("COLUMNS", "LINES", "TMUX")
}
"""The program sizes itself by the terminal, not by a COLUMNS or LINES the test runner set."""
WAIT_S = 30.0
"""The longest a screen is waited for; reached only when something is broken."""


class TmuxTerminal:
    def __init__(self, socket: Path) -> None:
        self.socket = socket

    def _tmux(self, *arguments: str) -> str:
        done = subprocess.run(
            ["tmux", "-S", str(self.socket), "-f", "/dev/null", *arguments],
            env=TERMINAL_ENVIRONMENT,
            capture_output=True,
            text=True,
            timeout=WAIT_S,
            check=True,
        )
        return done.stdout

    def type(self, text: str) -> None:
        """Type text literally, key by key."""
        self._tmux("send-keys", "-t", "console", "-l", text)

    def press(self, *keys: str) -> None:
        """Press named keys: Enter, Escape, BSpace..."""
        self._tmux("send-keys", "-t", "console", *keys)

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "console")

    def wait_for(self, *texts: str, gone: str | None = None, timeout: float = WAIT_S) -> str:
        """The screen once it shows every one of texts (and no longer shows gone)."""
        deadline = time.monotonic() + timeout
        while True:
            shown = self.screen()
            if all(text in shown for text in texts) and (gone is None or gone not in shown):
                return shown
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"the screen never showed {texts} without {gone!r}; it shows:\n{shown}"
                )
            time.sleep(0.05)


@contextmanager
def tmux_running(
    folder: Path, command: Sequence[str], width: int = 160, height: int = 60
) -> Iterator[TmuxTerminal]:
    """command in a detached tmux session of width x height, until the block ends."""
    if shutil.which("tmux") is None:
        pytest.fail("tmux is missing: run 'make venv' as root (.ci/install-console.sh)")
    terminal = TmuxTerminal(folder / "tmux.sock")
    terminal._tmux(
        "new-session",
        "-d",
        "-s",
        "console",
        "-x",
        str(width),
        "-y",
        str(height),
        shlex.join(command),
    )
    try:
        terminal._tmux("set-option", "-t", "console", "remain-on-exit", "on")
        yield terminal
    finally:
        subprocess.run(["tmux", "-S", str(terminal.socket), "kill-server"], capture_output=True)
