"""What one line from a reader says: a pure function from its bytes and the profile.

The order of the checks is the order of trust: a line too long is not
read at all, a line whose checksum fails is not matched, and only then is
its text tried against the profile's patterns, card first.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from cardshoe.drivers.api.events import CardId, CardIdError
from cardshoe.drivers.line.cards import card_from_parts
from cardshoe.drivers.line.checksum import checked_body
from cardshoe.drivers.line.profile import LineProfile
from cardshoe.drivers.text_input import whole_number


class LineKind(StrEnum):
    """What a line turned out to be; BAD_KINDS are bad lines.

    UNKNOWN_CODE is no bad line: a card passed the reader, whose code no table names,
    so it is a misread card for the table to deal with."""

    CARD = "card"
    CUT_CARD = "cut_card"
    BUTTON = "button"
    FAULT = "fault"
    TOO_LONG = "too_long"
    BAD_CHECKSUM = "bad_checksum"
    NOT_ASCII = "not_ascii"
    UNKNOWN_CODE = "unknown_code"
    UNMATCHED = "unmatched"

    @property
    def bad(self) -> bool:
        return self in BAD_KINDS


BAD_KINDS = frozenset(
    {
        LineKind.TOO_LONG,
        LineKind.BAD_CHECKSUM,
        LineKind.NOT_ASCII,
        LineKind.UNMATCHED,
    }
)


@dataclass(frozen=True)
class LineMatch:
    """One line read: its kind, and the card or fault code it carried."""

    kind: LineKind
    text: str
    """The line as printable text (bad bytes escaped), for logs and `monitor --raw`."""
    card: CardId | None = None
    fault_code: int = 0

    def describe(self) -> str:
        """What the line matched, in a technician's words."""
        if self.card is not None:
            return f"card {self.card}"
        if self.kind is LineKind.FAULT:
            return f"fault {self.fault_code}"
        return self.kind.value.replace("_", " ")


def printable(line: bytes) -> str:
    return line.decode("ascii", "backslashreplace").encode("unicode_escape").decode("ascii")


def match_line(line: bytes, profile: LineProfile) -> LineMatch:
    """Classify one line, its terminator already removed."""
    shown = printable(line)
    if len(line) > profile.max_length:
        return LineMatch(LineKind.TOO_LONG, shown[: profile.max_length] + "...")
    body = checked_body(line, profile.checksum)
    if body is None:
        return LineMatch(LineKind.BAD_CHECKSUM, shown)
    try:
        text = body.decode("ascii")
    except UnicodeDecodeError:
        return LineMatch(LineKind.NOT_ASCII, shown)
    return _match_text(text, shown, profile)


def _match_text(text: str, shown: str, profile: LineProfile) -> LineMatch:
    found = profile.card.search(text)
    if found is not None:
        return _card(found.groupdict(), shown, profile)
    for kind, pattern in (
        (LineKind.CUT_CARD, profile.cut_card),
        (LineKind.BUTTON, profile.button),
    ):
        if pattern is not None and pattern.search(text):
            return LineMatch(kind, shown)
    if profile.fault is not None:
        found = profile.fault.search(text)
        if found is not None:
            code = whole_number(found.groupdict().get("code") or "0", 9)
            if code is not None:
                return LineMatch(LineKind.FAULT, shown, fault_code=code)
    return LineMatch(LineKind.UNMATCHED, shown)


def _card(groups: dict[str, str | None], shown: str, profile: LineProfile) -> LineMatch:
    if profile.cards is not None:
        face = profile.cards.get(groups.get("code") or "")
        if face is None:
            return LineMatch(LineKind.UNKNOWN_CODE, shown)
        return LineMatch(LineKind.CARD, shown, card=face)
    try:
        face = card_from_parts(groups["rank"] or "", groups["suit"] or "")
    except CardIdError:
        return LineMatch(LineKind.UNMATCHED, shown)
    return LineMatch(LineKind.CARD, shown, card=face)
