"""Every shoe link message as a frozen dataclass, with the enums and flags its fields take.

What each message holds, and no more: how it is laid out in bytes (the
header, each type's body, encode_message and decode_message) is
message_codec.py's job. docs/protocol.md is the specification.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum, IntFlag

from cardshoe.drivers.protocol.cardid import CardId
from cardshoe.drivers.protocol.error_codes import ErrorCode
from cardshoe.drivers.protocol.errors import CardIdError

FIRMWARE_HASH_SIZE = 32
"""SHA-256 of the firmware image."""
MAX_TEXT_BYTES = 32
MAX_LISTED_FAULTS = 16
HELLO_DIGEST_SIZE = 32
"""SHA-256 of a HELLO's body, which AUTH_RESPONSE carries from protocol 1.2."""
NONCE_SIZE = 16
"""A session nonce: 16 random bytes from each side."""
PAIRING_KEY_SIZE = 32
HOUSE_KEY_SIZE = 32
"""The house's Ed25519 public key, raw."""
SIGNATURE_SIZE = 64
"""An Ed25519 signature."""


class MessageType(IntEnum):
    # Device -> host, answers to a command (tag = request id)
    HELLO = 0x01
    REPLY = 0x02
    STATUS = 0x03
    AUTH_RESPONSE = 0x04
    """Protocol 1.1: the device's nonce, sealed with the new session key."""
    # Device -> host events (tag = event sequence number; resent until acknowledged)
    CARD = 0x10
    CUT_CARD = 0x11
    SHOE_EMPTY = 0x12
    BUTTON = 0x13
    FAULT = 0x14
    FAULT_CLEARED = 0x15
    SELF_TEST_RESULT = 0x16
    OPERATION_DONE = 0x17
    # Host -> device commands (tag = request id)
    GET_INFO = 0x40
    GET_STATUS = 0x41
    SELF_TEST = 0x42
    GATE = 0x43
    DEAL_NEXT = 0x44
    SHUFFLE = 0x45
    RETURN = 0x46
    RESET = 0x47
    # Host -> device acknowledgement (tag = acknowledged sequence number)
    ACK = 0x48
    # Host -> device, protocol 1.1 link authentication (tag = request id)
    AUTH_CHALLENGE = 0x49
    PAIR = 0x4A
    """Give the device its pairing key; refused unless the device is in pairing mode."""
    # Host -> device, protocol 1.3 firmware update (tag = request id)
    FIRMWARE_BEGIN = 0x4B
    """Announce a signed image: its version, size, SHA-256 and the house's signature."""
    FIRMWARE_CHUNK = 0x4C
    FIRMWARE_COMMIT = 0x4D
    """Check the received image and switch to it: the device restarts on it."""


class HeaderFlag(IntFlag):
    AUTH_TAG = 0x80
    """Protocol 1.1: a counter and an HMAC tag follow the body (auth.py seals and opens it).

    decode_message never sees it set: a receiver opens a sealed payload first,
    and refuses it as UNSUPPORTED when it has no session to open it with.
    """


class DeviceKind(IntEnum):
    MANUAL_SHOE = 1
    AUTO_DEALER = 2
    """An automatic shuffler-dealer."""


class Orientation(IntEnum):
    FACE_DOWN = 0
    FACE_UP = 1
    UNKNOWN = 2
    """The device has no orientation sensor."""


class GateMode(IntEnum):
    LOCKED = 0
    """No card can be drawn."""
    OPEN = 1
    RELEASE_ONE = 2
    """Open for exactly one card, then locked again by the device itself."""


class FaultKind(IntEnum):
    JAM = 1
    MISREAD = 2
    """The reader keeps failing; one unreadable card is a CARD with ID_UNREADABLE."""
    DOOR_OPEN = 3
    SENSOR_FAILURE = 4
    GATE_FAILURE = 5
    SHUFFLER_FAILURE = 6
    CARD_COUNT_MISMATCH = 7
    """A shuffle or return counted more or fewer cards than expected."""
    FIRMWARE_HASH_MISMATCH = 8
    MEMORY_FAILURE = 9
    EVENT_BACKLOG = 10
    """The unacknowledged-event queue is full; dealing is blocked."""
    POWER_LOSS = 11
    """Power was lost while a card or an operation was in progress."""
    TAMPER = 12


class Capability(IntFlag):
    GATE = 1 << 0
    DEAL_NEXT = 1 << 1
    SHUFFLE = 1 << 2
    RETURN = 1 << 3
    TAGGED_CARDS = 1 << 4
    """Reads deck-set serial and deck number, not only rank and suit."""
    ORIENTATION = 1 << 5
    DOUBLE_FEED_DETECTION = 1 << 6
    DEALER_BUTTON = 1 << 7
    CUT_CARD_DETECTION = 1 << 8
    DOOR_SENSOR = 1 << 9
    AUTH_REQUIRED = 1 << 10
    """Protocol 1.1: the device holds a pairing key and serves nothing but GET_INFO,
    AUTH_CHALLENGE and (in pairing mode) PAIR until the host has authenticated."""
    FIRMWARE_UPDATE = 1 << 11
    """Protocol 1.3: the device takes signed firmware updates (FIRMWARE_BEGIN...); a device
    without it (a line or HID reader) cannot be updated over the link."""


