"""The scoreboard page in a real browser, served by the real `shoectl web`, fed by a journal
that a table session on the simulated shoe is writing while the page watches.

The dealer pauses at the end of every round (run_shoe's on_step runs in the
dealing loop), so the journal holds still while the page is read: its cells,
taken from the DOM, must then equal /board.json, and its bead road must hold
one cell per settled round.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, ViewportSize
from support.service_support import wait_until
from support.session_support import SIM_DECK_SET, session_on, simulated_device, table_config
from support.web_support import WebService

from cardshoe.controller.journal.store import Journal
from cardshoe.controller.service.session import TableSession

REPO = Path(__file__).resolve().parents[2]
SCREENSHOT = REPO / "docs" / "scoreboard.png"
FULL_HD = ViewportSize(width=1920, height=1080)
HD = ViewportSize(width=1280, height=720)
ROADS = ("bead", "big", "big_eye", "small", "cockroach")
CATCH_UP_S = 15.0

READ_PAGE = """() => {
  const flag = (value) => value === "true";
  const cells = (id) => [...document.querySelectorAll("#" + id + " .cell")];
  const place = (n) => ({col: Number(n.dataset.col), row: Number(n.dataset.row)});
  const marks = (n) => ({player_pair: flag(n.dataset.playerPair),
    banker_pair: flag(n.dataset.bankerPair), natural: flag(n.dataset.natural)});
  const derived = (id) => cells(id).map((n) => ({...place(n), colour: n.dataset.colour}));
  const number = (id) => Number(document.getElementById(id).textContent);
  const ask = (winner) => Object.fromEntries([...document.querySelectorAll(
    "#ask-" + winner + " .mark")].map((n) => [n.dataset.road, n.dataset.colour || null]));
  return {
    bead: cells("bead").map((n) => ({...place(n), winner: n.dataset.winner, ...marks(n)})),
    big: cells("big").map((n) => ({...place(n), winner: n.dataset.winner,
      ties: Number(n.dataset.ties), ...marks(n)})),
    big_eye: derived("big_eye"), small: derived("small"), cockroach: derived("cockroach"),
    stats: {banker: number("stat-banker"), player: number("stat-player"),
      tie: number("stat-tie"), player_pair: number("stat-player-pair"),
      banker_pair: number("stat-banker-pair"), natural: number("stat-natural")},
    ask: {banker: ask("banker"), player: ask("player")},
    shoe_id: document.getElementById("shoe-id").textContent,
    cards_left: document.getElementById("cards-left").textContent,
  };
}"""

FITS = """() => {
  const inside = (inner, outer) => inner.left >= outer.left - 1 && inner.right <= outer.right + 1
    && inner.top >= outer.top - 1 && inner.bottom <= outer.bottom + 1;
  const view = {left: 0, top: 0, right: innerWidth, bottom: innerHeight};
  const outside = [];
  for (const road of document.querySelectorAll(".road")) {
    const box = road.getBoundingClientRect();
    if (!inside(box, view)) outside.push(road.id);
    for (const cell of road.querySelectorAll(".cell")) {
      if (!inside(cell.getBoundingClientRect(), box)) outside.push(road.id + " cell");
    }
  }
  const page = document.documentElement;
  return {outside, scrolls: page.scrollHeight > innerHeight || page.scrollWidth > innerWidth};
}"""


class JournalWatch:
    """What the journal the session writes holds now: its last id and settled rounds."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self.ids: list[int] = []
        self.settled = 0

    def refresh(self) -> int:
        after = self.ids[-1] if self.ids else 0
        self.kinds: list[str] = []
        """The kinds of the records this refresh found."""
        for record in self.journal.records(after_id=after):
            self.ids.append(record.id)
            self.kinds.append(record.kind)
            if record.kind == "round.result" and not record.payload["demo"]:
                self.settled += 1
        return self.ids[-1]


def page_caught_up(page: Page, web: WebService, last_id: int) -> dict[str, Any]:
    """Once the service and the page both stand at last_id: what /board.json says."""
    wait_until(
        lambda: web.board()["record_id"] == last_id, f"/board.json at record {last_id}", CATCH_UP_S
    )
    page.wait_for_function(
        f"window.cardshoe.board !== null && window.cardshoe.board.record_id === {last_id}",
        timeout=CATCH_UP_S * 1000,
    )
    return web.board()


def assert_page_shows(page: Page, board: dict[str, Any], settled: int) -> None:
    shown = page.evaluate(READ_PAGE)
    for road in ROADS:
        assert shown[road] == board[road], road
    stats = {key: value for key, value in board["stats"].items() if key != "super_sevens"}
    assert shown["stats"] == stats
    assert shown["ask"] == board["ask"]
    assert shown["shoe_id"] == board["shoe_id"]
    assert shown["cards_left"] == str(board["table"]["cards_left"])
    assert len(shown["bead"]) == settled == board["rounds"]


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    opened = browser.new_page(viewport=FULL_HD)
    yield opened
    opened.close()


def on_each_round(session: TableSession, check: Callable[[int], None]) -> Callable[[], None]:
    """An on_step calling check(rounds finished) once whenever a round has just finished
    (the count goes back to 0 when the shoe ends: the caller checks the end itself)."""
    seen = [0]

    def step() -> None:
        finished = session.snapshot().rounds_finished
        if finished > seen[0]:
            seen[0] = finished
            check(finished)

    return step


