"""Fault injection: what goes wrong, and when, written `KIND@round=N` or `KIND@card=N`.

A device does not know game rounds, so "round" is defined by what it sees
(docs/simulator.md): on a manual shoe round N begins at the dealer's Nth
BUTTON press; on an automatic machine at the first DEAL_NEXT after power-up,
a SHUFFLE or a RETURN. An injection placed at a round fires when the first
card of that round is about to leave; one placed at card N fires when the
Nth card since the shoe was loaded (burn cards included) is about to leave.
Each injection fires once. `,for=SECONDS` sets how long a jam, an open door,
an unplug or a held-back ACK lasts, and how long the dealer takes to re-read a
misread card.

A scenario file is TOML holding the same strings, so a flag and a file
never mean different things:

    profile = "cs-1"
    seed = 7
    decks = 8
    inject = ["double-feed@round=3", "jam@card=20,for=1.5"]
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from cardshoe.drivers.text_input import whole_number
from cardshoe.firmware_sim.errors import SimConfigError


class InjectionKind(StrEnum):
    FOREIGN_CARD = "foreign-card"
    """A card from another deck set slips in at the exit."""
    DUPLICATE_CARD = "duplicate-card"
    """A second copy of a physical card already dealt from this shoe."""
    DOUBLE_FEED = "double-feed"
    """Two cards leave together, order unknown."""
    DOUBLE_FEED_IN_ORDER = "double-feed-in-order"
    """Two cards leave together, but the reader reads them one after the other (FEED_IN_ORDER):
    their order is known."""
    MISREAD_CARD = "misread-card"
    """The reader cannot read this card (ID_UNREADABLE); the dealer passes it through the
    reader again after the duration, and the re-read reads it."""
    UNREADABLE_CARD = "unreadable-card"
    """This card's code is damaged: unreadable as it leaves, and at every re-read
    (FirmwareCore.reread_card): only a supervisor's entry or a void can put it right."""
    REVERSED_CARD = "reversed-card"
    """A card lies face up inside a manual shoe."""
    FACE_DOWN = "face-down"
    """The automatic machine delivers a card face down."""
    JAM = "jam"
    """The card sticks; the jam clears after the duration."""
    DOOR_OPEN = "door-open"
    EARLY_CUT_CARD = "early-cut-card"
    """The cut card comes out before this card."""
    OUT_OF_CARDS = "out-of-cards"
    """This card is the last one in the shoe."""
    UNPLUG = "unplug"
    """Unplugged right after this card was read, plugged back after the duration."""
    CORRUPT_BYTES = "corrupt-bytes"
    """The first transmission of this card's event has a damaged byte."""
    DROP_FRAME = "drop-frame"
    """The first transmission of this card's event is lost."""
    DUPLICATE_FRAME = "duplicate-frame"
    """This card's event goes out twice back to back."""
    DELAY_ACK = "delay-ack"
    """The device acts on the ACK for this card's event only after the duration."""
    BAD_FIRMWARE_HASH = "bad-firmware-hash"
    """The firmware image no longer matches its recorded hash."""
    GARBLED_LINE = "garbled-line"
    """A line reader's line for this card arrives with a character damaged."""
    BAD_CHECKSUM = "bad-checksum"
    """A line reader's line for this card carries a wrong checksum."""
    DOUBLE_READ = "double-read"
    """A line reader reads this card twice: its line goes out twice."""
    DROPPED_LINE = "dropped-line"
    """A line reader's line for this card never arrives: the card leaves unreported."""
    READER_FAULT = "reader-fault"
    """A line reader writes a fault line (E17) as this card would leave, and the card stays in
    the shoe; the reader writes nothing when the fault passes, so a supervisor clears the
    hold."""
    FIRMWARE_POWER_CUT = "firmware-power-cut"
    """The power fails half-way through the next firmware transfer, and comes back after
    the duration: the device must start again on the firmware it ran before."""


DEFAULT_DURATION_S = {
    InjectionKind.JAM: 1.0,
    InjectionKind.DOOR_OPEN: 1.0,
    InjectionKind.UNPLUG: 1.0,
    InjectionKind.DELAY_ACK: 0.5,
    InjectionKind.MISREAD_CARD: 0.5,
    InjectionKind.FIRMWARE_POWER_CUT: 1.0,
}
"""Kinds that last a while, and for how long unless `,for=` says otherwise."""
MAX_DURATION_S = 3600.0
"""The longest `,for=`: an hour outlasts any test of a hold; a longer fault is a typing slip."""

LINE_READER_KINDS = frozenset(
    {
        InjectionKind.GARBLED_LINE,
        InjectionKind.BAD_CHECKSUM,
        InjectionKind.DOUBLE_READ,
        InjectionKind.DROPPED_LINE,
        InjectionKind.READER_FAULT,
        InjectionKind.UNPLUG,
    }
)
"""The faults a line or HID reader can have: it only reads cards and writes lines."""
LINE_ONLY_KINDS = LINE_READER_KINDS - {InjectionKind.UNPLUG}
"""Faults of a line reader's text, which no cardshoe-protocol device can have."""

