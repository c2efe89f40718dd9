"""The technician's tools for line readers: raw lines as they come, and a listening self-test.

A line reader cannot be asked anything; it only talks when a card passes it.
So `shoectl monitor URL --raw` prints every line exactly as it arrived
(escaped, terminator included when no profile says what ends a line) with
what the profile made of it, which is how a profile for an unknown reader
gets written; and `shoectl selftest URL --profile FILE` listens while a few
cards are drawn and reports what it saw against the profile.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import click

from cardshoe.controller.errors import EXIT_BAD_INPUT, UserError
from cardshoe.controller.service.device_access import device_user_error, quiet_device_logs
from cardshoe.drivers.errors import DriverError
from cardshoe.drivers.hid.family import KeyboardLineSource
from cardshoe.drivers.hid.usb_keyboard import KeyboardReports
from cardshoe.drivers.line.checksum import Checksum
from cardshoe.drivers.line.family import open_serial_lines, profile_splitter
from cardshoe.drivers.line.link import LineSource
from cardshoe.drivers.line.matching import LineKind, LineMatch, match_line, printable
from cardshoe.drivers.line.profile import LineProfile, LineProfileError, load_profile_file
from cardshoe.drivers.line.splitting import LineSplitter, Overlong
from cardshoe.drivers.transports.base import USB_URL_SCHEME

UNKNOWN_TERMINATOR = b"\n"
"""Without a profile, lines are cut at LF and shown with whatever came before it (a CR)."""
UNKNOWN_MAX_LENGTH = 256


def load_profile(path: Path) -> LineProfile:
    try:
        return load_profile_file(path)
    except LineProfileError as exc:
        raise UserError(str(exc), EXIT_BAD_INPUT) from None


def open_reader_lines(
    url: str, baud: int, splitter: LineSplitter, usb_backend: Any = None
) -> LineSource:
    """A serial reader's lines, or a keyboard reader's at a usb:// URL (Enter ends a line)."""
    if url.startswith(USB_URL_SCHEME):
        reports = KeyboardReports.open(url, backend=usb_backend)
        return KeyboardLineSource(reports, splitter.max_length)
    return open_serial_lines(url, baud, splitter)


@contextmanager
def opened_lines(
    url: str, baud: int, splitter: LineSplitter, usb_backend: Any = None
) -> Iterator[LineSource]:
    with quiet_device_logs():
        try:
            lines = open_reader_lines(url, baud, splitter, usb_backend)
        except DriverError as exc:
            raise device_user_error(exc) from exc
        try:
            yield lines
        finally:
            lines.close()


def _read(lines: LineSource) -> list[bytes | Overlong]:
    try:
        return lines.read()
    except DriverError as exc:
        raise device_user_error(exc) from exc


def _matched(line: bytes | Overlong, profile: LineProfile) -> LineMatch:
    if isinstance(line, Overlong):
        return LineMatch(LineKind.TOO_LONG, printable(line.head) + "...")
    return match_line(line, profile)


def monitor_raw(
    url: str,
    profile_path: Path | None,
    baud: int,
    count: int | None,
    as_json: bool,
    usb_backend: Any = None,
) -> None:
    """Print each line and what it matched (with a profile) until count lines or Ctrl-C."""
    profile = load_profile(profile_path) if profile_path is not None else None
    if profile is not None:
        baud, splitter = profile.baud, profile_splitter(profile)
    else:
        splitter = LineSplitter(UNKNOWN_TERMINATOR, UNKNOWN_MAX_LENGTH)
    shown = 0
    with opened_lines(url, baud, splitter, usb_backend) as lines:
        while count is None or shown < count:
            for line in _read(lines):
                click.echo(_raw_record(line, profile, as_json))
                shown += 1
                if count is not None and shown >= count:
                    return


def _raw_record(line: bytes | Overlong, profile: LineProfile | None, as_json: bool) -> str:
    if profile is None:
        text = printable(line.head) + "..." if isinstance(line, Overlong) else printable(line)
        meaning, kind, card = "(no profile)", None, None
    else:
        found = _matched(line, profile)
        text, meaning, kind = found.text, found.describe(), found.kind.value
        card = None if found.card is None else str(found.card)
    if as_json:
        return json.dumps({"line": text, "kind": kind, "card": card, "matched": meaning})
    return f"{quoted(text):<28} {meaning}"


def quoted(text: str) -> str:
    """The escaped line between quotes: what was on the wire, byte for byte."""
    return f"'{text}'"


@dataclass(frozen=True)
class LineCheck:
    name: str
    passed: bool
    detail: str


def listen_checks(
    url: str,
    profile: LineProfile,
    listen_s: float,
    clock: Callable[[], float] = time.monotonic,
    usb_backend: Any = None,
) -> list[LineCheck]:
    """Open the reader, listen for listen_s seconds, and judge what came."""
    kinds: Counter[LineKind] = Counter()
    examples: dict[LineKind, str] = {}
    with opened_lines(url, profile.baud, profile_splitter(profile), usb_backend) as lines:
        how = "as a USB keyboard" if url.startswith(USB_URL_SCHEME) else f"at {profile.baud} baud"
        checks = [LineCheck("port", True, f"{url} opened {how}")]
        deadline = clock() + listen_s
        while clock() < deadline:
            for line in _read(lines):
                found = _matched(line, profile)
                kinds[found.kind] += 1
                examples.setdefault(found.kind, found.text)
    total = sum(kinds.values())
    checks.append(
        LineCheck(
            "lines",
            total > 0,
            f"{total} lines in {listen_s:g} s"
            if total
            else f"no line in {listen_s:g} s: draw a few cards past the reader while it listens, "
            "and check the cable and the baud rate",
        )
    )
    bad = {kind: n for kind, n in kinds.items() if kind.bad}
    seen = ", ".join(f"{n} {kind.value.replace('_', ' ')}" for kind, n in sorted(kinds.items()))
    checks.append(
        LineCheck(
            "profile",
            total > 0 and not bad,
            seen
            if not bad
            else f"{seen}; for example {examples[next(iter(bad))]!r}: "
            "see it with `shoectl monitor URL --raw`",
        )
    )
    if profile.checksum is not Checksum.NONE:
        failed = kinds[LineKind.BAD_CHECKSUM]
        checks.append(
            LineCheck(
                "checksum",
                total > 0 and not failed,
                f"{failed} of {total} lines failed the {profile.checksum.value} checksum",
            )
        )
    return checks


def show_checks(checks: list[LineCheck], url: str, as_json: bool) -> bool:
    passed = all(check.passed for check in checks)
    if as_json:
        record = {
            "device": {"url": url, "protocol": "line"},
            "passed": passed,
            "checks": [asdict(check) for check in checks],
        }
        click.echo(json.dumps(record))
    else:
        for check in checks:
            click.echo(f"{'PASS' if check.passed else 'FAIL'}  {check.name}: {check.detail}")
    return passed
