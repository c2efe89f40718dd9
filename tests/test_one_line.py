"""one_line: any text printed on one line, and JSON that reads back as the value it printed."""

from __future__ import annotations

import json

from hypothesis import example, given
from hypothesis import strategies as st

from cardshoe.controller.one_line import escape_line_breaks, json_line


@given(st.recursive(st.text() | st.integers(), lambda inner: st.lists(inner, max_size=3)))
@example(["\x85", "\u2028", "\u2029", "\x9b[31m", "\x7f"])
def test_json_line_is_one_line_and_reads_back_as_the_value(value: object) -> None:
    line = json_line(value)
    assert line.splitlines() == [line]
    assert json.loads(line) == value


def test_text_a_person_reads_stays_as_typed() -> None:
    assert escape_line_breaks("百家乐 Punto Banco") == "百家乐 Punto Banco"
    assert escape_line_breaks("a\u2028b") == "a\\u2028b"
