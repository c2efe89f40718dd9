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
import hmac
import json
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from importlib import resources
from typing import Any
from zoneinfo import ZoneInfo

import psycopg
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from cardshoe.controller.floor.broker import BrokerSettings
from cardshoe.controller.pit import accounts
from cardshoe.controller.pit.accounts import AuditAction, Role, Session
from cardshoe.controller.pit.alarms import AckRefused, acknowledge, list_alarms
from cardshoe.controller.pit.database import DatabaseAway, FloorDatabase
from cardshoe.controller.pit.live import FloorChanges, started_listeners
from cardshoe.controller.pit.login_limits import LoginLimits, LoginThrottle, Refused
from cardshoe.controller.pit.pace import day_pace
from cardshoe.controller.pit.recall import round_recall
from cardshoe.controller.pit.table_view import table_view
from cardshoe.controller.pit.tiles import floor_tiles

SESSION_COOKIE = "pit_session"
CSRF_HEADER = "X-CSRF-Token"
PING_S = 10
RETRY_MS = 1000
MAX_BODY_BYTES = 16_384
TILES_FRESH_S = 1.0
"""The longest the tiles' answer is served again unchanged: lag and rounds-in-the-last-hour
move with the clock, not only with the floor's changes."""
NO_CACHE = {"Cache-Control": "no-store"}
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


class ApiError(Exception):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers or {}


Handler = Callable[[Request, Session], Awaitable[Response]]


