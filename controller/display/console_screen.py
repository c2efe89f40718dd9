"""The table console drawn with rich: the live table, who is signed in, the hold panel, the
keys the table accepts now, the last answer, and the prompt being typed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.text import Text

from cardshoe.controller.config import ConsoleLanguage
from cardshoe.controller.display.rich_view import render_board
from cardshoe.controller.one_line import escape_line_breaks
from cardshoe.controller.scoreboard.board import TableBoard
from cardshoe.controller.service.console_view import Field, hold_panel, key_bar, offered
from cardshoe.controller.service.console_words import translator


@dataclass(frozen=True)
class PromptShown:
    """The question being answered, and what has been typed (a PIN shows as stars)."""

    title: str
    field: Field
    typed: str


@dataclass(frozen=True)
class ConsoleFrame:
    """Everything one drawing of the console shows."""

    board: TableBoard
    status: dict[str, Any] | None
    connected: bool
    person: tuple[str, str] | None
    """The signed-in person's name and role."""
    message: tuple[bool, str] | None
    """The last answer: accepted or refused, and its words."""
    prompt: PromptShown | None
    language: ConsoleLanguage = ConsoleLanguage.EN


def render_console(frame: ConsoleFrame) -> RenderableType:
    tr = translator(frame.language)
    parts: list[RenderableType] = [_who(frame)]
    if not frame.connected:
        restarting = tr("service restarting: reconnecting…")
        parts.append(Text(restarting, style="bold white on red", justify="center"))
    parts.append(render_board(frame.board))
    holds = hold_panel(frame.status, frame.language)
    if holds:
        lines = [Text(what, style="bold") for what, _ in holds]
        lines += [Text(f"→ {todo}") for _, todo in holds]
        title = tr("On hold")
        parts.append(Panel(Group(*lines), title=title, border_style="red", title_align="left"))
    parts.append(_keys(frame))
    if frame.message is not None:
        accepted, text = frame.message
        # A refusal repeats what was typed, which may hold a control character.
        parts.append(Text(escape_line_breaks(text), style="green" if accepted else "bold red"))
    if frame.prompt is not None:
        parts.append(_prompt(frame.prompt, tr))
    return Group(*parts)


def _who(frame: ConsoleFrame) -> Text:
    tr = translator(frame.language)
    if frame.person is None:
        return Text(tr("Nobody is signed in: press i, then type your name and PIN"), style="bold")
    name, role = frame.person
    dealer = None if frame.status is None else frame.status.get("dealer")
    at_table = tr("dealer at the table")
    table_dealer = f" · {at_table}: {dealer}" if dealer and dealer != name else ""
    return Text(tr("Signed in") + f": {name} ({tr(role)}){table_dealer}", style="bold")


def _keys(frame: ConsoleFrame) -> Panel:
    tr = translator(frame.language)
    signed_in = frame.person is not None
    actions = offered(frame.status, signed_in) if frame.connected else []
    text = Text()
    for key, label in key_bar(actions, signed_in, tr):
        text.append(f" {key} ", style="bold black on white")
        text.append(f" {label}   ")
    return Panel(text, title=tr("Keys"), title_align="left")


def _prompt(prompt: PromptShown, tr: Callable[[str], str]) -> Panel:
    field = prompt.field
    typed = "*" * len(prompt.typed) if field.secret else prompt.typed
    choices = tr("choices") + f": {', '.join(field.choices)} · " if field.choices else ""
    lines: Sequence[Text] = [
        Text.assemble((f"{tr(field.label)}: ", "bold"), typed, ("▏", "blink")),
        Text(choices + tr("Enter to confirm · Esc to cancel"), style="dim"),
    ]
    return Panel(Group(*lines), title=tr(prompt.title), border_style="yellow", title_align="left")
