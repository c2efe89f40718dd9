"""The table as plain text lines, one per event: the display off a terminal.

Logs, pipes and CI read these; they take the same journal-form events as the
board (kind and payload), so a service's event stream prints the same lines.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from cardshoe.controller import record_kinds
from cardshoe.controller.one_line import escape_line_breaks
from cardshoe.controller.procedure.facts import TableEvent
from cardshoe.controller.scoreboard.round_recall import correction_text

FLAGS = ("natural", "player_pair", "banker_pair")


def _cards(cards: list[str | None]) -> str:
    return " ".join(card or "??" for card in cards) or "-"


def _shoe_started(p: Mapping[str, Any]) -> str:
    return (
        f"shoe {p['shoe_id']} started: {p['game']}, {p['decks']} decks, "
        f"{p['device_kind']}, options {p['fingerprint'][:12]}"
    )


def _burned(p: Mapping[str, Any]) -> str:
    left = "" if p["burn_remaining"] is None else f", {p['burn_remaining']} to go"
    return f"burn {p['card'] or '??'} ({p['reason']}{left})"


def _result(p: Mapping[str, Any]) -> str:
    flags = [flag.replace("_", " ") for flag in FLAGS if p[flag]]
    if p["sevens"]:
        flags.append(f"sevens {p['sevens']}")
    if p["demo"]:
        flags.append("demonstration")
    notes = f" ({', '.join(flags)})" if flags else ""
    winner = "tie" if p["winner"] == "tie" else f"{p['winner']} wins"
    return (
        f"round {p['round_no']}: player {_cards(p['player'])} = {p['player_total']}, "
        f"banker {_cards(p['banker'])} = {p['banker_total']}: {winner}{notes}"
    )


def _shoe_ended(p: Mapping[str, Any]) -> str:
    remaining = "unknown" if p["remaining"] is None else p["remaining"]
    verdict = "reconciled" if p["reconciled"] else "NOT reconciled"
    return (
        f"shoe {p['shoe_id']} ended after {p['rounds']} rounds: loaded {p['loaded']}, "
        f"dealt {p['dealt']}, burned {p['burned']}, returned {p['returned']}, "
        f"remaining {remaining}: {verdict}"
    )


LINES: dict[str, Callable[[Mapping[str, Any]], str]] = {
    record_kinds.SHOE_STARTED: _shoe_started,
    record_kinds.SHOE_SHUFFLED: lambda p: f"the machine shuffled {p['card_count']} cards",
    record_kinds.CARD_BURNED: _burned,
    record_kinds.SHOE_LAST_ROUND: lambda p: f"round {p['last_round']} is the last ({p['cause']})",
    record_kinds.SHOE_RELIEF_BURN_DUE: lambda p: (
        f"{p['dealer'] or 'a dealer'} relieves {p['relieves']}: {p['cards']} card(s) burn "
        f"before round {p['before_round']} is dealt"
    ),
    record_kinds.CARD_ASSIGNED: lambda p: f"round {p['round_no']}: {p['card']} to {p['to']}",
    record_kinds.CARD_SET_ASIDE: lambda p: (
        f"round {p['round_no']}: {p['card'] or '??'} set aside ({p['reason']})"
    ),
    record_kinds.ROUND_RESULT: _result,
    record_kinds.ROUND_VOID: lambda p: f"round {p['round_no']}: VOID ({p['reason']})",
    record_kinds.ROUND_CARDS_RETURNED: lambda p: (
        f"the machine took back {p['counted']} cards ({p['expected']} expected)"
    ),
    record_kinds.IRREGULARITY: lambda p: (
        f"irregularity {p['code']} in round {p['round_no']}: {p['consequence']} ({p['detail']})"
    ),
    record_kinds.CARD_CORRECTED: lambda p: f"round {p['round_no']}: {correction_text(p)}",
    record_kinds.HOLD_STARTED: lambda p: f"HOLD {p['reason']} (while {p['held_state']})",
    record_kinds.HOLD_ENDED: lambda p: (
        f"hold {p['reason']} ended"
        + (f"; still held: {', '.join(p['holds_left'])}" if p["holds_left"] else "")
    ),
    record_kinds.ALARM: lambda p: f"ALARM {p['kind']}: {p['detail']}",
    record_kinds.SHOE_ENDED: _shoe_ended,
}
"""Event kind -> its line; kinds not here (round opened, bets closed, ...) print nothing."""


def plain_line(kind: str, payload: Mapping[str, Any]) -> str | None:
    """The line for one event in journal form, or None for a kind that prints nothing."""
    line = LINES.get(kind)
    return None if line is None else escape_line_breaks(line(payload))


class PlainLines:
    """An observer handing one line per table event (no line break) to `write`."""

    def __init__(self, write: Callable[[str], None]) -> None:
        self._write = write

    def notify(self, event: TableEvent) -> None:
        line = plain_line(event.KIND, event.payload())
        if line is not None:
            self._write(line)
