"""The table console's link to the running service: the live table, and commands for a person.

The console follows the service's subscription (the board as it stands, then
every event) and reads the status after each event, since the status says
which commands the table accepts now. When the service goes away it says so
("service restarting") and keeps trying until the service is back; the
sign-ins of the old service are gone with it, so the console forgets the person
too. Commands go out with the signed-in person's token, and a supervisor's
with the supervisor's name and PIN given at that moment. Both the terminal
console and the touchscreen page use this one client.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cardshoe.controller.errors import UserError
from cardshoe.controller.scoreboard.board import TableBoard
from cardshoe.controller.service import console_access
from cardshoe.controller.service.control_client import request, subscription

RECONNECT_S = 0.5
"""The pause between two attempts to reach a service that is not (yet) there."""


@dataclass(frozen=True)
class Person:
    """Who is signed in at this console, as the service answered their PIN."""

    name: str
    role: str
    token: str


@dataclass(frozen=True)
class Answer:
    """What became of a command: accepted, or refused with its words."""

    ok: bool
    text: str


class ConsoleLink:
    """The live table from the service at path, kept current by a thread of its own.

    on_change is called (from that thread) after every change: an event, a new
    status, the service lost or back.
    """

    def __init__(self, path: Path, on_change: Callable[[], None] = lambda: None) -> None:
        self.path = path
        self._on_change = on_change
        self._lock = threading.Lock()
        self.board = TableBoard()
        self.status: dict[str, Any] | None = None
        self.connected = False
        self.person: Person | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._follow, name="console-link", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop following; the thread ends at the service's next event or reconnect."""
        self._stop.set()

    def snapshot(self) -> tuple[TableBoard, dict[str, Any] | None, bool, Person | None]:
        """The board, status, connection and person, consistent with one another."""
        with self._lock:
            board = TableBoard.from_json(self.board.to_json())
            return board, self.status, self.connected, self.person

    def sign_in(self, name: str, pin: str) -> Answer:
        try:
            answer = request(self.path, console_access.SIGN_IN, name=name, pin=pin)
        except UserError as refused:
            return Answer(False, str(refused))
        with self._lock:
            self.person = Person(answer["name"], answer["role"], answer["token"])
            self.status = answer["status"]
        self._on_change()
        return Answer(True, name.lower())

    def sign_out(self) -> None:
        with self._lock:
            person, self.person = self.person, None
        if person is not None:
            # A service that is away took its sign-ins with it.
            with contextlib.suppress(UserError):
                request(self.path, console_access.SIGN_OUT, console=person.token)
        self._on_change()

    def forget(self) -> None:
        """The service no longer knows the person (idle, or a restart): neither does the
        console."""
        with self._lock:
            self.person = None
        self._on_change()

    def command(
        self, name: str, arguments: dict[str, Any], approval: tuple[str, str] | None = None
    ) -> Answer:
        """Give a command for the signed-in person; approval: a supervisor's name and PIN."""
        person = self.person
        if person is None:
            return Answer(False, "nobody is signed in at the console: sign in first")
        extra: dict[str, Any] = {console_access.TOKEN_KEY: person.token}
        if approval is not None:
            extra[console_access.APPROVAL_KEY] = {"name": approval[0], "pin": approval[1]}
        try:
            status = request(self.path, name, **arguments, **extra)
        except UserError as refused:
            text = str(refused)
            if text.startswith("nobody is signed in"):
                self.forget()
            return Answer(False, text)
        with self._lock:
            self.status = status
        self._on_change()
        return Answer(True, name)

    # --- the following thread ---------------------------------------------------

    def _follow(self) -> None:
        while not self._stop.is_set():
            try:
                with subscription(self.path) as (answer, events):
                    with self._lock:
                        board = answer["board"]
                        self.board = TableBoard() if board is None else TableBoard.from_json(board)
                        self.status = answer["status"]
                        self.connected = True
                    self._on_change()
                    for record in events:
                        if self._stop.is_set():
                            return
                        self._take(record)
            except UserError:
                pass
            self._lost()
            self._stop.wait(RECONNECT_S)

    def _take(self, record: dict[str, Any]) -> None:
        with self._lock:
            self.board.apply(record["kind"], record["payload"])
        try:
            status = request(self.path, "status")
        except UserError:
            status = None
        with self._lock:
            if status is not None:
                self.status = status
        self._on_change()

    def _lost(self) -> None:
        with self._lock:
            was = self.connected
            self.connected = False
            if was:
                self.person = None
        if was:
            self._on_change()
