"""The device-neutral vocabulary: what any device can tell the table.

Every protocol family (cardshoe's own COBS+CRC link, a line-per-card reader, a
USB HID barcode reader, a third party's) turns what its device sends into these
records, and the procedure, the journal, the scoreboard and game protection read
nothing else. They carry only what a table needs to judge a card, never a wire
format: the card's rank and suit (and its physical id where the device reads one),
the position in the device's event stream, and the facts a double feed leaves.

Two kinds of records travel in one ordered stream:
- device events (CardSeen, CutCardSeen, ShoeEmptied, ButtonPressed, FaultRaised,
  FaultCleared, SelfTestDone, OperationDone) carry seq, their place in the
  stream, which the controller journals and then acknowledges;
- driver events (LinkLost, LinkRestored, SequenceGap, SequenceRegression,
  ProtocolViolation, AuthFailure) are raised by the host driver itself, carry no
  seq and are never acknowledged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum, Flag, IntEnum, auto
from typing import Any, ClassVar, Self

_RANK_SYMBOLS = "A23456789TJQK"
_TEXT_PATTERN = re.compile(r"^([A2-9TJQK])([SHDC])(?:#([0-9A-F]{8})/(\d{1,3}))?$")


class CardIdError(ValueError):
    """A card that cannot exist (a rank outside 1..13, half a physical id) or bad card text."""


class CardSuit(IntEnum):
    """Suit order spades, hearts, diamonds, clubs; the letter is its symbol in text forms."""

    SPADES = 0
    HEARTS = 1
    DIAMONDS = 2
    CLUBS = 3

    @property
    def letter(self) -> str:
        # Indexed by the member itself (an int): Enum's value property is slow Python.
        return "SHDC"[self]


@dataclass(frozen=True, eq=False)
class CardId:
    """One physical card: rank (1 = ace ... 13 = king), suit and, where the device reads
    one, its physical id: the deck set's serial and the deck within it.

    A reader that sees only rank and suit gives deck_set 0 and deck 0 (untagged);
    a tagged card has both non-zero. The drivers know no games: the controller
    maps rank and suit to its own card type. A family's codec may subclass it to add
    its wire form (protocol/cardid.py); equal cards compare equal whichever class.
    """

    invalid: ClassVar[type[Exception]] = CardIdError
    """What a card that cannot exist raises: a codec's subclass names its own error."""

    rank: int
    suit: CardSuit
    deck_set: int = 0
    deck: int = 0

    def __post_init__(self) -> None:
        invalid = self.invalid
        if not 1 <= self.rank <= 13:
            raise invalid(f"rank {self.rank} is outside 1..13")
        try:
            object.__setattr__(self, "suit", CardSuit(self.suit))
        except ValueError:
            raise invalid(f"suit {self.suit} is outside 0..3") from None
        if not 0 <= self.deck_set <= 0xFFFFFFFF:
            raise invalid(f"deck-set serial {self.deck_set} does not fit 32 bits")
        if not 0 <= self.deck <= 0xFF:
            raise invalid(f"deck number {self.deck} is outside 0..255")
        if (self.deck_set == 0) != (self.deck == 0):
            raise invalid(
                f"deck set {self.deck_set} and deck {self.deck}: "
                "a card is either untagged (both 0) or tagged (both non-zero)"
            )

    def _fields(self) -> tuple[int, CardSuit, int, int]:
        return (self.rank, self.suit, self.deck_set, self.deck)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CardId):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    @property
    def tagged(self) -> bool:
        return self.deck_set != 0

    def __str__(self) -> str:
        """Log form: "AS" untagged, "AS#00BC614E/3" tagged (deck set in hex, then deck)."""
        text = _RANK_SYMBOLS[self.rank - 1] + self.suit.letter
        if self.tagged:
            text += f"#{self.deck_set:08X}/{self.deck}"
        return text

    @classmethod
    def parse(cls, text: str) -> Self:
        """Read the log form back (profiles, card tables, journals, test fixtures)."""
        match = _TEXT_PATTERN.match(text.strip().upper())
        if match is None:
            raise cls.invalid(
                f"bad card ID {text!r}: write rank and suit, then optionally "
                "#<deck set, 8 hex digits>/<deck>, for example AS or AS#00BC614E/3"
            )
        rank_text, suit_text, deck_set_text, deck_text = match.groups()
        rank = _RANK_SYMBOLS.index(rank_text) + 1
        suit = CardSuit("SHDC".index(suit_text))
        if deck_set_text is None:
            return cls(rank, suit)
        return cls(rank, suit, int(deck_set_text, 16), int(deck_text))


