"""The pit's web application: its pages, the JSON API they use, and their event stream.

Every /api answer is JSON; every error is {"error": "..."} with its status:
400 bad input, 401 no session, 403 not allowed or a missing or wrong CSRF
token, 404 nothing there, 409 done already, 415 not JSON, 429 too many
failed logins (with Retry-After), 503 the database away. The pages
themselves are one static document that draws whichever page its path
names from the API, so the API is all a page can see.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from importlib import resources
from zoneinfo import ZoneInfo

import psycopg
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from cardshoe.controller.floor.broker import BrokerSettings
from cardshoe.controller.pit import accounts
from cardshoe.controller.pit.api import NO_CACHE, ApiError, PitApi
from cardshoe.controller.pit.database import DatabaseAway, FloorDatabase
from cardshoe.controller.pit.live import FloorChanges, started_listeners
from cardshoe.controller.pit.login_limits import LoginLimits, LoginThrottle

log = logging.getLogger(__name__)

FLOOR_ZONE_DEFAULT = ZoneInfo("UTC")
LOGIN_LIMITS_DEFAULT = LoginLimits()
PAGE_PATHS = (
    "/",
    "/tables/{table_id}",
    "/tables/{table_id}/rounds/{shoe_id}/{round_no}",
    "/alarms",
    "/pace",
)
"""Every page is the one document (pit.html), which draws the page its path names."""
STATIC_FILES = {
    "/pit.js": ("pit.js", "text/javascript; charset=utf-8"),
    "/pit.css": ("pit.css", "text/css; charset=utf-8"),
}


@dataclass(frozen=True)
class PitSettings:
    dsn: str
    broker: BrokerSettings | None = None
    client_id: str = "cardshoe-pit-1"
    overdue_after_s: float = 300.0
    """An alarm unacknowledged for longer is marked overdue."""
    login_limits: LoginLimits = LOGIN_LIMITS_DEFAULT
    time_zone: ZoneInfo = FLOOR_ZONE_DEFAULT
    """The floor's clock: the pace page's days and hours of day."""


def create_app(settings: PitSettings) -> Starlette:
    database = FloorDatabase(settings.dsn)
    changes = FloorChanges()
    throttle = LoginThrottle(settings.login_limits)
    api = PitApi(database, throttle, changes, settings.overdue_after_s, settings.time_zone)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await _recall_logins(database, throttle)
        changes.attach(asyncio.get_running_loop())
        stop = started_listeners(settings.dsn, settings.broker, settings.client_id, changes)
        try:
            yield
        finally:
            stop()

    return Starlette(
        routes=_page_routes() + api.routes(),
        lifespan=lifespan,
        exception_handlers={
            ApiError: _api_error,
            DatabaseAway: _database_away,
            psycopg.DataError: _unstorable_text,
            HTTPException: _http_error,
            Exception: _internal_error,
        },
    )


async def _recall_logins(database: FloorDatabase, throttle: LoginThrottle) -> None:
    """Count again the logins of the last window and lockout, so a restart lifts no lockout;
    with the database away the counts start empty, and the pit says so."""
    limits = throttle.limits
    try:
        logins = await database.run(accounts.recent_logins, limits.window_s + limits.lockout_s)
    except DatabaseAway as exc:
        log.warning("failed logins before this start not counted: %s", exc)
        return
    throttle.recall(logins)


def _page_routes() -> list[Route]:
    """The pages (one document, pit.html, for every path) and their script and style."""
    page_text = _static_text("pit.html")
    static = {path: (_static_text(name), media) for path, (name, media) in STATIC_FILES.items()}

    async def page(request: Request) -> Response:
        return Response(page_text, media_type="text/html; charset=utf-8", headers=NO_CACHE)

    async def static_file(request: Request) -> Response:
        text, media = static[request.url.path]
        return Response(text, media_type=media, headers=NO_CACHE)

    routes = [Route(path, page) for path in PAGE_PATHS]
    routes += [Route(path, static_file) for path in STATIC_FILES]
    return routes


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=NO_CACHE | (headers or {}))


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return _error(exc.status, str(exc), exc.headers)


async def _database_away(request: Request, exc: Exception) -> Response:
    return _error(503, f"{exc}: try again once the floor database is back")


async def _unstorable_text(request: Request, exc: Exception) -> Response:
    return _error(400, "the request holds text PostgreSQL cannot take (a NUL character?)")


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    messages = {404: f"nothing at {request.url.path}", 405: f"{request.method} is not allowed here"}
    return _error(exc.status_code, messages.get(exc.status_code, str(exc.detail)))


async def _internal_error(request: Request, exc: Exception) -> Response:
    """A bug: logged by uvicorn with its traceback, answered with one line, never the trace."""
    return _error(500, "internal error in the pit: see the service's log")


def _static_text(name: str) -> str:
    return resources.files("cardshoe.controller.pit").joinpath("static", name).read_text("utf-8")
