"""Cut a reader's byte stream into lines at its terminator, with a bound on length.

A reader that never sends its terminator (a wrong profile, a stuck key)
must not make the host buffer without end: past the bound the splitter
gives up the line, reports it once as Overlong, and skips to the next
terminator.
"""

from __future__ import annotations

from dataclasses import dataclass, field

CHECKSUM_ROOM = 8
"""Bytes beyond max_length a line may still carry (its checksum) before it is cut."""


@dataclass(frozen=True)
class Overlong:
    """A line that grew past the bound without a terminator; `head` is how it began."""

    head: bytes


@dataclass
class LineSplitter:
    terminator: bytes
    max_length: int
    _buffer: bytearray = field(default_factory=bytearray)
    _skipping: bool = False

    def feed(self, data: bytes) -> list[bytes | Overlong]:
        """The lines completed by `data` (terminators removed), in order."""
        self._buffer += data
        lines: list[bytes | Overlong] = []
        while (end := self._buffer.find(self.terminator)) >= 0:
            line = bytes(self._buffer[:end])
            del self._buffer[: end + len(self.terminator)]
            if self._skipping:
                self._skipping = False
            else:
                lines.append(line)
        if not self._skipping and len(self._buffer) > self.max_length + CHECKSUM_ROOM:
            lines.append(Overlong(bytes(self._buffer[: self.max_length])))
            self._skipping = True
        if self._skipping:
            # Keep what could be the start of a terminator split across reads.
            keep = len(self.terminator) - 1
            del self._buffer[: max(0, len(self._buffer) - keep)]
        return lines
