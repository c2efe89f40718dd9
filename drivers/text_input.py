"""Numbers and JSON read from text that a person, a file, a device or a client wrote.

Each fails in one way only, so that a caller's one check turns any bad text into a one-line
refusal: str.isdigit() says yes to "²", which int() refuses; int() refuses text longer than
4,300 digits, and json.loads raises that as a bare ValueError, not a JSONDecodeError; and
JSON nested a few thousand levels deep raises RecursionError. Each of these had reached a
caller as a crash where a refusal was due. The drivers are cardshoe's lowest layer, so the
controller, the drivers and the simulator read such text through these functions alone.

What makes a character a control, one that commands a terminal or breaks a line, is defined
here too: the wire refuses such text, and what prints text for a person escapes it.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any

CONTROL_CATEGORIES = frozenset({"Cc", "Zl", "Zp"})
"""Unicode categories that command a terminal or end a line: the C0 and C1 controls (ESC,
CSI, NEL), DEL, and the line and paragraph separators."""


def is_control(char: str) -> bool:
    return unicodedata.category(char) in CONTROL_CATEGORIES


MAX_DIGITS = 19
"""Enough for any id the journal or the floor keeps (a signed 64-bit integer)."""


def whole_number(text: str, max_digits: int = MAX_DIGITS) -> int | None:
    """The number `text` writes in 1 to max_digits ASCII digits, without sign or spaces;
    None for anything else."""
    if text.isascii() and text.isdigit() and len(text) <= max_digits:
        return int(text)
    return None


def json_value(text: str | bytes) -> Any:
    """json.loads, raising ValueError for anything it cannot read: bytes that are not UTF-8,
    text that is not JSON, an integer too long or nesting too deep."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deep") from None
