"""The [device.line] table: how to read one maker's line reader, checked once at start.

A profile is data, so a technician writes one for a reader nobody has seen
before (docs/drivers.md, "Writing a profile"): what ends a line, whether a
checksum follows it, and one regular expression per kind of line. Each
expression is searched in the line's text after the checksum is taken off.
A card line names the card by `rank` and `suit` groups, or by a `code`
group looked up in `cards_file`. Every mistake is one line naming the key.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from cardshoe.drivers.api.events import CardId
from cardshoe.drivers.line.checksum import Checksum
from cardshoe.drivers.line.codes import CardTableError, load_card_table

SECTION = "device.line"
PATTERN_KEYS = ("card", "cut_card", "button", "fault")


class LineProfileError(ValueError):
    """A profile that cannot be used; the message names the key and the fix."""


@dataclass(frozen=True)
class BadLinePolicy:
    """How bad lines are accounted: journaled once per kind per interval; a burst holds."""

    report_interval_s: float = 60.0
    burst_lines: int = 5
    """This many bad lines ..."""
    burst_window_s: float = 10.0
    """... within this many seconds hold the table: the reader or its cable is failing."""


@dataclass(frozen=True)
class LineProfile:
    """A checked profile; patterns compiled, the card table loaded."""

    card: re.Pattern[str]
    cut_card: re.Pattern[str] | None = None
    button: re.Pattern[str] | None = None
    fault: re.Pattern[str] | None = None
    baud: int = 9600
    terminator: bytes = b"\r\n"
    checksum: Checksum = Checksum.NONE
    ack: bytes = b""
    """Written back after each line is journaled; empty: the reader expects nothing."""
    max_length: int = 128
    """Longer lines (without terminator and checksum) are bad lines: a stuck or noisy reader."""
    cards: Mapping[str, CardId] | None = None
    """code -> card, from `cards_file`, when the card pattern has a `code` group."""
    bad_lines: BadLinePolicy = BadLinePolicy()


def _text(key: str, value: object, *, empty_ok: bool = True) -> str:
    if not isinstance(value, str):
        raise LineProfileError(f"{SECTION}.{key} must be a string, got {value!r}")
    if not value.isascii():
        raise LineProfileError(f"{SECTION}.{key} = {value!r}: use ASCII only, as the wire does")
    if not value and not empty_ok:
        raise LineProfileError(f"{SECTION}.{key} is empty: give it a value or remove the key")
    return value


def _whole(key: str, value: object, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise LineProfileError(
            f"{SECTION}.{key} must be a whole number of at least {low}, got {value!r}"
        )
    return value


def _seconds(key: str, value: object) -> float:
    # TOML writes inf and nan too: neither is a number of seconds (nan is not even below 0).
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < math.inf:
        raise LineProfileError(f"{SECTION}.{key} must be a number of seconds, got {value!r}")
    return float(value)


def _pattern(key: str, value: object) -> re.Pattern[str] | None:
    text = _text(key, value)
    if not text:
        return None
    try:
        return re.compile(text)
    except re.error as exc:
        raise LineProfileError(f"{SECTION}.{key} is not a regular expression: {exc}") from None


def _card_pattern(
    data: Mapping[str, Any], base_dir: Path
) -> tuple[re.Pattern[str], Mapping[str, CardId] | None]:
    """The card pattern, and the card table its `code` group is looked up in (if it has one)."""
    if "card" not in data:
        raise LineProfileError(
            f"{SECTION}.card is missing: give the pattern of a card line, "
            "e.g. '^C(?P<rank>[A2-9TJQK])(?P<suit>[SHDC])$'"
        )
    card = _pattern("card", data["card"])
    if card is None:
        raise LineProfileError(f"{SECTION}.card is empty: give the pattern of a card line")
    groups = set(card.groupindex)
    cards_file = data.get("cards_file")
    if "code" in groups:
        if cards_file is None:
            raise LineProfileError(
                f"{SECTION}.card has a `code` group but no cards_file says what each code is: "
                'add cards_file = "cards.csv" (rows `code,card`)'
            )
        path = base_dir / _text("cards_file", cards_file, empty_ok=False)
        try:
            return card, load_card_table(path)
        except CardTableError as exc:
            raise LineProfileError(f"{SECTION}.cards_file: {exc}") from None
    if not {"rank", "suit"} <= groups:
        raise LineProfileError(
            f"{SECTION}.card needs named groups `rank` and `suit` (or `code` with a "
            "cards_file), e.g. '^C(?P<rank>[A2-9TJQK])(?P<suit>[SHDC])$'"
        )
    if cards_file is not None:
        raise LineProfileError(
            f"{SECTION}.cards_file is given but the card pattern has no `code` group to look up"
        )
    return card, None


_KNOWN_KEYS = frozenset(
    {
        *PATTERN_KEYS,
        "baud",
        "terminator",
        "checksum",
        "ack",
        "cards_file",
        "max_length",
        "report_interval_s",
        "burst_lines",
        "burst_window_s",
    }
)


EXAMPLE_TABLE: Mapping[str, Any] = MappingProxyType(
    {
        "baud": 9600,
        "terminator": "\r\n",
        "checksum": "nmea",
        "card": "^C(?P<rank>[A2-9TJQK])(?P<suit>[SHDC])$",
        "cut_card": "^CUT$",
        "button": "^BTN$",
        "fault": "^E(?P<code>[0-9]+)$",
        "ack": "",
    }
)
"""The profile of docs/examples/line-shoe.toml (a test holds the two equal): what `shoectl
demo --protocol line` reads when the table's configuration names no line reader."""