def test_the_page_equals_board_json_after_every_round(tmp_path: Path, page: Page) -> None:
    path = tmp_path / "journal.sqlite"
    config = table_config(decks=1)
    checked: list[int] = []
    with session_on(config, simulated_device(config, seed=4), path) as (session, _):
        watch = JournalWatch(session.journal)
        with WebService(path) as web:
            page.goto(web.url)
            page.wait_for_function("window.cardshoe.renders > 0")

            def check(finished: int) -> None:
                session.wait_for_surveillance()
                last_id = watch.refresh()
                assert_page_shows(page, page_caught_up(page, web, last_id), watch.settled)
                checked.append(finished)

            ended = session.run_shoe(deck_set=SIM_DECK_SET, on_step=on_each_round(session, check))
            board = page_caught_up(page, web, watch.refresh())
            assert_page_shows(page, board, watch.settled)
    assert ended is not None and ended.reconciled
    assert checked == list(range(1, len(checked) + 1)) and len(checked) >= 5


def test_holds_alarms_and_voids_show_as_a_banner(tmp_path: Path, page: Page) -> None:
    """A jam holds the table in round 2 (the simulator clears it); a foreign card in round 4
    raises an alarm and voids the round. The banner says each while it stands, the void
    until the next round's cards come; none is left once the shoe has ended."""
    path = tmp_path / "journal.sqlite"
    config = table_config(decks=1)
    core = simulated_device(config, seed=4, inject=("jam@round=2", "foreign-card@round=4"))
    banners: dict[str, list[str]] = {}
    with session_on(config, core, path) as (session, _):
        watch = JournalWatch(session.journal)
        with WebService(path) as web:
            page.goto(web.url)
            page.wait_for_function("window.cardshoe.renders > 0")

            def look() -> None:
                last_id = watch.refresh()
                shown = {"hold.started", "alarm", "round.void"} & set(watch.kinds)
                if shown:
                    page_caught_up(page, web, last_id)
                    lines = page.locator("#banner:visible .banner-line").all_inner_texts()
                    for kind in shown:
                        banners.setdefault(kind, lines)

            session.run_shoe(deck_set=SIM_DECK_SET, rounds=5, on_step=look)
            board = page_caught_up(page, web, watch.refresh())
            ended_banner = page.is_visible("#banner")
    assert banners["hold.started"] == ["HELD 暫停 · fault.jam"]
    assert banners["alarm"] == banners["round.void"]
    assert banners["alarm"] == ["ALARM 警報 · foreign_card", "ROUND 4 VOID 無效 · foreign_card"]
    assert board["table"]["voids"] == 1 and not ended_banner


def test_a_restarted_service_mid_shoe_leaves_the_page_with_every_record_once(
    tmp_path: Path, page: Page
) -> None:
    path = tmp_path / "journal.sqlite"
    config = table_config(decks=2)
    outage: list[int] = []
    with session_on(config, simulated_device(config, seed=8), path) as (session, _):
        watch = JournalWatch(session.journal)
        web = WebService(path)
        web.start()
        try:
            page.goto(web.url)
            page.wait_for_function("window.cardshoe.renders > 0")

            def restart_around_rounds(finished: int) -> None:
                if finished == 3:
                    page_caught_up(page, web, watch.refresh())
                    web.stop()
                    outage.append(watch.refresh())
                elif finished == 7:
                    outage.append(watch.refresh())
                    web.start()

            step = on_each_round(session, restart_around_rounds)
            session.run_shoe(deck_set=SIM_DECK_SET, on_step=step)
            board = page_caught_up(page, web, watch.refresh())
            assert_page_shows(page, board, watch.settled)
            seen = page.evaluate("window.cardshoe.seen")
        finally:
            web.stop()
    assert outage[1] > outage[0], "the table went on writing while the web service was down"
    assert seen == [record_id for record_id in watch.ids if record_id >= seen[0]]
    assert seen[0] < outage[0] < outage[1] <= seen[-1]


def test_a_finished_shoe_fits_both_screens_and_is_photographed(
    tmp_path: Path, browser: Browser
) -> None:
    path = tmp_path / "journal.sqlite"
    config = table_config(decks=8)
    with session_on(config, simulated_device(config, seed=21), path) as (session, _):
        session.run_shoe(shoe_id="T1-0001", deck_set=SIM_DECK_SET)
    with WebService(path) as web:
        board = web.board()
        assert board["rounds"] >= 70 and board["table"]["phase"] == "shoe ended"
        for viewport in (FULL_HD, HD):
            shown = browser.new_page(viewport=viewport)
            try:
                shown.goto(web.url)
                shown.wait_for_function("window.cardshoe.renders > 0")
                assert shown.evaluate(FITS) == {"outside": [], "scrolls": False}, viewport
                assert_page_shows(shown, board, board["rounds"])
                if viewport is FULL_HD:
                    picture = shown.screenshot(full_page=False)
            finally:
                shown.close()
    if not SCREENSHOT.exists() or SCREENSHOT.read_bytes() != picture:
        SCREENSHOT.write_bytes(picture)
    assert SCREENSHOT.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
