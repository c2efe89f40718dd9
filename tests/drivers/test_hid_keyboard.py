"""Boot keyboard reports as a barcode reader types them, decoded with the US layout.

The reports are written out byte by byte from the HID Usage Tables (page 0x07),
so the decoder is checked against the standard, not against the simulator's encoder.
"""

from __future__ import annotations

import pytest

from cardshoe.drivers.hid.boot_keyboard import BootReport, KeyboardLines, ReportError

RELEASE = bytes(8)


def report(*keys: int, modifiers: int = 0) -> BootReport:
    return BootReport.parse(bytes([modifiers, 0, *keys, *[0] * (6 - len(keys))]))


def typed(*reports: BootReport) -> list[str]:
    decoder = KeyboardLines()
    lines: list[str] = []
    for each in reports:
        lines += decoder.feed(each)
    return lines


def test_a_card_line_typed_with_shift_and_enter() -> None:
    # "CAS*11" then Enter: C=0x06, A=0x04, S=0x16 with left shift, '*' is shift+8 (0x25).
    keys = [(0x06, 0x02), (0x04, 0x02), (0x16, 0x02), (0x25, 0x02), (0x1E, 0), (0x1E, 0)]
    reports = []
    for code, modifiers in keys:
        reports += [report(code, modifiers=modifiers), BootReport.parse(RELEASE)]
    reports += [report(0x28), BootReport.parse(RELEASE)]
    assert typed(*reports) == ["CAS*11"]


def test_right_shift_counts_as_shift_and_no_shift_is_lower_case() -> None:
    assert typed(report(0x0B, modifiers=0x20), report(0x0B), report(0x28)) == ["H"]
    assert typed(report(0x0B), report(), report(0x0B), report(), report(0x28)) == ["hh"]


def test_a_key_held_over_two_reports_types_once() -> None:
    assert typed(report(0x1F), report(0x1F), report(0x1F, 0x20), report(), report(0x58)) == ["23"]


def test_keypad_digits_and_enter() -> None:
    assert typed(report(0x59), report(0x62), report(), report(0x58)) == ["10"]


def test_an_unknown_key_spoils_the_line_instead_of_vanishing() -> None:
    assert typed(report(0x06), report(0x3A), report(), report(0x28)) == ["c\ufffd"]


def test_error_roll_over_types_nothing() -> None:
    assert typed(report(0x01, 0x01, 0x01, 0x01, 0x01, 0x01), report(), report(0x28)) == [""]


def test_what_is_typed_before_enter_waits() -> None:
    decoder = KeyboardLines()
    assert decoder.feed(report(0x17, modifiers=0x02)) == []
    assert decoder.pending == "T"


@pytest.mark.parametrize("size", [0, 7, 9, 64])
def test_a_report_of_the_wrong_size_is_refused(size: int) -> None:
    with pytest.raises(ReportError, match=f"a boot keyboard report is 8 bytes, got {size}"):
        BootReport.parse(bytes(size))