class SensorFlag(IntFlag):
    ID_UNREADABLE = 1 << 0
    """A card left but its code could not be read; card_code is all zero."""
    LOW_CONFIDENCE = 1 << 1
    """Read, but the reader's signal was marginal."""
    REVERSED = 1 << 2
    """The card passed rotated end for end (its code was read backwards)."""
    DOUBLE_FEED_SUSPECTED = 1 << 3
    """More than one card left together; see feed_group and feed_size."""
    FEED_IN_ORDER = 1 << 4
    """With DOUBLE_FEED_SUSPECTED: the reader read the group's cards one after the other as
    they left, so their order is the events' order (docs/protocol.md, double feeds)."""


class StatusFlag(IntFlag):
    DOOR_OPEN = 1 << 0
    CARD_AT_EXIT = 1 << 1
    """A card waits at the exit, ready to be drawn."""
    SHOE_LOADED = 1 << 2
    BUSY = 1 << 3
    """A shuffle, return or self-test is running."""
    SELF_TEST_PASSED = 1 << 4
    CUT_CARD_SEEN = 1 << 5


class Event:
    """A device event: has seq and device_time_ms, resent until acknowledged."""

    seq: int
    device_time_ms: int


class Command:
    """A host command: has request_id, which the device's answer echoes."""

    request_id: int


class Answer:
    """The device's answer to a command: request_id echoes the command's (0: unsolicited)."""

    request_id: int


# Device -> host answers


@dataclass(frozen=True)
class Hello(Answer):
    """Who the device is, and where its event stream stands.

    request_id 0 means unsolicited (sent at power-up until a GET_INFO arrives).
    """

    request_id: int
    protocol_minor: int
    device_kind: DeviceKind
    capabilities: Capability
    last_acked_seq: int
    """The highest event seq the host has acknowledged (0: none yet)."""
    next_seq: int
    """The seq the device's next new event will carry."""
    firmware_hash: bytes
    model: str
    serial_number: str
    firmware_version: str
    epoch: int | None = None
    """Protocol 1.2: which life of the event counter next_seq counts in; None from 1.0/1.1.

    A device draws a new random epoch whenever its counter starts again from 1
    (first power-up, a memory wipe); restarts, resets and re-plugs keep it. A
    different epoch under the same serial number is a new stream, never a
    continuation of the one the host journaled.
    """


@dataclass(frozen=True)
class Reply(Answer):
    """The answer to a command: ErrorCode.OK or why the device refused it."""

    request_id: int
    result: ErrorCode


@dataclass(frozen=True)
class AuthResponse(Answer):
    """The answer to AUTH_CHALLENGE, sealed with the session key both nonces give.

    Its valid tag proves the device holds the pairing key; firmware_hash
    repeats the HELLO's, so the hash the host checks is an authenticated one.
    """

    request_id: int
    device_nonce: bytes
    firmware_hash: bytes
    hello_digest: bytes | None = None
    """Protocol 1.2: SHA-256 of the HELLO body the device sent (hello_digest()), so every
    HELLO field arrives authenticated; None from a 1.1 device."""


@dataclass(frozen=True)
class Status(Answer):
    """A snapshot answering GET_STATUS; changes that matter come as events."""

    request_id: int
    flags: StatusFlag
    gate: GateMode
    cards_dealt: int
    """Cards drawn since the shoe was loaded."""
    cards_remaining: int | None
    """None when the device cannot count what is left (a manual shoe)."""
    active_faults: tuple[FaultKind, ...]


# Device -> host events


