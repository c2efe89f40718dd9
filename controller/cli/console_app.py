"""`shoectl console`'s loop: keys from the terminal, the table from the service, drawn live.

The terminal is put in cbreak mode so each key arrives at once; the link to
the service runs in its own thread and asks for a redraw after each event,
which the loop draws within one poll (POLL_S). A key the table does not
accept now is not on screen and does nothing; a command it refuses shows the
refusal in the operator's words. A prompt (a name, a PIN, a reason) takes
the keys until Enter gives it or Esc drops it.
"""

from __future__ import annotations

import os
import select
import sys
import termios
import threading
import time
import tty
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.live import Live

from cardshoe.controller.cli.service_access import service_socket
from cardshoe.controller.config import TableConfig, load_config
from cardshoe.controller.display.console_screen import ConsoleFrame, PromptShown, render_console
from cardshoe.controller.errors import UserError
from cardshoe.controller.service.console_client import Answer, ConsoleLink
from cardshoe.controller.service.console_view import (
    SIGN_IN_FIELDS,
    SIGN_IN_KEY,
    SIGN_OUT_KEY,
    Action,
    Field,
    action_for,
    fields_for,
)
from cardshoe.controller.service.console_words import Translate, translator

POLL_S = 0.05
ENTER = ("\r", "\n")
ESCAPE = "\x1b"
ERASE = ("\x7f", "\b")


@dataclass
class Prompt:
    """The fields still to ask, and the answers so far."""

    title: str
    fields: tuple[Field, ...]
    action: Action | None
    """None: the sign-in prompt."""
    answers: dict[str, str] = field(default_factory=dict)
    typed: str = ""

    @property
    def current(self) -> Field:
        return self.fields[len(self.answers)]

    def key(self, key: str) -> bool:
        """Take one key; True once every field is answered."""
        if key in ERASE:
            self.typed = self.typed[:-1]
        elif key in ENTER:
            value = self.typed.strip() or (self.current.choices[:1] or ("",))[0]
            self.answers[self.current.name] = value
            self.typed = ""
        elif key.isprintable():
            self.typed += key
        return len(self.answers) == len(self.fields)


class ConsoleApp:
    """The console's state between keys: the link, the prompt, the last answer, idle time."""

    def __init__(self, link: ConsoleLink, idle_s: float, tr: Translate = str) -> None:
        self.link = link
        self.idle_s = idle_s
        self.tr = tr
        self.prompt: Prompt | None = None
        self.message: tuple[bool, str] | None = None
        self.last_key = time.monotonic()

    def key(self, key: str) -> None:
        self.last_key = time.monotonic()
        if self.prompt is not None:
            self._prompt_key(key)
            return
        status, signed_in = self.link.status, self.link.person is not None
        if key == SIGN_IN_KEY and not signed_in:
            self.prompt = Prompt("sign in", SIGN_IN_FIELDS, None)
        elif key == SIGN_OUT_KEY and signed_in:
            self.link.sign_out()
            self.message = (True, self.tr("signed out"))
        elif status is not None and (action := action_for(key, status, signed_in)) is not None:
            fields = fields_for(action, status)
            if fields:
                self.prompt = Prompt(action.label, fields, action)
            else:
                self._show(self.link.command(action.command, {}))

    def check_idle(self) -> None:
        """Sign the person out once nothing has been pressed for the table's idle time (the
        service does too, on its own clock)."""
        if self.link.person is not None and time.monotonic() - self.last_key >= self.idle_s:
            self.prompt = None
            self.message = (True, self.tr("signed out after no key for a while: sign in again"))
            self.link.sign_out()

    def _prompt_key(self, key: str) -> None:
        prompt = self.prompt
        assert prompt is not None
        if key == ESCAPE:
            self.prompt = None
            self.message = None
            return
        if not prompt.key(key):
            return
        self.prompt = None
        answers = prompt.answers
        if prompt.action is None:
            answer = self.link.sign_in(answers["name"], answers["pin"])
            signed = self.tr("Signed in") + f": {answer.text}"
            self.message = (answer.ok, signed if answer.ok else answer.text)
            return
        approval = (answers.pop("supervisor"), answers.pop("supervisor_pin"))
        approved = approval if prompt.action.supervisor else None
        self._show(self.link.command(prompt.action.command, dict(answers), approved))

    def _show(self, answer: Answer) -> None:
        self.message = (
            answer.ok,
            answer.text if not answer.ok else self.tr("done") + f": {answer.text}",
        )


def run_console(socket_path: Path | None, config_path: Path | None) -> None:
    """Draw the console until Ctrl-C (exit 0)."""

    if not sys.stdin.isatty():
        raise UserError(
            "shoectl console draws the table full screen and reads keys: run it on a terminal "
            "(the console's tty), or follow the table with shoectl monitor --table"
        )
    path = service_socket(socket_path, config_path)
    config = load_config(config_path) if config_path is not None else TableConfig()
    language = config.console.language
    changed = threading.Event()
    link = ConsoleLink(path, on_change=changed.set)
    app = ConsoleApp(link, config.roles.console_idle_s, translator(language))

    def frame() -> Any:
        board, status, connected, person = link.snapshot()
        prompt = app.prompt
        shown = None if prompt is None else PromptShown(prompt.title, prompt.current, prompt.typed)
        who = None if person is None else (person.name, person.role)
        return render_console(
            ConsoleFrame(board, status, connected, who, app.message, shown, language)
        )

    descriptor = sys.stdin.fileno()
    saved = termios.tcgetattr(descriptor)
    tty.setcbreak(descriptor)
    link.start()
    try:
        with Live(frame(), console=Console(), screen=True, auto_refresh=False) as live:
            while True:
                ready, _, _ = select.select([descriptor], [], [], POLL_S)
                if ready:
                    for key in os.read(descriptor, 64).decode(errors="ignore"):
                        app.key(key)
                    changed.set()
                app.check_idle()
                if changed.is_set():
                    changed.clear()
                    live.update(frame(), refresh=True)
    except KeyboardInterrupt:
        return
    finally:
        link.stop()
        termios.tcsetattr(descriptor, termios.TCSADRAIN, saved)
