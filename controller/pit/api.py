"""The pit's JSON API: the handlers behind /api, each answering one request of a page.

Separate from app.py, which assembles the application (pages, static files, the event
stream's listeners, the error answers): here every handler is a method of PitApi, which holds
what they share (the floor database, the login throttle, the floor's changes), so each handler
is one short function and the route table is data (PitApi.routes).
"""

from __future__ import annotations

import hmac
import json
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from cardshoe.controller.pit import accounts
from cardshoe.controller.pit.accounts import AuditAction, Role, Session
from cardshoe.controller.pit.alarms import AckRefused, acknowledge, list_alarms
from cardshoe.controller.pit.database import FloorDatabase
from cardshoe.controller.pit.live import FloorChanges
from cardshoe.controller.pit.login_limits import LoginThrottle, Refused
from cardshoe.controller.pit.pace import day_pace
from cardshoe.controller.pit.recall import round_recall
from cardshoe.controller.pit.table_view import table_view
from cardshoe.controller.pit.tiles import floor_tiles
from cardshoe.drivers.text_input import json_value, whole_number

SESSION_COOKIE = "pit_session"
CSRF_HEADER = "X-CSRF-Token"
PING_S = 10
RETRY_MS = 1000
MAX_BODY_BYTES = 16_384
TILES_FRESH_S = 1.0
"""The longest the tiles' answer is served again unchanged: lag and rounds-in-the-last-hour
move with the clock, not only with the floor's changes."""
NO_CACHE = {"Cache-Control": "no-store"}


class ApiError(Exception):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers or {}


Handler = Callable[[Request, Session], Awaitable[Response]]


