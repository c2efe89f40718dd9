"""What the table's console offers and says: its keys, its prompts and its hold panel, as data.

Both the terminal console and the touchscreen page show the same thing, so
what a key does, when it is offered, what it asks for and what a hold means
are decided here once, from the service's status: a command is offered only
when the table accepts it now (the status's "possible", which the procedure's
own transition table gives), and only to a person signed in; a supervisor's
command asks for a supervisor's name and PIN at that moment.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cardshoe.controller.config import ConsoleLanguage
from cardshoe.controller.procedure.corrections import void_reasons_of
from cardshoe.controller.scoreboard.notices import NoticeKind, notice
from cardshoe.controller.service.console_words import N_, Translate, notice_line

SIGN_IN_KEY = "i"
SIGN_OUT_KEY = "o"


@dataclass(frozen=True)
class Field:
    """One thing a prompt asks for."""

    name: str
    label: str
    secret: bool = False
    choices: tuple[str, ...] = ()
    """What may be typed, shown beside the label; the first is the default."""


@dataclass(frozen=True)
class Action:
    """A dealer's or supervisor's command on a key."""

    key: str
    command: str
    label: str
    supervisor: bool = False
    asks: tuple[str, ...] = ()
    """The command's own arguments the console asks for (Field names of fields_for)."""


ACTIONS: tuple[Action, ...] = (
    Action("n", "new-shoe", N_("new shoe")),
    Action("l", "shoe-loaded", N_("shoe loaded")),
    Action("c", "cut-done", N_("cut done")),
    Action("b", "no-more-bets", N_("no more bets")),
    Action("f", "confirm-face-up", N_("confirm face up")),
    Action("e", "end-shoe", N_("end shoe")),
    Action("h", "clear-hold", N_("clear hold"), supervisor=True, asks=("reason",)),
    Action("v", "void-round", N_("void round"), supervisor=True, asks=("reason",)),
    Action("k", "enter-card", N_("enter card"), supervisor=True, asks=("card",)),
    Action("a", "abandon-shoe", N_("abandon shoe"), supervisor=True, asks=("reason",)),
)
"""Each command the console gives, its key and its words; the order of the key bar."""

SIGN_IN_FIELDS = (Field("name", N_("Your name")), Field("pin", N_("Your PIN"), secret=True))
APPROVAL_FIELDS = (
    Field("supervisor", N_("Supervisor's name")),
    Field("supervisor_pin", N_("Supervisor's PIN"), secret=True),
)


def offered(status: Mapping[str, Any] | None, signed_in: bool) -> list[Action]:
    """The commands on keys now: those the table accepts, for a person signed in."""
    if status is None or not signed_in:
        return []
    possible = set(status.get("possible") or ())
    return [action for action in ACTIONS if action.command in possible]


def action_for(key: str, status: Mapping[str, Any] | None, signed_in: bool) -> Action | None:
    """The command of a key pressed now. A dealer's key the table does not accept now is
    not on screen, but pressed all the same (the screen changed under a finger) it is given,
    so the service's refusal says why in the operator's words; a supervisor's is not, so
    nobody types a PIN for nothing."""
    if not signed_in:
        return None
    shown = {action.key: action for action in offered(status, signed_in)}
    dealers = {action.key: action for action in ACTIONS if not action.supervisor}
    return shown.get(key) or dealers.get(key)


def fields_for(action: Action, status: Mapping[str, Any]) -> tuple[Field, ...]:
    """What the console asks before giving the command: its arguments, then for a
    supervisor's command the supervisor's name and PIN."""
    asked: list[Field] = []
    for name in action.asks:
        if action.command == "clear-hold":
            holds = tuple(status.get("clearable_holds") or ())
            asked.append(Field(name, N_("The hold you checked"), choices=holds))
        elif action.command == "void-round":
            reasons = tuple(str(reason) for reason in void_reasons_of(str(status.get("game"))))
            asked.append(Field(name, N_("Why the round is void"), choices=reasons))
        elif action.command == "enter-card":
            asked.append(Field(name, N_("The card, as 7H or TD")))
        else:
            asked.append(Field(name, N_("Why")))
    return (*asked, *APPROVAL_FIELDS) if action.supervisor else tuple(asked)


def hold_panel(
    status: Mapping[str, Any] | None, language: ConsoleLanguage
) -> list[tuple[str, str]]:
    """Each active hold in the operator's words: what happened, and what to do now."""
    if status is None:
        return []
    notices = [notice(NoticeKind.HOLD, hold) for hold in status.get("holds") or ()]
    return [
        (notice_line(words.what, language), notice_line(words.todo, language)) for words in notices
    ]


def key_bar(actions: Sequence[Action], signed_in: bool, tr: Translate) -> list[tuple[str, str]]:
    """(key, what it does) for the keys shown now, sign-in or sign-out included."""
    keys = [(action.key, tr(action.label)) for action in actions]
    keys.append((SIGN_OUT_KEY, tr("sign out")) if signed_in else (SIGN_IN_KEY, tr("sign in")))
    return keys
