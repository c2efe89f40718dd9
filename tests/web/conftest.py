"""The browser for tests/web: Debian's headless Chromium, driven by Playwright from PyPI.

`playwright install` cannot download browsers here, so Playwright launches
the Debian package's binary by path; `make test` installs it first
(.ci/install-browser.sh). Without it the browser tests fail, saying how to
install it: a scoreboard nobody has seen in a browser is not tested.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Playwright, sync_playwright

CHROMIUM = Path("/usr/lib/chromium/chromium-headless-shell")


@pytest.fixture(scope="session")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="session")
def browser(playwright: Playwright) -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: run 'make browser' (.ci/install-browser.sh) as root")
    launched = playwright.chromium.launch(executable_path=str(CHROMIUM))
    yield launched
    launched.close()
