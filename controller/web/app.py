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
from starlette.responses import Response
from starlette.routing import Route

from cardshoe.controller.web.feed import BoardFeed

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


def create_app(feed: BoardFeed) -> Starlette:
    """The application serving one feed; the feed's polling runs while the app does."""
    pages = {path: (_static_text(name), media) for path, (name, media) in STATIC_FILES.items()}

    async def page(request: Request) -> Response:
        text, media = pages[request.url.path]
        return Response(text, media_type=media, headers=NO_CACHE)

    async def board(request: Request) -> Response:
        return Response(feed.board_text(), media_type="application/json", headers=NO_CACHE)

    async def events(request: Request) -> EventSourceResponse:
        return EventSourceResponse(_stream(feed, _after_id(request)), ping=PING_S)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        polling = asyncio.create_task(feed.run())
        try:
            yield
        finally:
            polling.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await polling

    routes = [Route(path, page) for path in STATIC_FILES]
    routes += [Route("/board.json", board), Route("/events", events)]
    return Starlette(routes=routes, lifespan=lifespan)


async def _stream(feed: BoardFeed, after_id: int | None) -> AsyncIterator[bytes]:
    yield ServerSentEvent(comment="cardshoe scoreboard", retry=RETRY_MS).encode()
    async for event in feed.stream(after_id):
        yield event


def _after_id(request: Request) -> int | None:
    """The last record the browser has: its Last-Event-ID, or ?after= when the page had to
    open a new EventSource (which sends no Last-Event-ID)."""
    text = request.headers.get("last-event-id") or request.query_params.get("after")
    return int(text) if text is not None and text.isdigit() else None


def _static_text(name: str) -> str:
    return resources.files("cardshoe.controller.web").joinpath("static", name).read_text("utf-8")
