"""The scoreboard page in a real browser, served by the real `shoectl web`, fed by a journal
that a table session on the simulated shoe is writing while the page watches.

The dealer pauses at the end of every round (run_shoe's on_step runs in the
dealing loop), so the journal holds still while the page is read: its cells,
taken from the DOM, must then equal /board.json, and its bead road must hold
one cell per settled round. Each live test runs on a full-HD display screen,
a tablet and a phone (SCREENS), where the layout rules (LAYOUT_RULES) hold too.
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
from cardshoe.controller.scoreboard.notices import NoticeKind, notice
from cardshoe.controller.service.session import TableSession

REPO = Path(__file__).resolve().parents[2]
FULL_HD = ViewportSize(width=1920, height=1080)
HD = ViewportSize(width=1280, height=720)
TABLET = ViewportSize(width=768, height=1024)
PHONE = ViewportSize(width=390, height=844)
SCREENS = {"1920x1080": FULL_HD, "768x1024": TABLET, "390x844": PHONE}
SCREENSHOTS = {
    "1920x1080": REPO / "docs" / "scoreboard.png",
    "768x1024": REPO / "docs" / "scoreboard-tablet.png",
    "390x844": REPO / "docs" / "scoreboard-phone.png",
}
"""The pictures in docs/scoreboard.md: the display screen as it stands, the hand-held screens
whole (they scroll down)."""
MIN_CELL_PX = 12
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


LAYOUT_RULES = """(minCell) => {
  const name = (n) => n.id ? "#" + n.id : n.tagName.toLowerCase() + "." +
    [...n.classList].join(".") + (n.textContent ? " '" + n.textContent.slice(0, 30) + "'" : "");
  const wide = (box) => box.left < -1 || box.right > innerWidth + 1;
  const overflowing = [];
  for (const node of document.querySelectorAll("body *")) {
    const box = node.getBoundingClientRect();
    if ((box.width || box.height) && wide(box)) overflowing.push(name(node));
  }
  const small = [...document.querySelectorAll(".road .cell")].filter((cell) => {
    const box = cell.getBoundingClientRect();
    return box.width < minCell || box.height < minCell;
  }).map(name);
  const notRound = [...document.querySelectorAll(".disc, .ring, .road .mark")].filter((mark) => {
    const box = mark.getBoundingClientRect();
    return Math.abs(box.width - box.height) > 1;
  }).map(name);
  // A title is cut when it is invisible, when its text is clipped by its own box (an
  // ellipsis) or by an ancestor that hides overflow, or when a line of it leaves the screen.
  const clippedBy = (node, rect) => {
    for (let up = node.parentElement; up; up = up.parentElement) {
      const style = getComputedStyle(up);
      if (style.overflowX === "visible" && style.overflowY === "visible") continue;
      if (up === document.body || up === document.documentElement) continue;
      const box = up.getBoundingClientRect();
      if (rect.left < box.left - 1 || rect.right > box.right + 1 ||
          rect.top < box.top - 1 || rect.bottom > box.bottom + 1) return true;
    }
    return false;
  };
  const cut = [];
  const titles = ".top > *, #game, #options, .round-head, .hands-caption, .hand .label, " +
    ".caption, #last-result, #last-detail, .stat > span, .ask-row .label, .road-title, " +
    ".banner-line > span";
  for (const title of document.querySelectorAll(titles)) {
    if (title.closest("[hidden]")) continue;
    const own = title.getBoundingClientRect();
    const text = document.createRange();
    text.selectNodeContents(title);
    const lines = [...text.getClientRects()];
    const inline = getComputedStyle(title).display === "inline";
    const ellipsis = !inline && title.scrollWidth > title.clientWidth + 1;
    if (!title.checkVisibility() || !own.width || !lines.length || ellipsis ||
        lines.some((line) => wide(line) || clippedBy(title, line))) cut.push(name(title));
  }
  const page = document.documentElement;
  return {overflowing, small, notRound, cut, sideways: page.scrollWidth > innerWidth};
}"""
"""What breaks the page on a screen: an element wider than it, a road cell under minCell px,
a bead disc or a ring drawn as an ellipse, a title cut or hidden, a sideways scroll."""
LAID_OUT = {"overflowing": [], "small": [], "notRound": [], "cut": [], "sideways": False}

COVERS = """() => {
  const targets = [".round-head", ".hand .label", ".stat.banker > span", ".stat.player > span",
    ".stat.tie > span", ".ask-row .label", ".hands-caption"];
  const banner = [...document.querySelectorAll("#banner .banner-line")];
  const hit = (a, b) => a.left < b.right && b.left < a.right &&
    a.top < b.bottom && b.top < a.bottom;
  const covered = [];
  for (const selector of targets) {
    for (const node of document.querySelectorAll(selector)) {
      if (node.closest("[hidden]")) continue;
      const box = node.getBoundingClientRect();
      if (banner.some((line) => hit(line.getBoundingClientRect(), box))) covered.push(selector);
    }
  }
  return covered;
}"""
"""The page's labels a banner line lies over: the round line, 莊/閒/和, ask B/P, the caption."""

