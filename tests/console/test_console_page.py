"""/console in a real Chromium at the common table-display sizes: a whole shoe dealt with the
page's buttons and one supervisor's PIN for a hold, every button at least 48 px, and the page
served to this PC's own browser only."""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, ViewportSize
from starlette.requests import Request
from support.console_support import (
    DEALER,
    DEALER_PIN,
    ME,
    SUPERVISOR,
    SUPERVISOR_PIN,
    with_console,
)
from support.service_support import (
    Table,
    assert_shoe_dealt_once,
    running_service,
    simulated_table,
    wait_until,
)
from support.session_support import journaled
from support.web_support import WebService

from cardshoe.controller.procedure.irregularities import card_of
from cardshoe.controller.web.console_page import is_loopback

REPO = Path(__file__).resolve().parents[2]
SMALL = ViewportSize(width=1024, height=600)
LARGE = ViewportSize(width=1280, height=800)
SCREENSHOT = REPO / "docs" / "console-page.png"
MIN_TOUCH_PX = 48
WAIT_MS = 30_000


def buttons_too_small(page: Page) -> list[str]:
    """The visible buttons smaller than a finger (48 px) either way."""
    return page.evaluate(
        """(least) => [...document.querySelectorAll("button")]
          .filter((b) => b.offsetParent !== null)
          .map((b) => [b.textContent, b.getBoundingClientRect()])
          .filter(([, box]) => box.width < least || box.height < least)
          .map(([text, box]) => `${text}: ${box.width}x${box.height}`)""",
        MIN_TOUCH_PX,
    )


def touch(page: Page, label: str) -> None:
    page.get_by_role("button", name=label, exact=True).click(timeout=WAIT_MS)


def fill_form(page: Page, answers: dict[str, str]) -> None:
    for name, value in answers.items():
        page.locator(f"#console-form input[name={name}]").fill(value, timeout=WAIT_MS)
    assert buttons_too_small(page) == []
    touch(page, "OK")


def says(page: Page, text: str) -> None:
    page.get_by_text(text).first.wait_for(timeout=WAIT_MS)


def held_for_a_misread(table: Table) -> bool:
    return table.status()["holds"] == ["misread_card"]


def test_a_whole_shoe_from_the_touchscreen_page_with_one_supervisor_pin(
    tmp_path: Path, browser: Browser
) -> None:
    with simulated_table(tmp_path, decks=1, inject=("unreadable-card@card=15",)) as table:
        with_console(table)
        with (
            running_service(table, betting_time=None) as service,
            WebService(table.journal_path, "--config", str(table.config_path), "--console") as web,
        ):
            service.wait_for_notification("READY=1")
            page = browser.new_page(viewport=SMALL)
            try:
                page.goto(web.url + "console")
                says(page, "Nobody is signed in")
                touch(page, "Sign in")
                fill_form(page, {"name": DEALER, "pin": "0000"})
                says(page, f"wrong name or PIN for {DEALER}: type them again")
                touch(page, "Sign in")
                fill_form(page, {"name": DEALER, "pin": DEALER_PIN})
                says(page, f"Signed in: {DEALER} (dealer)")
                for step in ("New shoe", "Shoe loaded", "Cut done"):
                    touch(page, step)
                supervised = False
                while not journaled(table.journal_path, "shoe.ended"):
                    status = table.status()
                    if held_for_a_misread(table) and not supervised:
                        says(page, "A card could not be read")
                        card = str(card_of(table.core.unread_card))
                        touch(page, "Enter card")
                        fill_form(
                            page,
                            {
                                "card": card,
                                "supervisor": SUPERVISOR,
                                "supervisor_pin": SUPERVISOR_PIN,
                            },
                        )
                        wait_until(lambda: not held_for_a_misread(table), "the hold's end")
                        supervised = True
                    elif status["state"] == "betting" and not status["holds"]:
                        assert buttons_too_small(page) == []
                        touch(page, "No more bets")
                        wait_until(
                            lambda round_no=status["round_no"]: (
                                table.status()["round_no"] != round_no
                                or table.status()["state"] != "betting"
                            ),
                            "bets closed",
                        )
                assert supervised
                page.get_by_role("button", name="New shoe", exact=True).wait_for(timeout=WAIT_MS)
                assert buttons_too_small(page) == []
                large = browser.new_page(viewport=LARGE)
                try:
                    large.goto(web.url + "console")
                    says(large, f"Signed in: {DEALER} (dealer)")
                    large.get_by_role("button", name="New shoe", exact=True).wait_for()
                    assert buttons_too_small(large) == []
                    width = large.evaluate("document.documentElement.scrollWidth")
                    assert width <= LARGE["width"]
                    large.wait_for_timeout(500)  # the roads drawn whole before the picture
                    SCREENSHOT.write_bytes(large.screenshot())
                finally:
                    large.close()
            finally:
                page.close()
            for headers in (
                {"Content-Type": "text/plain"},
                {"Content-Type": "application/json", "Origin": "http://elsewhere.example"},
            ):
                forged = urllib.request.Request(
                    web.url + "console/press",
                    data=b'{"command": "sign-out"}',
                    headers=headers,
                    method="POST",
                )
                with pytest.raises(urllib.error.HTTPError) as refused:
                    urllib.request.urlopen(forged, timeout=10)
                assert refused.value.code == 403
            assert service.stop() == 0
    (ended,) = [r.payload for r in journaled(table.journal_path, "shoe.ended")]
    assert_shoe_dealt_once(table, ended["shoe_id"])
    operators = [r.payload for r in journaled(table.journal_path, "session.operator")]
    assert {o["via"] for o in operators} == {ME}
    (entered,) = [o for o in operators if o["command"] == "command.enter_card"]
    assert (entered["user"], entered["signed_in"]) == (SUPERVISOR, DEALER)


@pytest.mark.parametrize(
    ("host", "local"),
    [("127.0.0.1", True), ("::1", True), ("10.1.2.3", False), ("testclient", False)],
)
def test_only_a_loopback_client_is_served_the_console(host: str, local: bool) -> None:
    scope = {"type": "http", "client": (host, 50000), "headers": [], "method": "GET"}
    assert is_loopback(Request(scope)) is local
