"""/console: the table console as a touchscreen page, for a table PC's display in kiosk mode.

The page is the scoreboard page (the same board, drawn by the same script from the
journal) with the console's bar added: who is signed in, the hold panel, the
buttons of the commands the table accepts now, and a form for a name, a PIN or
a reason. It commands the table through the control socket like the terminal
console (ConsoleLink, the same keys and words from console_view), so the web
unit runs as the user [roles] console names. Only a browser on this machine is
served (a loopback client address): a screen elsewhere on the network gets the
scoreboard and never the console.
"""

from __future__ import annotations

import ipaddress
import threading
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from cardshoe.controller.config import ConsoleLanguage
from cardshoe.controller.service.console_client import Answer, ConsoleLink
from cardshoe.controller.service.console_view import (
    ACTIONS,
    SIGN_IN_FIELDS,
    Field,
    fields_for,
    hold_panel,
    offered,
)
from cardshoe.controller.service.console_words import N_, translator
from cardshoe.drivers.text_input import json_value, whole_number

WAIT_S = 10.0
"""How long a request for the console's state waits for a change before answering as is."""
BAR = '</main>\n<section id="console" class="console"></section>'
"""The console's bar goes below the board of the scoreboard page."""
HEAD = (
    '<link rel="stylesheet" href="/console.css">\n<script src="/console.js" defer></script>\n'
    "</head>"
)


PAGE_WORDS = (
    N_("Signed in"),
    N_("Nobody is signed in: touch Sign in, then give your name and PIN"),
    N_("service restarting: reconnecting…"),
    N_("sign in"),
    N_("sign out"),
    N_("OK"),
    N_("Cancel"),
    N_("dealer"),
    N_("supervisor"),
)
"""The page's own words, sent translated with each state (console.js holds none)."""


class WebConsole:
    """The one console of this table PC's screen: the link, the last answer, idle time."""

    def __init__(
        self,
        socket_path: Path,
        idle_s: float,
        clock: Callable[[], float],
        language: ConsoleLanguage = ConsoleLanguage.EN,
    ) -> None:
        self.language = language
        self.tr = translator(language)
        self._changed = threading.Condition()
        self.version = 0
        self.link = ConsoleLink(socket_path, on_change=self._bump)
        self.idle_s = idle_s
        self._clock = clock
        self.last_press = clock()
        self.message: Answer | None = None

    def _bump(self) -> None:
        with self._changed:
            self.version += 1
            self._changed.notify_all()

    def state(self, after: int | None) -> dict[str, Any]:
        """The console as the page draws it, once it has changed since version after (or
        WAIT_S has passed)."""
        with self._changed:
            self._changed.wait_for(lambda: after is None or self.version != after, WAIT_S)
            version = self.version
        if self.link.person is not None and self._clock() - self.last_press >= self.idle_s:
            self.link.sign_out()
            self.message = Answer(
                True, self.tr("signed out after no touch for a while: sign in again")
            )
        _, status, connected, person = self.link.snapshot()
        actions = offered(status, person is not None) if connected else []
        return {
            "version": version,
            "connected": connected,
            "person": None if person is None else {"name": person.name, "role": person.role},
            "dealer": None if status is None else status.get("dealer"),
            "holds": [
                {"what": what, "todo": todo} for what, todo in hold_panel(status, self.language)
            ],
            "buttons": [
                {
                    "command": action.command,
                    "label": self.tr(action.label),
                    "supervisor": action.supervisor,
                    "fields": self._fields(fields_for(action, status or {})),
                }
                for action in actions
            ],
            "sign_in_fields": self._fields(SIGN_IN_FIELDS),
            "message": None if self.message is None else asdict(self.message),
            "words": {word: self.tr(word) for word in PAGE_WORDS},
        }

    def _fields(self, fields: tuple[Field, ...]) -> list[dict[str, Any]]:
        return [{**asdict(field), "label": self.tr(field.label)} for field in fields]

    def press(self, body: dict[str, Any]) -> Answer:
        """A button and its form's answers: sign-in, sign-out or a command."""
        self.last_press = self._clock()
        command = body.get("command")
        answers = body.get("answers") or {}
        if not isinstance(answers, dict) or not all(
            isinstance(value, str) for value in answers.values()
        ):
            answer = Answer(False, "a form's answers are text: fill it in again")
        elif command == "sign-in":
            answer = self.link.sign_in(answers.get("name", ""), answers.get("pin", ""))
            signed = self.tr("Signed in") + f": {answer.text}"
            answer = Answer(answer.ok, signed if answer.ok else answer.text)
        elif command == "sign-out":
            self.link.sign_out()
            answer = Answer(True, self.tr("signed out"))
        else:
            answer = self._command(command, dict(answers))
        self.message = answer
        self._bump()
        return answer

    def _command(self, command: object, answers: dict[str, str]) -> Answer:
        action = next((a for a in ACTIONS if a.command == command), None)
        if action is None:
            return Answer(False, f"{command!r} is not a console command")
        approval = None
        if action.supervisor:
            approval = (answers.pop("supervisor", ""), answers.pop("supervisor_pin", ""))
        answers = {name: value for name, value in answers.items() if name in action.asks}
        answer = self.link.command(action.command, answers, approval)
        return Answer(True, self.tr("done") + f": {action.command}") if answer.ok else answer


def is_loopback(request: Request) -> bool:
    client = request.client
    if client is None:
        return False
    try:
        return ipaddress.ip_address(client.host).is_loopback
    except ValueError:
        return False


def _same_origin_json(request: Request) -> bool:
    """A press from the console page itself: JSON (which a page elsewhere cannot send to
    this one without the browser asking first, and being refused) and, when the browser
    says where the request comes from, from this very host."""
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        return False
    origin = request.headers.get("origin")
    return origin is None or origin == f"{request.url.scheme}://{request.url.netloc}"


def console_routes(console: WebConsole, page: str, script: str, style: str) -> list[Route]:
    """The console's page, script, state and presses; each refused to a non-loopback client."""
    html = page.replace("</main>", BAR, 1).replace("</head>", HEAD, 1)

    def local_only(handler: Callable[[Request], Any]) -> Callable[[Request], Any]:
        async def guarded(request: Request) -> Response:
            if not is_loopback(request):
                return PlainTextResponse(
                    "the console is served only to this table PC's own screen (loopback)\n",
                    status_code=403,
                )
            response: Response = await handler(request)
            return response

        return guarded

    async def console_page(request: Request) -> Response:
        return Response(html, media_type="text/html; charset=utf-8")

    async def console_script(request: Request) -> Response:
        return Response(script, media_type="text/javascript; charset=utf-8")

    async def console_style(request: Request) -> Response:
        return Response(style, media_type="text/css; charset=utf-8")

    async def state(request: Request) -> Response:
        text = request.query_params.get("after")
        after = None if text is None else whole_number(text)
        return JSONResponse(await run_in_threadpool(console.state, after))

    async def press(request: Request) -> Response:
        if not _same_origin_json(request):
            return JSONResponse(
                {"ok": False, "text": "a press comes from the console page itself, as JSON"}, 403
            )
        try:
            body = json_value(await request.body())
        except ValueError:
            body = None
        if not isinstance(body, dict):
            return JSONResponse({"ok": False, "text": "a press is a JSON object"}, 400)
        answer = await run_in_threadpool(console.press, body)
        return JSONResponse(asdict(answer))

    return [
        Route("/console", local_only(console_page)),
        Route("/console.js", local_only(console_script)),
        Route("/console.css", local_only(console_style)),
        Route("/console/state.json", local_only(state)),
        Route("/console/press", local_only(press), methods=["POST"]),
    ]
