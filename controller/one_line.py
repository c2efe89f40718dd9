"""Text that stays on one line whatever it holds, for a terminal or a line-oriented file.

JSON escapes the C0 controls but leaves DEL, the C1 controls (NEL, and CSI, which a
terminal takes as the start of a command) and the Unicode line and paragraph
separators as typed. A journal's payloads and a configuration's values can hold
any of them, and a record printed across two lines is two records to the tool
that reads it, so whatever prints them escapes these too.
"""

from __future__ import annotations

import json
from typing import Any

from cardshoe.drivers.text_input import is_control


def escape_line_breaks(text: str) -> str:
    """text with each line-breaking or control character as a \\uXXXX escape, the rest as
    typed (a game name in Chinese stays readable)."""
    return "".join(f"\\u{ord(each):04x}" if is_control(each) else each for each in text)


def json_line(value: Any, *, sort_keys: bool = False) -> str:
    """value as JSON on one line, non-ASCII text as typed: still JSON, as the escapes land
    only inside its strings, where JSON reads them back as the same characters."""
    return escape_line_breaks(json.dumps(value, ensure_ascii=False, sort_keys=sort_keys))
