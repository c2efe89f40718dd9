"""Whole numbers read from text that a person, a configuration, a device or a client wrote.

Only ASCII digits 0-9, and no more of them than a number of that kind needs: str.isdigit()
says yes to "²", which int() refuses, and int() refuses text longer than 4,300 digits, so a
check with isdigit() before int() let both through to a ValueError, a crash where a
one-line refusal was due. The drivers are cardshoe's lowest layer, so the controller, the
drivers and the simulator read numbers through this one function.
"""

from __future__ import annotations

MAX_DIGITS = 19
"""Enough for any id the journal or the floor keeps (a signed 64-bit integer)."""


def whole_number(text: str, max_digits: int = MAX_DIGITS) -> int | None:
    """The number `text` writes in 1 to max_digits ASCII digits, without sign or spaces;
    None for anything else."""
    if text.isascii() and text.isdigit() and len(text) <= max_digits:
        return int(text)
    return None
