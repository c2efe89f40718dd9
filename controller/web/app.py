"""The scoreboard's web application: the page, /board.json and /events.

Nothing here can command the table: the application only reads the journal
through its BoardFeed, so it needs no rights on the control socket and goes
on serving across restarts of the table service. The page's script draws
cells where board_json puts them; it computes no road itself.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from importlib import resources

from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from cardshoe.controller.web.console_page import WebConsole, console_routes
from cardshoe.controller.web.feed import BoardFeed
from cardshoe.drivers.text_input import MAX_DIGITS, whole_number

RETRY_MS = 500
"""How soon a browser that lost the stream tries again (the SSE retry field)."""
PING_S = 10
"""A comment line this often keeps proxies and idle connections from closing the stream."""
STATIC_FILES = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/board.js": ("board.js", "text/javascript; charset=utf-8"),
    "/board.css": ("board.css", "text/css; charset=utf-8"),
}
"""Path -> (file in cardshoe.controller.web's static folder, media type)."""
NO_CACHE = {"Cache-Control": "no-cache"}
MAX_CLIENTS = 200
"""/events streams served at once unless --max-clients says otherwise: each costs memory and
CPU on the table's PC (200 stay under 80 MB, docs/performance.md); more get 503."""
BUSY_RETRY_S = 5
"""The Retry-After of a 503: a screen turned away tries again this much later."""


class BadRequest(Exception):
    """A request the page never sends; its message is the 400's one-line body."""


class ClientSlots:
    """Counts the /events streams being served, up to a maximum (all on the event loop)."""

    def __init__(self, maximum: int) -> None:
        self.maximum = maximum
        self.open = 0

    def take(self) -> bool:
        if self.open >= self.maximum:
            return False
        self.open += 1
        return True

    def give_back(self) -> None:
        self.open -= 1


class _CountedEvents(EventSourceResponse):
    """An event stream that gives its slot back however it ends (the client left, the
    service stops)."""

    def __init__(self, body: AsyncIterator[bytes], slots: ClientSlots) -> None:
        super().__init__(body, ping=PING_S)
        self._slots = slots

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._slots.give_back()


def create_app(
    feed: BoardFeed, max_clients: int = MAX_CLIENTS, console: WebConsole | None = None
) -> Starlette:
    """The application serving one feed; the feed's polling runs while the app does.
    With a console, also /console (console_page.py), following the service while the app
    runs."""
    slots = ClientSlots(max_clients)
    pages = {path: (_static_text(name), media) for path, (name, media) in STATIC_FILES.items()}

    async def page(request: Request) -> Response:
        text, media = pages[request.url.path]
        return Response(text, media_type=media, headers=NO_CACHE)

    async def board(request: Request) -> Response:
        return Response(feed.board_text(), media_type="application/json", headers=NO_CACHE)

    async def events(request: Request) -> Response:
        try:
            after_id = _after_id(request)
        except BadRequest as exc:
            return PlainTextResponse(f"{exc}\n", status_code=400, headers=NO_CACHE)
        if not slots.take():
            return PlainTextResponse(
                f"this scoreboard already serves {slots.maximum} screens: try again later\n",
                status_code=503,
                headers={**NO_CACHE, "Retry-After": str(BUSY_RETRY_S)},
            )
        return _CountedEvents(_stream(feed, after_id), slots)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        polling = asyncio.create_task(feed.run())
        if console is not None:
            console.link.start()
        try:
            yield
        finally:
            if console is not None:
                console.link.stop()
            polling.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await polling

    routes = [Route(path, page) for path in STATIC_FILES]
    routes += [Route("/board.json", board), Route("/events", events)]
    if console is not None:
        routes += console_routes(
            console, pages["/"][0], _static_text("console.js"), _static_text("console.css")
        )
    return Starlette(routes=routes, lifespan=lifespan)


async def _stream(feed: BoardFeed, after_id: int | None) -> AsyncIterator[bytes]:
    yield ServerSentEvent(comment="cardshoe scoreboard", retry=RETRY_MS).encode()
    async for event in feed.stream(after_id):
        yield event


def _after_id(request: Request) -> int | None:
    """The last record the browser has: its Last-Event-ID, or ?after= when the page had to
    open a new EventSource (which sends no Last-Event-ID); None for a new page.

    Raises BadRequest for anything but a record id (whole_number: ASCII digits, few enough
    of them for SQLite's 64-bit integer).
    """
    name, text = "Last-Event-ID", request.headers.get("last-event-id")
    if not text:
        name, text = "?after=", request.query_params.get("after")
    if text is None:
        return None
    after_id = whole_number(text)
    if after_id is None:
        raise BadRequest(
            f"{name} must be a record id (1 to {MAX_DIGITS} digits 0-9): reload the page"
        )
    return after_id


def _static_text(name: str) -> str:
    return resources.files("cardshoe.controller.web").joinpath("static", name).read_text("utf-8")