class DeviceKind(Enum):
    """Who draws: the dealer from a manual shoe, or the machine on the host's request."""

    SHOE = "shoe"
    DEALER = "dealer"
    """An automatic shuffler-dealer: the host asks for each card (deal_next)."""


class Orientation(Enum):
    FACE_DOWN = "face_down"
    FACE_UP = "face_up"
    UNKNOWN = "unknown"
    """The device has no orientation sensor."""


class ReadFlag(Flag):
    """What the device noticed about one card's read and feed."""

    UNREADABLE = auto()
    """A card left but nothing could be read from it (card is None)."""
    MISREAD = auto()
    """Something was read but it is no card (a failed check value, a code no table
    names): card is None and code holds what was read."""
    LOW_CONFIDENCE = auto()
    REVERSED = auto()
    """The card passed rotated end for end."""
    DOUBLE_FEED_SUSPECTED = auto()
    """More than one card left together; see feed_group and feed_size."""
    FEED_IN_ORDER = auto()
    """With DOUBLE_FEED_SUSPECTED: the group's cards were read one after the other as they
    left, so their order is the events' order."""


NO_FLAGS = ReadFlag(0)
"""A clean single read."""


class FaultKind(Enum):
    """A device fault, by what it means for the table; a family maps its own codes here."""

    JAM = "jam"
    MISREAD = "misread"
    """The reader keeps failing; one unreadable card is a CardSeen with UNREADABLE."""
    DOOR_OPEN = "door_open"
    SENSOR_FAILURE = "sensor_failure"
    GATE_FAILURE = "gate_failure"
    SHUFFLER_FAILURE = "shuffler_failure"
    CARD_COUNT_MISMATCH = "card_count_mismatch"
    FIRMWARE_HASH_MISMATCH = "firmware_hash_mismatch"
    MEMORY_FAILURE = "memory_failure"
    EVENT_BACKLOG = "event_backlog"
    POWER_LOSS = "power_loss"
    TAMPER = "tamper"
    DEVICE_SPECIFIC = "device_specific"
    """A fault the family cannot name more precisely; detail carries the device's code."""


class Operation(Enum):
    """A long operation an automatic machine reports the end of (OperationDone)."""

    SHUFFLE = "shuffle"
    RETURN = "return"


class DeviceEvent:
    """Sent by the device: has seq (its place in the stream) and device_time_ms.

    seq counts from 1 up in one stream; a family whose device numbers nothing
    numbers its events on the host, continuing after set_journaled_seq().
    device_time_ms is the device's clock, or the host's monotonic milliseconds
    when the device has none.
    """

    seq: int
    device_time_ms: int


@dataclass(frozen=True)
class CardSeen(DeviceEvent):
    """One physical card left the device.

    Cards that left together (a double feed) each come as a CardSeen with
    DOUBLE_FEED_SUSPECTED, the same non-zero feed_group and feed_size = how many
    cards left together. A single card has feed_group 0 and feed_size 1.
    """

    seq: int
    device_time_ms: int
    card: CardId | None
    """None when UNREADABLE or MISREAD is set."""
    flags: ReadFlag = NO_FLAGS
    orientation: Orientation = Orientation.UNKNOWN
    feed_group: int = 0
    feed_size: int = 1
    code: str = ""
    """What the device read, in its own notation (hex bytes, a barcode), for the record."""

    @property
    def misread(self) -> bool:
        """A code was read but names no card (unlike an unreadable card)."""
        return ReadFlag.MISREAD in self.flags

    @property
    def unreadable(self) -> bool:
        return ReadFlag.UNREADABLE in self.flags


@dataclass(frozen=True)
class CutCardSeen(DeviceEvent):
    seq: int
    device_time_ms: int


@dataclass(frozen=True)
class ShoeEmptied(DeviceEvent):
    seq: int
    device_time_ms: int
    cards_dealt: int


@dataclass(frozen=True)
class ButtonPressed(DeviceEvent):
    seq: int
    device_time_ms: int
    button: int = 0
    """0 is the dealer button; other numbers are device-specific."""


@dataclass(frozen=True)
class FaultRaised(DeviceEvent):
    """A fault became active; it stays active until FaultCleared, or, from a device that
    never reports a fault's end, until a person clears the hold."""

    seq: int
    device_time_ms: int
    kind: FaultKind
    detail: int = 0
    """Device-specific sub-code, 0 if none."""
    reports_end: bool = True
    """False: the device will send no FaultCleared for this fault (a line reader prints a
    fault line and nothing when it passes), so a supervisor clears the hold once the
    device works again (clear-hold fault.<kind>)."""


@dataclass(frozen=True)
class FaultCleared(DeviceEvent):
    seq: int
    device_time_ms: int
    kind: FaultKind