BANNER_LINES = """() => [...document.querySelectorAll("#banner:not([hidden]) .banner-line")].map(
  (line) => [...line.children].map((part) => part.textContent))"""


def banner_line(head: str, kind: NoticeKind, code: str) -> list[str]:
    """A banner line as the page should show it: its head, then the notice's two lines."""
    said = notice(kind, code)
    return [
        head,
        f"{said.what.en} · {said.what.zh}",
        f"{said.todo.en} · {said.todo.zh}",
    ]


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


@pytest.fixture(params=list(SCREENS))
def page(browser: Browser, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A page on each screen in turn: the table's display, a tablet, a phone."""
    opened = browser.new_page(viewport=SCREENS[request.param])
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
    until the next round's cards come, in the table's words and never a code, and covers
    none of the page's labels; none is left once the shoe has ended."""
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
                    lines = page.evaluate(BANNER_LINES)
                    words = page.inner_text("body")
                    assert "fault." not in words and "foreign_card" not in words, words
                    assert page.evaluate(COVERS) == [], lines
                    assert page.evaluate(LAYOUT_RULES, MIN_CELL_PX) == LAID_OUT, lines
                    for kind in shown:
                        banners.setdefault(kind, lines)

            session.run_shoe(deck_set=SIM_DECK_SET, rounds=5, on_step=look)
            board = page_caught_up(page, web, watch.refresh())
            ended_banner = page.is_visible("#banner")
    assert banners["hold.started"] == [banner_line("HELD 暫停", NoticeKind.HOLD, "fault.jam")]
    assert banners["alarm"] == banners["round.void"]
    assert banners["alarm"] == [
        banner_line("ALARM 警報", NoticeKind.ALARM, "foreign_card"),
        banner_line("ROUND 4 VOID · 第4局無效", NoticeKind.VOID, "foreign_card"),
    ]
    shown_text = " ".join(" ".join(line) for lines in banners.values() for line in lines)
    assert "fault." not in shown_text and "_" not in shown_text
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


def test_the_last_rounds_cards_say_so_while_the_next_round_is_betting(
    tmp_path: Path, page: Page
) -> None:
    """Between rounds the layout keeps the last round's cards; under "Round N+1 betting" they
    are labelled as round N's, and the label goes once the new round's cards come."""
    path = tmp_path / "journal.sqlite"
    config = table_config(decks=1)
    captions: dict[str, list[str]] = {"betting": [], "dealt": []}
    with session_on(config, simulated_device(config, seed=4), path) as (session, _):
        watch = JournalWatch(session.journal)
        with WebService(path) as web:
            page.goto(web.url)
            page.wait_for_function("window.cardshoe.renders > 0")

            def look() -> None:
                board = page_caught_up(page, web, watch.refresh())
                table = board["table"]
                if table["last_result"] is None or table["round"]["round_no"] is None:
                    return
                caption = page.locator("#hands-caption")
                text = caption.inner_text() if caption.is_visible() else ""
                if table["phase"] == "betting" and not table["round"]["player"]:
                    last = table["last_result"]["round"]
                    assert (
                        text == f"Cards of the last round, round {last} · 上一局（第{last}局）的牌"
                    )
                    captions["betting"].append(text)
                elif table["round"]["player"]:
                    assert text == "", table["phase"]
                    captions["dealt"].append(table["phase"])

            session.run_shoe(deck_set=SIM_DECK_SET, rounds=3, on_step=look)
    assert len(captions["betting"]) >= 2 and captions["dealt"]


@pytest.fixture(scope="module")
def finished_shoe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A whole 8-deck shoe, dealt to its cut card."""
    path = tmp_path_factory.mktemp("finished") / "journal.sqlite"
    config = table_config(decks=8)
    with session_on(config, simulated_device(config, seed=21), path) as (session, _):
        session.run_shoe(shoe_id="T1-0001", deck_set=SIM_DECK_SET)
    return path


def test_a_finished_shoe_is_laid_out_on_every_screen_and_is_photographed(
    finished_shoe: Path, browser: Browser
) -> None:
    """The display screens (1920x1080, 1280x720) show the whole shoe without scrolling; on
    every screen, tablet and phone included, nothing is wider than the screen, no road cell
    is under 12 px, discs stay round and no title is cut. The pictures go to the docs."""
    pictures: dict[str, bytes] = {}
    with WebService(finished_shoe) as web:
        board = web.board()
        assert board["rounds"] >= 70 and board["table"]["phase"] == "shoe ended"
        for name, viewport in [*SCREENS.items(), ("1280x720", HD)]:
            shown = browser.new_page(viewport=viewport)
            try:
                shown.goto(web.url)
                shown.wait_for_function("window.cardshoe.renders > 0")
                assert shown.evaluate(LAYOUT_RULES, MIN_CELL_PX) == LAID_OUT, name
                if viewport["width"] > viewport["height"]:
                    assert shown.evaluate(FITS) == {"outside": [], "scrolls": False}, name
                assert_page_shows(shown, board, board["rounds"])
                options = shown.locator("#options")
                fingerprint = board["table"]["fingerprint"]
                assert options.inner_text().endswith(f"options {fingerprint[:12]}…")
                assert options.get_attribute("title") == f"options fingerprint {fingerprint}"
                if name in SCREENSHOTS:
                    pictures[name] = shown.screenshot(full_page=viewport is not FULL_HD)
            finally:
                shown.close()
    for name, picture in pictures.items():
        if not SCREENSHOTS[name].exists() or SCREENSHOTS[name].read_bytes() != picture:
            SCREENSHOTS[name].write_bytes(picture)
        assert SCREENSHOTS[name].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_approved_options_are_never_cut_on_a_phone(
    finished_shoe: Path, tmp_path: Path, browser: Browser
) -> None:
    """With the table's configuration the header names commission and paytable in full;
    on a phone it wraps them onto more lines rather than cut them."""
    config = tmp_path / "table.toml"
    config.write_text("[game]\ndecks = 8\n")
    with WebService(finished_shoe, "--config", str(config)) as web:
        options = web.board()["options"]
        assert options is not None
        shown = browser.new_page(viewport=PHONE)
        try:
            shown.goto(web.url)
            shown.wait_for_function("window.cardshoe.renders > 0")
            text = shown.locator("#options").inner_text()
            assert f"commission {options['commission']}" in text
            assert text.endswith(f"paytable {options['paytable']}")
            assert shown.evaluate(LAYOUT_RULES, MIN_CELL_PX) == LAID_OUT
        finally:
            shown.close()