AT_POWER_UP_KINDS = frozenset({InjectionKind.BAD_FIRMWARE_HASH, InjectionKind.FIRMWARE_POWER_CUT})
"""Kinds that may be written without a position, meaning: from power-up."""
TRANSFER_KINDS = frozenset({InjectionKind.FIRMWARE_POWER_CUT})
"""Kinds that strike during the next firmware transfer, so they take no position."""

_SYNTAX = re.compile(
    r"^(?P<kind>[a-z-]+)(?:@(?P<unit>round|card)=(?P<number>\d+))?(?:,for=(?P<seconds>[\d.]+))?$"
)


@dataclass(frozen=True)
class Injection:
    kind: InjectionKind
    round: int | None = None
    card: int | None = None
    duration_s: float | None = None

    @property
    def at_power_up(self) -> bool:
        return self.round is None and self.card is None

    def __str__(self) -> str:
        text = self.kind.value
        if self.round is not None:
            text += f"@round={self.round}"
        if self.card is not None:
            text += f"@card={self.card}"
        if self.duration_s is not None:
            text += f",for={self.duration_s:g}"
        return text


def parse_injection(text: str) -> Injection:
    """Read one `KIND@round=N`, `KIND@card=N` (optionally `,for=SECONDS`)."""
    match = _SYNTAX.match(text.strip())
    if match is None:
        raise SimConfigError(
            f"bad injection {text!r}: write KIND@round=N or KIND@card=N, "
            "optionally followed by ,for=SECONDS"
        )
    try:
        kind = InjectionKind(match["kind"])
    except ValueError:
        raise SimConfigError(
            f"unknown fault kind {match['kind']!r}; choose one of "
            f"{', '.join(kind.value for kind in InjectionKind)}"
        ) from None
    number = None if match["number"] is None else whole_number(match["number"], 9)
    if match["number"] is not None and number is None:
        raise SimConfigError(f"{text!r}: N is a round or card number of at most 9 digits 0-9")
    if number == 0:
        raise SimConfigError(f"{text!r}: rounds and cards count from 1")
    if number is None and kind not in AT_POWER_UP_KINDS:
        raise SimConfigError(f"{text!r}: say when, with @round=N or @card=N")
    if number is not None and kind in TRANSFER_KINDS:
        raise SimConfigError(
            f"{text!r}: {kind.value} strikes half-way through the next firmware transfer; "
            "write it without @round or @card"
        )
    seconds = None if match["seconds"] is None else _duration(text, match["seconds"])
    if seconds is not None and kind not in DEFAULT_DURATION_S:
        raise SimConfigError(f"{text!r}: {kind.value} has no duration")
    return Injection(
        kind,
        round=number if match["unit"] == "round" else None,
        card=number if match["unit"] == "card" else None,
        duration_s=seconds,
    )


def _duration(text: str, written: str) -> float:
    """The seconds of `,for=`: a number above 0, at most MAX_DURATION_S."""
    try:
        seconds = float(written)
    except ValueError:
        seconds = math.nan
    if not 0 < seconds <= MAX_DURATION_S:
        raise SimConfigError(
            f"{text!r}: for= takes the seconds the fault lasts, more than 0 and at most "
            f"{MAX_DURATION_S:g}, such as for=2.5"
        )
    return seconds


@dataclass(frozen=True)
class Scenario:
    """Settings and injections read from a scenario file; None where the file is silent."""

    profile: str | None = None
    seed: int | None = None
    decks: int | None = None
    injections: tuple[Injection, ...] = ()


def load_scenario(path: Path) -> Scenario:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SimConfigError(f"cannot read scenario {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise SimConfigError(
            f"scenario {path} is not UTF-8 text (byte {exc.start}): save it as UTF-8 TOML"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise SimConfigError(f"scenario {path} is not valid TOML: {exc}") from None
    unknown = set(data) - {"profile", "seed", "decks", "inject"}
    if unknown:
        raise SimConfigError(
            f"scenario {path}: unknown keys {sorted(unknown)}; use profile, seed, decks and inject"
        )
    return Scenario(
        profile=data.get("profile"),
        seed=data.get("seed"),
        decks=data.get("decks"),
        injections=tuple(parse_injection(text) for text in data.get("inject", [])),
    )


@dataclass
class FaultPlan:
    """The injections still to fire, asked once per card about to leave."""

    injections: list[Injection] = field(default_factory=list)

    def take_at_power_up(self) -> list[Injection]:
        return self._take(lambda injection: injection.at_power_up)

    def take_due(self, card: int, round_number: int, first_in_round: bool) -> list[Injection]:
        """Fire (and forget) the injections placed at this card or this round's first card."""
        return self._take(
            lambda injection: (
                injection.card == card or (first_in_round and injection.round == round_number)
            )
        )

    def _take(self, due: Callable[[Injection], bool]) -> list[Injection]:
        fired = [injection for injection in self.injections if due(injection)]
        self.injections = [injection for injection in self.injections if injection not in fired]
        return fired