def parse_line_profile(data: Mapping[str, Any], base_dir: Path) -> LineProfile:
    """The profile in a [device.line] table; `cards_file` is relative to `base_dir`."""
    unknown = sorted(set(data) - _KNOWN_KEYS)
    if unknown:
        raise LineProfileError(
            f"{SECTION} has unknown key {unknown[0]!r}: "
            f"the keys are {', '.join(sorted(_KNOWN_KEYS))}"
        )
    card, cards = _card_pattern(data, base_dir)
    fault = _pattern("fault", data.get("fault", ""))
    checksum_name = _text("checksum", data.get("checksum", "none"))
    try:
        checksum = Checksum(checksum_name)
    except ValueError:
        raise LineProfileError(
            f'{SECTION}.checksum = {checksum_name!r}: use "none" or "nmea"'
        ) from None
    defaults = BadLinePolicy()
    return LineProfile(
        card=card,
        cut_card=_pattern("cut_card", data.get("cut_card", "")),
        button=_pattern("button", data.get("button", "")),
        fault=fault,
        baud=_whole("baud", data.get("baud", 9600), 1),
        terminator=_text("terminator", data.get("terminator", "\r\n"), empty_ok=False).encode(),
        checksum=checksum,
        ack=_text("ack", data.get("ack", "")).encode(),
        max_length=_whole("max_length", data.get("max_length", 128), 1),
        cards=MappingProxyType(dict(cards)) if cards is not None else None,
        bad_lines=BadLinePolicy(
            report_interval_s=_seconds(
                "report_interval_s", data.get("report_interval_s", defaults.report_interval_s)
            ),
            burst_lines=_whole("burst_lines", data.get("burst_lines", defaults.burst_lines), 1),
            burst_window_s=_seconds(
                "burst_window_s", data.get("burst_window_s", defaults.burst_window_s)
            ),
        ),
    )


def load_profile_file(path: Path, tables: tuple[str, ...] = ("line", "hid")) -> LineProfile:
    """The reader profile of a TOML file (a table's config, or a profile alone): its first
    [device.<table>] of `tables`, [device.line] or a keyboard reader's [device.hid].

    For tools that read a reader without a whole table around it: `shoectl sim
    --protocol line --profile FILE`, `monitor --raw`, `selftest --profile`.
    """
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise LineProfileError(f"cannot read the profile {path}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise LineProfileError(f"the profile {path} is not TOML: {exc}") from None
    device = data.get("device")
    for table in tables:
        found = device.get(table) if isinstance(device, dict) else None
        if isinstance(found, dict):
            return parse_line_profile(found, path.parent)
    names = " or ".join(f"[device.{table}]" for table in tables)
    raise LineProfileError(f"{path} has no {names} table: see docs/examples/line-shoe.toml")