def create_app(settings: PitSettings) -> Starlette:
    database = FloorDatabase(settings.dsn)
    throttle = LoginThrottle(settings.login_limits)
    changes = FloorChanges()
    page_text = _static_text("pit.html")
    static = {path: (_static_text(name), media) for path, (name, media) in STATIC_FILES.items()}

    def signed_in(handler: Handler, *, changes_state: bool = False) -> Callable[..., Any]:
        """The handler for a live session only, and for a state change only with its token."""

        async def endpoint(request: Request) -> Response:
            token = request.cookies.get(SESSION_COOKIE)
            session = None if token is None else await database.run(accounts.session_of, token)
            if session is None:
                raise ApiError(401, "not logged in: POST /api/login with your user and password")
            if changes_state:
                sent = request.headers.get(CSRF_HEADER, "")
                if not hmac.compare_digest(sent.encode(), session.csrf_token.encode()):
                    raise ApiError(
                        403,
                        f"missing or wrong {CSRF_HEADER} header: send the "
                        "csrf_token POST /api/login answered",
                    )
            return await handler(request, session)

        return endpoint

    async def page(request: Request) -> Response:
        return Response(page_text, media_type="text/html; charset=utf-8", headers=NO_CACHE)

    async def static_file(request: Request) -> Response:
        text, media = static[request.url.path]
        return Response(text, media_type=media, headers=NO_CACHE)

    async def login(request: Request) -> Response:
        body = await _json_object(request)
        user, password = body.get("user"), body.get("password")
        if not isinstance(user, str) or not isinstance(password, str):
            raise ApiError(400, 'give {"user": "...", "password": "..."} as strings')
        client = "-" if request.client is None else request.client.host
        admitted = throttle.admit(user, client)
        if isinstance(admitted, Refused):
            raise ApiError(
                429,
                admitted.message(),
                {"Retry-After": str(math.ceil(admitted.retry_after_s))},
            )
        opened = None
        try:
            opened = await database.run(accounts.log_in, user, password, client)
        finally:
            # A login the database never answered counts as failed: it tried a password.
            lockouts = throttle.settle(admitted, succeeded=opened is not None)
        for lockout in lockouts:
            await database.run(
                accounts.audit, user, AuditAction.LOGIN_LOCKED, lockout.detail(client)
            )
        if opened is None:
            raise ApiError(401, "wrong user or password")
        answer = _session_json(opened.session)
        response = JSONResponse(answer, headers=NO_CACHE)
        response.set_cookie(
            SESSION_COOKIE,
            opened.cookie_token,
            max_age=accounts.SESSION_HOURS * 3600,
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
        )
        return response

    async def logout(request: Request, session: Session) -> Response:
        await database.run(accounts.log_out, request.cookies[SESSION_COOKIE], session)
        response = JSONResponse({"logged_out": session.user}, headers=NO_CACHE)
        response.delete_cookie(SESSION_COOKIE)
        return response

    async def whoami(request: Request, session: Session) -> Response:
        return JSONResponse(_session_json(session), headers=NO_CACHE)

    tiles_read: dict[Role, tuple[int, float, bytes]] = {}
    """Per role, the tiles as last read: (changes.version, monotonic time, encoded answer)."""

    async def tables(request: Request, session: Session) -> Response:
        """Every screen of the pit asks after each change: the tiles are read once a change
        (and at least once every TILES_FRESH_S, since lag grows with time), not once a screen."""
        version, now = changes.version, time.monotonic()
        cached = tiles_read.get(session.role)
        if cached is None or cached[0] != version or now - cached[1] > TILES_FRESH_S:
            tiles = await database.run(floor_tiles, session.role)
            for tile in tiles:
                tile.online = changes.online.get(tile.table_id, tile.online)
            encoded = json.dumps([tile.to_json() for tile in tiles]).encode()
            cached = tiles_read[session.role] = (version, now, encoded)
        return Response(cached[2], media_type="application/json", headers=NO_CACHE)

    async def table(request: Request, session: Session) -> Response:
        table_id = request.path_params["table_id"]
        shoe_id = request.query_params.get("shoe")
        view = await database.run(table_view, session.role, table_id, shoe_id)
        if view is None:
            raise ApiError(
                404, f"the floor holds no table {table_id!r}: GET /api/tables lists them"
            )
        return JSONResponse(view, headers=NO_CACHE)

    async def round_(request: Request, session: Session) -> Response:
        params = request.path_params
        round_text = params["round_no"]
        if not round_text.isdigit() or not 1 <= int(round_text) <= 100_000:
            raise ApiError(400, f"round {round_text!r} is not a round number (1, 2, ...)")
        recall = await database.run(
            round_recall, params["table_id"], params["shoe_id"], int(round_text)
        )
        if recall is None:
            raise ApiError(
                404,
                f"the floor holds no round {round_text} of shoe {params['shoe_id']!r} at table "
                f"{params['table_id']!r}: GET /api/tables/{params['table_id']} lists its rounds",
            )
        return JSONResponse(recall, headers=NO_CACHE)

    async def alarms(request: Request, session: Session) -> Response:
        state = request.query_params.get("state", "open")
        if state not in ("open", "all"):
            raise ApiError(400, f"state {state!r} is not open or all")
        found = await database.run(
            lambda db: list_alarms(
                db,
                session.role,
                include_acknowledged=state == "all",
                overdue_after_s=settings.overdue_after_s,
                now=datetime.now(UTC),
            )
        )
        return JSONResponse([alarm.to_json() for alarm in found], headers=NO_CACHE)

    async def ack(request: Request, session: Session) -> Response:
        body = await _json_object(request)
        note = body.get("note")
        if not isinstance(note, str):
            raise ApiError(400, 'give {"note": "..."}: what was done about the alarm')
        try:
            done = await database.run(acknowledge, session, request.path_params["alarm_id"], note)
        except AckRefused as refused:
            raise ApiError(refused.status, str(refused)) from None
        changes.announce({done.table_id})
        return JSONResponse(done.to_json(), headers=NO_CACHE)

    async def pace(request: Request, session: Session) -> Response:
        text = (
            request.query_params.get("date") or datetime.now(settings.time_zone).date().isoformat()
        )
        try:
            day = date.fromisoformat(text)
        except ValueError:
            raise ApiError(400, f"date {text!r} is not YYYY-MM-DD") from None
        found = await database.run(day_pace, day, settings.time_zone)
        return JSONResponse(found.to_json(), headers=NO_CACHE)

    async def events(request: Request, session: Session) -> Response:
        return EventSourceResponse(_changes_stream(changes), ping=PING_S)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        changes.attach(asyncio.get_running_loop())
        stop = started_listeners(settings.dsn, settings.broker, settings.client_id, changes)
        try:
            yield
        finally:
            stop()

    routes = [Route(path, page) for path in PAGE_PATHS]
    routes += [Route(path, static_file) for path in STATIC_FILES]
    routes += [
        Route("/api/login", login, methods=["POST"]),
        Route("/api/logout", signed_in(logout, changes_state=True), methods=["POST"]),
        Route("/api/session", signed_in(whoami)),
        Route("/api/tables", signed_in(tables)),
        Route("/api/tables/{table_id}", signed_in(table)),
        Route("/api/tables/{table_id}/rounds/{shoe_id}/{round_no}", signed_in(round_)),
        Route("/api/alarms", signed_in(alarms)),
        Route("/api/alarms/{alarm_id}/ack", signed_in(ack, changes_state=True), methods=["POST"]),
        Route("/api/pace", signed_in(pace)),
        Route("/api/events", signed_in(events)),
    ]
    return Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={
            ApiError: _api_error,
            DatabaseAway: _database_away,
            psycopg.DataError: _unstorable_text,
            HTTPException: _http_error,
            Exception: _internal_error,
        },
    )


async def _changes_stream(changes: FloorChanges) -> AsyncIterator[bytes]:
    yield ServerSentEvent(comment="cardshoe pit", retry=RETRY_MS).encode()
    async for changed in changes.stream():
        yield ServerSentEvent(data=json.dumps(sorted(changed)), event="tables").encode()


async def _json_object(request: Request) -> dict[str, Any]:
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        raise ApiError(415, "send the body as JSON, with Content-Type: application/json")
    body = await request.body()
    if len(body) > MAX_BODY_BYTES:
        raise ApiError(400, f"the body has {len(body)} bytes: at most {MAX_BODY_BYTES}")
    try:
        parsed = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApiError(400, f"the body is not JSON ({exc})") from None
    if not isinstance(parsed, dict):
        raise ApiError(400, "the body must be a JSON object")
    return parsed


def _session_json(session: Session) -> dict[str, Any]:
    return {"user": session.user, "role": session.role.value, "csrf_token": session.csrf_token}


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