@dataclass(frozen=True)
class CardRead(Event):
    """One physical card left the device.

    Cards that left together (a double feed) each come as a CardRead with
    DOUBLE_FEED_SUSPECTED, the same non-zero feed_group and feed_size = how
    many cards left together; their order is unknown, so none may be assigned
    to a hand. A single card has feed_group 0 and feed_size 1.

    The card code is decoded once, here, when the message is made: `card` is
    the card, and everyone above the driver reads that, never the raw code.
    """

    seq: int
    device_time_ms: int
    card_code: bytes
    """The 8 bytes as read; all zero if ID_UNREADABLE. Kept for the journal's exact record."""
    orientation: Orientation
    flags: SensorFlag
    feed_group: int
    feed_size: int
    card: CardId | None = field(init=False, repr=False, compare=False)
    """The decoded card; None when ID_UNREADABLE is set or the code fails its check value."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "card", _decoded_card(self.card_code, self.flags))

    @property
    def misread(self) -> bool:
        """A code was read but fails its check value (unlike an unreadable card)."""
        return self.card is None and not self.flags & SensorFlag.ID_UNREADABLE


def _decoded_card(code: bytes, flags: SensorFlag) -> CardId | None:
    if flags & SensorFlag.ID_UNREADABLE:
        return None
    try:
        return CardId.decode(code)
    except CardIdError:
        return None


@dataclass(frozen=True)
class CutCard(Event):
    seq: int
    device_time_ms: int


@dataclass(frozen=True)
class ShoeEmpty(Event):
    seq: int
    device_time_ms: int
    cards_dealt: int


@dataclass(frozen=True)
class ButtonPressed(Event):
    seq: int
    device_time_ms: int
    button: int
    """0 is the dealer button; other numbers are device-specific."""


@dataclass(frozen=True)
class Fault(Event):
    """A fault became active; it stays active, across power cycles, until FaultCleared."""

    seq: int
    device_time_ms: int
    kind: FaultKind
    detail: int
    """Device-specific sub-code (sensor number, motor, ...), 0 if none."""


@dataclass(frozen=True)
class FaultCleared(Event):
    seq: int
    device_time_ms: int
    kind: FaultKind


@dataclass(frozen=True)
class SelfTestResult(Event):
    """The outcome of a self-test, at power-up or after SELF_TEST."""

    seq: int
    device_time_ms: int
    checks_run: int
    failures: tuple[FaultKind, ...]
    firmware_hash: bytes
    """SHA-256 of the firmware image, computed during this self-test."""

    @property
    def passed(self) -> bool:
        return not self.failures


@dataclass(frozen=True)
class OperationDone(Event):
    """A SHUFFLE or RETURN finished; card_count is what the device counted."""

    seq: int
    device_time_ms: int
    request_id: int
    operation: MessageType
    result: ErrorCode
    card_count: int


# Host -> device


@dataclass(frozen=True)
class GetInfo(Command):
    """Connect: the device answers with HELLO and then (re)sends unacknowledged events."""

    request_id: int
    protocol_minor: int


@dataclass(frozen=True)
class GetStatus(Command):
    request_id: int


@dataclass(frozen=True)
class SelfTest(Command):
    request_id: int


@dataclass(frozen=True)
class SetGate(Command):
    request_id: int
    mode: GateMode


@dataclass(frozen=True)
class DealNext(Command):
    request_id: int


@dataclass(frozen=True)
class Shuffle(Command):
    """Load the cards in the machine and shuffle them into a new shoe."""

    request_id: int
    decks: int


@dataclass(frozen=True)
class ReturnCards(Command):
    """Take the round's cards back into the machine."""

    request_id: int
    expected_cards: int


@dataclass(frozen=True)
class Reset(Command):
    request_id: int


@dataclass(frozen=True)
class AuthChallenge(Command):
    """Start an authenticated session with a fresh random nonce (after GET_INFO)."""

    request_id: int
    host_nonce: bytes


@dataclass(frozen=True)
class Pair(Command):
    """The device's new pairing key, accepted only in pairing mode (a technician's switch)."""

    request_id: int
    pairing_key: bytes
    house_public_key: bytes | None = None
    """Protocol 1.3: the house's Ed25519 public key (raw), with which the device checks every
    firmware image itself before it switches to it; None: keep the one it holds."""


@dataclass(frozen=True)
class FirmwareBegin(Command):
    """Start a transfer into the inactive slot; the device checks the signature first."""

    request_id: int
    version: int
    size: int
    image_sha256: bytes
    signature: bytes
    """Ed25519 over firmware_image.signed_message(version, image_sha256)."""


@dataclass(frozen=True)
class FirmwareChunk(Command):
    """The image's bytes from offset on, in order: offset is the count already accepted."""

    request_id: int
    offset: int
    data: bytes


@dataclass(frozen=True)
class FirmwareCommit(Command):
    """Check the whole image against FIRMWARE_BEGIN's hash and switch slots, or refuse."""

    request_id: int


@dataclass(frozen=True)
class Ack:
    """Cumulative: every event with seq <= acked_seq is durably recorded by the host."""

    acked_seq: int


Message = (
    Hello
    | Reply
    | Status
    | AuthResponse
    | CardRead
    | CutCard
    | ShoeEmpty
    | ButtonPressed
    | Fault
    | FaultCleared
    | SelfTestResult
    | OperationDone
    | GetInfo
    | GetStatus
    | SelfTest
    | SetGate
    | DealNext
    | Shuffle
    | ReturnCards
    | Reset
    | Ack
    | AuthChallenge
    | Pair
    | FirmwareBegin
    | FirmwareChunk
    | FirmwareCommit
)