class PitApi:
    """The /api handlers of one pit application, and what they share."""

    def __init__(
        self,
        database: FloorDatabase,
        throttle: LoginThrottle,
        changes: FloorChanges,
        overdue_after_s: float,
        time_zone: ZoneInfo,
    ) -> None:
        self.database = database
        self.throttle = throttle
        self.changes = changes
        self.overdue_after_s = overdue_after_s
        self.time_zone = time_zone
        self.tiles_read: dict[Role, tuple[int, float, bytes]] = {}
        """Per role, the tiles as last read: (changes.version, monotonic time, encoded answer)."""

    def routes(self) -> list[Route]:
        """The API's routes: every one but the login needs a session."""
        signed_in = self.signed_in
        return [
            Route("/api/login", self.login, methods=["POST"]),
            Route("/api/logout", signed_in(self.logout, changes_state=True), methods=["POST"]),
            Route("/api/session", signed_in(self.whoami)),
            Route("/api/tables", signed_in(self.tables)),
            Route("/api/tables/{table_id}", signed_in(self.table)),
            Route("/api/tables/{table_id}/rounds/{shoe_id}/{round_no}", signed_in(self.round_)),
            Route("/api/alarms", signed_in(self.alarms)),
            Route(
                "/api/alarms/{alarm_id}/ack",
                signed_in(self.ack, changes_state=True),
                methods=["POST"],
            ),
            Route("/api/pace", signed_in(self.pace)),
            Route("/api/events", signed_in(self.events)),
        ]

    def signed_in(self, handler: Handler, *, changes_state: bool = False) -> Callable[..., Any]:
        """The handler for a live session only, and for a state change only with its token."""
        database = self.database

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

    async def login(self, request: Request) -> Response:
        body = await _json_object(request)
        user, password = body.get("user"), body.get("password")
        if not isinstance(user, str) or not isinstance(password, str):
            raise ApiError(400, 'give {"user": "...", "password": "..."} as strings')
        client = "-" if request.client is None else request.client.host
        admitted = self.throttle.admit(user, client)
        if isinstance(admitted, Refused):
            raise ApiError(
                429,
                admitted.message(),
                {"Retry-After": str(math.ceil(admitted.retry_after_s))},
            )
        opened = None
        try:
            opened = await self.database.run(accounts.log_in, user, password, client)
        finally:
            # A login the self.database never answered counts as failed: it tried a password.
            lockouts = self.throttle.settle(admitted, succeeded=opened is not None)
        for lockout in lockouts:
            await self.database.run(
                accounts.audit, user, AuditAction.LOGIN_LOCKED, lockout.detail(client), client
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

    async def logout(self, request: Request, session: Session) -> Response:
        await self.database.run(accounts.log_out, request.cookies[SESSION_COOKIE], session)
        response = JSONResponse({"logged_out": session.user}, headers=NO_CACHE)
        response.delete_cookie(SESSION_COOKIE)
        return response

    async def whoami(self, request: Request, session: Session) -> Response:
        return JSONResponse(_session_json(session), headers=NO_CACHE)

    async def tables(self, request: Request, session: Session) -> Response:
        """Every screen of the pit asks after each change: the tiles are read once a change
        (and at least once every TILES_FRESH_S, since lag grows with time), not once a screen."""
        version, now = self.changes.version, time.monotonic()
        cached = self.tiles_read.get(session.role)
        if cached is None or cached[0] != version or now - cached[1] > TILES_FRESH_S:
            tiles = await self.database.run(floor_tiles, session.role)
            for tile in tiles:
                tile.online = self.changes.online.get(tile.table_id, tile.online)
            encoded = json.dumps([tile.to_json() for tile in tiles]).encode()
            cached = self.tiles_read[session.role] = (version, now, encoded)
        return Response(cached[2], media_type="application/json", headers=NO_CACHE)

    async def table(self, request: Request, session: Session) -> Response:
        table_id = request.path_params["table_id"]
        shoe_id = request.query_params.get("shoe")
        before_text = request.query_params.get("before")
        before = None if before_text is None else whole_number(before_text)
        if before_text is not None and not before:
            raise ApiError(
                400,
                f"before={before_text!r} is not a record id (1, 2, ...): follow the page's "
                "earlier-shoes link, which gives one",
            )
        view = await self.database.run(table_view, session.role, table_id, shoe_id, before)
        if view is None:
            raise ApiError(
                404, f"the floor holds no table {table_id!r}: GET /api/tables lists them"
            )
        return JSONResponse(view, headers=NO_CACHE)

    async def round_(self, request: Request, session: Session) -> Response:
        params = request.path_params
        round_text = params["round_no"]
        round_no = whole_number(round_text, 6)
        if round_no is None or not 1 <= round_no <= 100_000:
            raise ApiError(400, f"round {round_text!r} is not a round number (1, 2, ...)")
        recall = await self.database.run(
            round_recall, params["table_id"], params["shoe_id"], round_no
        )
        if recall is None:
            raise ApiError(
                404,
                f"the floor holds no round {round_text} of shoe {params['shoe_id']!r} at table "
                f"{params['table_id']!r}: GET /api/tables/{params['table_id']} lists its rounds",
            )
        return JSONResponse(recall, headers=NO_CACHE)

    async def alarms(self, request: Request, session: Session) -> Response:
        state = request.query_params.get("state", "open")
        if state not in ("open", "all"):
            raise ApiError(400, f"state {state!r} is not open or all")
        found = await self.database.run(
            lambda db: list_alarms(
                db,
                session.role,
                include_acknowledged=state == "all",
                overdue_after_s=self.overdue_after_s,
                now=datetime.now(UTC),
            )
        )
        return JSONResponse([alarm.to_json() for alarm in found], headers=NO_CACHE)

    async def ack(self, request: Request, session: Session) -> Response:
        body = await _json_object(request)
        note = body.get("note")
        if not isinstance(note, str):
            raise ApiError(400, 'give {"note": "..."}: what was done about the alarm')
        try:
            done = await self.database.run(
                acknowledge, session, request.path_params["alarm_id"], note
            )
        except AckRefused as refused:
            raise ApiError(refused.status, str(refused)) from None
        self.changes.announce({done.table_id})
        return JSONResponse(done.to_json(), headers=NO_CACHE)

    async def pace(self, request: Request, session: Session) -> Response:
        text = request.query_params.get("date") or datetime.now(self.time_zone).date().isoformat()
        try:
            day = date.fromisoformat(text)
        except ValueError:
            raise ApiError(400, f"date {text!r} is not YYYY-MM-DD") from None
        found = await self.database.run(day_pace, day, self.time_zone)
        return JSONResponse(found.to_json(), headers=NO_CACHE)

    async def events(self, request: Request, session: Session) -> Response:
        return EventSourceResponse(_changes_stream(self.changes), ping=PING_S)


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
        parsed = json_value(body)
    except ValueError as exc:
        raise ApiError(400, f"the body is not JSON ({exc})") from None
    if not isinstance(parsed, dict):
        raise ApiError(400, "the body must be a JSON object")
    return parsed


def _session_json(session: Session) -> dict[str, Any]:
    return {"user": session.user, "role": session.role.value, "csrf_token": session.csrf_token}
