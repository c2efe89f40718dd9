"""Boot-protocol keyboard reports -> typed lines, as a pure decoder.

A boot keyboard report is 8 bytes: the modifier bits, a reserved byte,
then up to six usage codes of the keys held down (docs/drivers.md). A key
types its character when it appears in a report and was not in the one
before; an all-zero report releases everything, so a reader can type the
same character twice. Enter ends the line. A key with no character on the
layout is kept in the line as U+FFFD, so the line then matches nothing and
is counted as bad rather than silently read as another code.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from cardshoe.drivers.hid.us_layout import ENTER_KEYS, SHIFT_BITS, US_KEYS

REPORT_SIZE = 8
ERROR_ROLL_OVER = 0x01
"""Sent in every key slot when too many keys are held: no key can be trusted."""
UNKNOWN_KEY = "\ufffd"


class ReportError(ValueError):
    """Bytes that are no boot keyboard report."""


@dataclass(frozen=True)
class BootReport:
    modifiers: int
    keys: tuple[int, ...]
    """Usage codes held down, zeros left out, in the report's order."""

    @classmethod
    def parse(cls, data: bytes) -> BootReport:
        if len(data) != REPORT_SIZE:
            raise ReportError(f"a boot keyboard report is {REPORT_SIZE} bytes, got {len(data)}")
        return cls(data[0], tuple(code for code in data[2:] if code))

    @property
    def shifted(self) -> bool:
        return bool(self.modifiers & SHIFT_BITS)


@dataclass
class KeyboardLines:
    """Feed reports in; complete lines (without the Enter) come out."""

    layout: Mapping[int, tuple[str, str]] = field(default_factory=lambda: US_KEYS)
    _held: frozenset[int] = frozenset()
    _line: list[str] = field(default_factory=list)

    def feed(self, report: BootReport) -> list[str]:
        if ERROR_ROLL_OVER in report.keys:
            return []
        lines = []
        for code in report.keys:
            if code in self._held:
                continue
            if code in ENTER_KEYS:
                lines.append("".join(self._line))
                self._line.clear()
                continue
            pair = self.layout.get(code)
            self._line.append(UNKNOWN_KEY if pair is None else pair[report.shifted])
        self._held = frozenset(report.keys)
        return lines

    @property
    def pending(self) -> str:
        """What has been typed since the last Enter."""
        return "".join(self._line)

    def drop_pending(self) -> str:
        """Give up the line being typed (it grew too long) and return it."""
        line = self.pending
        self._line.clear()
        return line