@dataclass(frozen=True)
class SelfTestDone(DeviceEvent):
    """The outcome of a self-test, at power-up or on request."""

    seq: int
    device_time_ms: int
    checks_run: int
    failures: tuple[FaultKind, ...]
    firmware_hash: bytes = b""
    """SHA-256 of the running image as the self-test computed it; empty when unknown."""

    @property
    def passed(self) -> bool:
        return not self.failures


@dataclass(frozen=True)
class OperationDone(DeviceEvent):
    """A shuffle or return finished; card_count is what the device counted."""

    seq: int
    device_time_ms: int
    request_id: int
    operation: Operation
    ok: bool
    result: str
    """The device's own word for the outcome ("ok", or why not)."""
    card_count: int


# --- driver events -----------------------------------------------------------------


class DriverEvent:
    """Raised by the host driver, not sent by the device: no seq, no acknowledgement."""


@dataclass(frozen=True)
class DeviceIdentity:
    """Who the device says it is, at a (re)connection."""

    kind: DeviceKind
    model: str
    serial_number: str
    firmware_version: str
    firmware_hash: bytes
    """SHA-256 of the running image as the device reports it; empty when it cannot."""
    protocol: str
    """The family's registry name ("cardshoe", "line", ...)."""
    protocol_version: str
    epoch: int | None = None
    """Which life of the device's event counter seqs count in; None when unknown."""
    next_seq: int = 1
    """The seq the device's next new event will carry."""
    last_acked_seq: int = 0
    """The highest seq the device holds acknowledged (0: none, or it keeps no such count)."""


NO_FIRMWARE = "none: this device reports no firmware"
"""What a device that tells nothing of its firmware (a line or HID reader) shows for it."""


def firmware_text(version: str, hash_hex: str) -> str:
    """A device's firmware as people read it: version and SHA-256, or that it reports none,
    never an empty hash that looks like one the device sent."""
    if not hash_hex:
        return NO_FIRMWARE
    return f"{version} (sha256 {hash_hex})"


@dataclass(frozen=True)
class LinkLost(DriverEvent):
    """The link went down; with reconnect on, the driver is already trying again."""

    reason: str


@dataclass(frozen=True)
class LinkRestored(DriverEvent):
    """The same device answered again; with acknowledged delivery it now replays its
    unacknowledged events."""

    identity: DeviceIdentity


@dataclass(frozen=True)
class SequenceGap(DriverEvent):
    """Events expected .. got-1 are missing: acknowledged elsewhere or lost.

    The driver holds back event `got` until the controller resolves the gap:
    set_journaled_seq(got - 1) accepts the loss and resumes delivery.
    """

    expected: int
    got: int


@dataclass(frozen=True)
class SequenceRegression(DriverEvent):
    """The device's counter is behind what the host recorded, or its stream epoch changed:
    lost memory, a wipe or a clone. Nothing is taken until resync(device_acked_seq)."""

    host_seq: int
    device_next_seq: int
    device_acked_seq: int = 0
    host_epoch: int | None = None
    device_epoch: int | None = None


@dataclass(frozen=True)
class ProtocolViolation(DriverEvent):
    """The device sent something its protocol forbids (or a burst of lines no profile
    reads); seq names the event it concerns, if any."""

    reason: str
    seq: int | None = None


@dataclass(frozen=True)
class AuthFailure(ProtocolViolation):
    """A frame failed authentication, or the device failed it at a reconnect."""


Event = (
    CardSeen
    | CutCardSeen
    | ShoeEmptied
    | ButtonPressed
    | FaultRaised
    | FaultCleared
    | SelfTestDone
    | OperationDone
    | LinkLost
    | LinkRestored
    | SequenceGap
    | SequenceRegression
    | ProtocolViolation
    | AuthFailure
)
"""Everything a DeviceLink's next_event() returns."""


# --- what the table can ask ----------------------------------------------------------


class GateState(Enum):
    LOCKED = "locked"
    OPEN = "open"
    RELEASE_ONE = "release_one"
    UNKNOWN = "unknown"
    """The device has no gate, or does not say."""


@dataclass(frozen=True)
class DeviceStatus:
    """A snapshot answering get_status(); changes that matter come as events."""

    gate: GateState
    cards_dealt: int | None
    """Cards drawn since the shoe was loaded; None when the device does not count."""
    cards_remaining: int | None
    """None when the device cannot count what is left."""
    active_faults: tuple[FaultKind, ...] = ()
    shoe_loaded: bool | None = None
    """A fresh pack is in (None: the device cannot tell)."""
    door_open: bool = False
    busy: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    """Family-specific facts for a technician's display (JSON values)."""
