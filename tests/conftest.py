"""Suite-wide fixtures: the real shoectl as a subprocess, the browser of tests/web and the pit's
tests/floor, and the leak guards every test gets."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Playwright, sync_playwright
from support.shoectl import ShoectlRunner

from cardshoe.controller.cli.sim_scheme import register_sim_scheme

# In the suite, as in shoectl, a device URL may be sim://: tests build services and links
# in process, not only through the command line that registers it.
register_sim_scheme()

# Every child the suite starts prints its threads' stacks on SIGABRT: a child stuck past its
# stop signal is then shown where it stuck (support/process_support.py).
os.environ["PYTHONFAULTHANDLER"] = "1"


@pytest.fixture
def pty_path() -> Iterator[str]:
    """A pseudo-terminal's device path, for a port that exists but speaks no protocol."""
    master, slave = os.openpty()
    yield os.ttyname(slave)
    os.close(slave)
    os.close(master)


@pytest.fixture
def shoectl() -> ShoectlRunner:
    """Run the installed shoectl in a child process, as a technician would."""

    def run(
        *args: str, timeout: float = 60, check: bool = False
    ) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "cardshoe.controller.cli", *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=check)

    return run


THREAD_GRACE_S = 2.0
"""How long a test's threads may take to notice they were told to stop."""


@pytest.fixture(autouse=True)
def no_thread_left_running() -> Iterator[None]:
    """Fail a test that leaves a thread running: every device, link and server must be closed."""
    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + THREAD_GRACE_S
    while True:
        left = [thread for thread in threading.enumerate() if thread not in before]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    assert not left, f"threads left running: {[thread.name for thread in left]}"


@pytest.fixture(autouse=True)
def logger_levels_restored() -> Iterator[None]:
    """Undo the logger levels a command run in process sets (shoectl dump quiets the drivers)."""
    manager = logging.Logger.manager
    levels = {
        name: logger.level
        for name, logger in manager.loggerDict.items()
        if isinstance(logger, logging.Logger)
    }
    yield
    for name, logger in list(manager.loggerDict.items()):
        if isinstance(logger, logging.Logger):
            logger.setLevel(levels.get(name, logging.NOTSET))


@pytest.fixture
def shared_folder() -> Iterator[Path]:
    """A folder other users can reach (pytest's tmp_path is 0700), for clients run as them."""
    folder = Path(tempfile.mkdtemp(prefix="cardshoe-shared-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


CHROMIUM = Path("/usr/lib/chromium/chromium-headless-shell")
"""Debian's headless Chromium: `playwright install` cannot download browsers here, so
Playwright launches the Debian package's binary by path; `make test` installs it first
(.ci/install-browser.sh). Without it the browser tests fail, saying how to install it: a
page nobody has seen in a browser is not tested."""


@pytest.fixture(scope="session")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="session")
def browser(playwright: Playwright) -> Iterator[Browser]:
    """One browser for the whole run, shared by the scoreboard's and the pit's tests."""
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: run 'make browser' (.ci/install-browser.sh) as root")
    launched = playwright.chromium.launch(executable_path=str(CHROMIUM))
    yield launched
    launched.close()
