"""The table console drawn with rich: the live table, who is signed in, the hold panel, the
keys the table accepts now, the last answer, and the prompt being typed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.text import Text

from cardshoe.controller.display.rich_view import render_board
from cardshoe.controller.scoreboard.board import TableBoard
from cardshoe.controller.service.console_view import Field, hold_panel, key_bar, offered


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


def render_console(frame: ConsoleFrame) -> RenderableType:
    parts: list[RenderableType] = [_who(frame)]
    if not frame.connected:
        parts.append(
            Text("service restarting: reconnecting…", style="bold white on red", justify="center")
        )
    parts.append(render_board(frame.board))
    holds = hold_panel(frame.status)
    if holds:
        lines = [Text(what, style="bold") for what, _ in holds]
        lines += [Text(f"→ {todo}") for _, todo in holds]
        parts.append(Panel(Group(*lines), title="On hold", border_style="red", title_align="left"))
    parts.append(_keys(frame))
    if frame.message is not None:
        accepted, text = frame.message
        parts.append(Text(text, style="green" if accepted else "bold red"))
    if frame.prompt is not None:
        parts.append(_prompt(frame.prompt))
    return Group(*parts)


def _who(frame: ConsoleFrame) -> Text:
    if frame.person is None:
        return Text("Nobody is signed in: press i, then type your name and PIN", style="bold")
    name, role = frame.person
    dealer = None if frame.status is None else frame.status.get("dealer")
    table_dealer = f" · dealer at the table: {dealer}" if dealer and dealer != name else ""
    return Text(f"Signed in: {name} ({role}){table_dealer}", style="bold")


def _keys(frame: ConsoleFrame) -> Panel:
    signed_in = frame.person is not None
    actions = offered(frame.status, signed_in) if frame.connected else []
    keys = key_bar(actions, signed_in)
    text = Text()
    for key, label in keys:
        text.append(f" {key} ", style="bold black on white")
        text.append(f" {label}   ")
    return Panel(text, title="Keys", title_align="left")


def _prompt(prompt: PromptShown) -> Panel:
    field = prompt.field
    typed = "*" * len(prompt.typed) if field.secret else prompt.typed
    lines: Sequence[Text] = [
        Text.assemble((f"{field.label}: ", "bold"), typed, ("▏", "blink")),
        Text(
            ("choices: " + ", ".join(field.choices) + " · " if field.choices else "")
            + "Enter to confirm · Esc to cancel",
            style="dim",
        ),
    ]
    return Panel(Group(*lines), title=prompt.title, border_style="yellow", title_align="left")
