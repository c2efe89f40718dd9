"""Every kind of journal record, the form of its payload and that form's version.

A record kind is the one word every part of the controller shares about a record: the
procedure and the session write it, and the board, the displays, the recall, the floor,
game protection and the pit read it. Spelled out in each of them, a kind renamed in one
place would silently stop matching in the others, and a payload that lost a field would
only fail where a reader next looks for it. So each kind is one constant here, with the
TypedDict its payload has and the version of that form; check_payload refuses a record
that does not fit before it is written, and read_payload reads a stored one in the form
the readers know, upcasting an older version.

A payload's version is stored the way the device records started it (procedure/inputs.py):
the payload's RECORD_VERSION_KEY, and no key is version 1. Every kind that never changed
form is version 1, so its records are stored exactly as before this registry (the hash
chain covers them). A kind whose payload changes form gets version n + 1 and an upcast
from n, so that journals written before still read.

A leaf module (nothing of the project imported): the journal, the procedure and every
layer above them import it, and import-linter keeps the journal and the procedure apart.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

RECORD_VERSION_KEY = "record_version"
"""The payload key holding the payload's version; a payload without it is version 1."""


class RecordKindError(ValueError):
    """A record whose kind is not registered here, or whose payload does not fit its kind."""


Upcast = Callable[[dict[str, Any]], dict[str, Any]]
"""Turns a version n payload into the version n + 1 form of its kind."""


@dataclass(frozen=True)
class KindSpec:
    """What the registry knows of one kind."""

    name: str
    payload: type
    """A TypedDict: its required keys must all be in a payload written now."""
    version: int
    """The version written now."""
    upcasts: Mapping[int, Upcast] = field(default_factory=dict)
    """Version n -> the function reading it as n + 1."""
    retired: bool = False
    """Only read from old journals: nothing writes this kind any more."""
    upcast_elsewhere: str | None = None
    """Where an older version is read when it needs more than a dict (a device's codec)."""


_REGISTRY: dict[str, KindSpec] = {}


def _kind(
    name: str,
    payload: type,
    version: int = 1,
    *,
    upcasts: Mapping[int, Upcast] | None = None,
    retired: bool = False,
    upcast_elsewhere: str | None = None,
) -> str:
    """Register one kind and return its name, the constant every module compares with."""
    if name in _REGISTRY:
        raise RuntimeError(f"record kind {name} is registered twice")
    _REGISTRY[name] = KindSpec(
        name, payload, version, upcasts or {}, retired=retired, upcast_elsewhere=upcast_elsewhere
    )
    return name


# --- payloads: the procedure's facts (procedure/facts.py, protection/watcher.py) -----------


class EmptyPayload(TypedDict):
    """A record whose kind says everything."""


class AlarmPayload(TypedDict):
    kind: str
    """An AlarmKind (procedure/facts.py)."""
    detail: str


class ShoeStartedPayload(TypedDict):
    shoe_id: str
    game: str
    decks: int
    device_kind: str
    fingerprint: str
    options: dict[str, Any]
    deck_set: str | None


class DeckSetPayload(TypedDict):
    deck_set: str


class ShuffledPayload(TypedDict):
    card_count: int


class BurnedPayload(TypedDict):
    card: str | None
    physical_id: str | None
    reason: str
    burn_remaining: int | None


class ReliefBurnDuePayload(TypedDict):
    dealer: str | None
    relieves: str
    cards: int
    before_round: int


class ReliefBurnDroppedPayload(TypedDict):
    cards: int


class LastRoundPayload(TypedDict):
    last_round: int
    cause: str
    reason: str | None


class RoundOpenedPayload(TypedDict):
    round_no: int
    demo: bool


class BetsClosedPayload(TypedDict):
    round_no: int
    by: str


class CardAssignedPayload(TypedDict):
    round_no: int
    card: str
    physical_id: str
    to: str
    next_recipient: str | None


class CardCorrectedPayload(TypedDict):
    round_no: int
    irregularity: str
    correction: str
    card: str
    physical_id: str
    to: str
    by: dict[str, Any] | None


class FirstCardCorrectedPayload(TypedDict):
    correction: str
    card: str
    physical_id: str
    burn_total: int
    by: dict[str, Any] | None


class CardSetAsidePayload(TypedDict):
    round_no: int
    card: str | None
    physical_id: str | None
    reason: str


class RoundResultPayload(TypedDict):
    round_no: int
    demo: bool
    player: list[str]
    banker: list[str]
    player_total: int
    banker_total: int
    winner: str
    natural: bool
    player_pair: bool | None
    banker_pair: bool | None
    sevens: int | None
    settlement: dict[str, str] | None
    tie_bets: str | None


class BetsCarriedPayload(TypedDict):
    round_no: int
    into_round: int
    option: str


class CarriedBetsReturnedPayload(TypedDict):
    round_no: int
    reason: str
    voided_round: int | None


class RoundVoidPayload(TypedDict):
    round_no: int
    reason: str
    cards: list[str | None]


class IrregularityPayload(TypedDict):
    code: str
    round_no: int | None
    card: str | None
    physical_id: str | None
    consequence: str
    detail: str


class HoldStartedPayload(TypedDict):
    reason: str
    held_state: str


class HoldEndedPayload(TypedDict):
    reason: str
    holds_left: list[str]


class CommandRefusedPayload(TypedDict):
    command: str
    reason: str


class CardsReturnedPayload(TypedDict):
    expected: int
    counted: int


class ShoeEndedPayload(TypedDict):
    shoe_id: str
    rounds: int
    loaded: int
    dealt: int
    burned: int
    returned: int
    intruders: int
    remaining: int | None
    device_cards_dealt: int | None
    reconciled: bool


class AdvantagePayload(TypedDict):
    bet: str
    player_edge: float
    player_edge_exact: str
    round_no: int
    cards_left: int


# --- payloads: the host's inputs (procedure/inputs.py) --------------------------------------


class StartShoePayload(TypedDict):
    shoe_id: str
    deck_set: int | None


class SignInPayload(TypedDict):
    dealer: str | None
    relieves: str | None


class ReasonPayload(TypedDict):
    reason: str


class ClearHoldPayload(TypedDict):
    reason: str
    accepted_seq: int | None
    note: str | None


class VoidRoundPayload(TypedDict):
    reason: str
    note: str | None
    round_no: int | None


class EnterCardPayload(TypedDict):
    card: str
    note: str | None
    operator: dict[str, Any] | None


class CountsPayload(TypedDict):
    cards_dealt: int | None
    cards_remaining: int | None


class JournalBehindDevicePayload(TypedDict):
    journaled_seq: int
    device_acked_seq: int


class DetailPayload(TypedDict):
    detail: str


class StorageLowPayload(TypedDict):
    free_bytes: int
    floor_bytes: int


class StorageRecoveredPayload(TypedDict):
    free_bytes: int


class HostFindingPayload(TypedDict):
    hold: str
    detail: str


# --- payloads: the device's and the driver's events (drivers/api/events.py, version 2) -----


class DeviceEventPayload(TypedDict):
    seq: int
    device_time_ms: int
    record_version: int


class CardSeenPayload(DeviceEventPayload):
    card: str | None
    flags: list[str]
    orientation: str
    feed_group: int
    feed_size: int
    code: str


class ShoeEmptiedPayload(DeviceEventPayload):
    cards_dealt: int


class ButtonPressedPayload(DeviceEventPayload):
    button: int


class FaultRaisedPayload(DeviceEventPayload):
    kind: str
    detail: int


class FaultClearedPayload(DeviceEventPayload):
    kind: str


class SelfTestDonePayload(DeviceEventPayload):
    checks_run: int
    failures: list[str]
    firmware_hash: str


class OperationDonePayload(DeviceEventPayload):
    request_id: int
    operation: str
    ok: bool
    result: str
    card_count: int


class LinkLostPayload(TypedDict):
    reason: str
    record_version: int


class IdentityPayload(TypedDict):
    kind: str
    model: str
    serial_number: str
    firmware_version: str
    firmware_hash: str
    protocol: str
    protocol_version: str
    epoch: int | None
    next_seq: int
    last_acked_seq: int


class LinkRestoredPayload(TypedDict):
    identity: IdentityPayload
    record_version: int


class SequenceGapPayload(TypedDict):
    expected: int
    got: int
    record_version: int


class SequenceRegressionPayload(TypedDict):
    host_seq: int
    device_next_seq: int
    device_acked_seq: int
    host_epoch: int | None
    device_epoch: int | None
    record_version: int


class ProtocolViolationPayload(TypedDict):
    reason: str
    seq: int | None
    record_version: int


class WirePayload(TypedDict, total=False):
    """A version 1 device record: the cardshoe protocol message's fields, as sent."""


# --- payloads: the session's own records (service/) ----------------------------------------


class SessionStartedPayload(TypedDict):
    device: Any
    software: Any
    inputs_replayed: int
    replay_mismatches: list[Any]


class RepeatedPayload(TypedDict):
    kind: str
    count: int
    interval_s: float


class OperatorPayload(TypedDict):
    """Who gave a command at the control socket or the console (service/roles.py)."""

    uid: int | None
    user: str | None
    role: str
    via: NotRequired[str]
    signed_in: NotRequired[str]


class OperatorCommandPayload(OperatorPayload):
    command: str


class CommandDeniedPayload(OperatorPayload):
    command: str
    needs: str


class RereadByPayload(TypedDict):
    dealer: str | None
    card: str


class DeviceResyncPayload(TypedDict):
    from_epoch: int | None
    to_epoch: int | None
    host_seq: int
    resumed_after: int | None


class SupervisorSignedInPayload(TypedDict):
    supervisor: str | None
    relieves: str | None


class ConsolePinPayload(TypedDict):
    name: str
    outcome: str
    purpose: str
    via: str
    role: NotRequired[str]
    locked_for_s: NotRequired[float]
    signed_in: NotRequired[str]


class ConsoleSignedOutPayload(TypedDict):
    name: str
    why: str


class PackCustodyPayload(TypedDict):
    loaded_by: str | None
    witnessed_by: str | None
    opened_by: str | None
    device: dict[str, Any]
    software: Any


class SoftwareAuthenticatedPayload(TypedDict):
    seed: str
    digest: str
    operator: dict[str, Any]


class FirmwareUpdatePayload(TypedDict):
    image_sha256: str
    version: int | None
    outcome: str
    reason: str
    operator: dict[str, Any]
    before: dict[str, str] | None
    after: dict[str, str] | None


class ClockSteppedPayload(TypedDict):
    kind: str
    detail: str
    stepped_back_s: float


def _same_fields(payload: dict[str, Any]) -> dict[str, Any]:
    """A driver record whose version 1 already had the neutral form's fields."""
    return dict(payload)


# --- the kinds --------------------------------------------------------------------------

COMMAND_PREFIX = "command."
"""Operator commands (the host inputs a person gives)."""
DEVICE_PREFIX = "device."
"""The device's events."""
SESSION_PREFIX = "session."
"""Records about the controller process, which replay passes over."""
SOFTWARE_PREFIX = "software."
"""Records about the software and the device's firmware, which replay passes over."""

# The procedure's facts (procedure/facts.py).
SHOE_STARTED = _kind("shoe.started", ShoeStartedPayload)
SHOE_DECK_SET = _kind("shoe.deck_set", DeckSetPayload)
SHOE_SHUFFLED = _kind("shoe.shuffled", ShuffledPayload)
CARD_BURNED = _kind("card.burned", BurnedPayload)
SHOE_RELIEF_BURN_DUE = _kind("shoe.relief_burn_due", ReliefBurnDuePayload)
SHOE_RELIEF_BURN_DROPPED = _kind("shoe.relief_burn_dropped", ReliefBurnDroppedPayload)
SHOE_LAST_ROUND = _kind("shoe.last_round", LastRoundPayload)
ROUND_OPENED = _kind("round.opened", RoundOpenedPayload)
ROUND_BETS_CLOSED = _kind("round.bets_closed", BetsClosedPayload)
CARD_ASSIGNED = _kind("card.assigned", CardAssignedPayload)
CARD_CORRECTED = _kind("card.corrected", CardCorrectedPayload)
SHOE_FIRST_CARD_CORRECTED = _kind("shoe.first_card_corrected", FirstCardCorrectedPayload)
CARD_SET_ASIDE = _kind("card.set_aside", CardSetAsidePayload)
ROUND_RESULT = _kind("round.result", RoundResultPayload)
ROUND_BETS_CARRIED = _kind("round.bets_carried", BetsCarriedPayload)
ROUND_CARRIED_BETS_RETURNED = _kind("round.carried_bets_returned", CarriedBetsReturnedPayload)
ROUND_VOID = _kind("round.void", RoundVoidPayload)
IRREGULARITY = _kind("irregularity", IrregularityPayload)
HOLD_STARTED = _kind("hold.started", HoldStartedPayload)
HOLD_ENDED = _kind("hold.ended", HoldEndedPayload)
ALARM = _kind("alarm", AlarmPayload)
COMMAND_REFUSED = _kind("command.refused", CommandRefusedPayload)
ROUND_CARDS_RETURNED = _kind("round.cards_returned", CardsReturnedPayload)
SHOE_ENDED = _kind("shoe.ended", ShoeEndedPayload)
TABLE_IDLE = _kind("table.idle", EmptyPayload)
ADVANTAGE = _kind("advantage", AdvantagePayload)
"""Game protection's finding (protection/watcher.py), not the procedure's."""

# The host's inputs (procedure/inputs.py HOST_INPUTS).
COMMAND_START_SHOE = _kind("command.start_shoe", StartShoePayload)
COMMAND_SIGN_IN = _kind("command.sign_in", SignInPayload)
COMMAND_SHOE_LOADED = _kind("command.shoe_loaded", EmptyPayload)
COMMAND_CUT_DONE = _kind("command.cut_done", EmptyPayload)
COMMAND_CLOSE_BETS = _kind("command.close_bets", EmptyPayload)
COMMAND_CONFIRM_FACE_UP = _kind("command.confirm_face_up", EmptyPayload)
COMMAND_END_SHOE = _kind("command.end_shoe", ReasonPayload)
COMMAND_ABANDON_SHOE = _kind("command.abandon_shoe", ReasonPayload)
COMMAND_CLEAR_HOLD = _kind("command.clear_hold", ClearHoldPayload)
COMMAND_VOID_ROUND = _kind("command.void_round", VoidRoundPayload)
COMMAND_ENTER_CARD = _kind("command.enter_card", EnterCardPayload)
HOST_DEVICE_COUNT = _kind("host.device_count", CountsPayload)
HOST_PACK_COUNT = _kind("host.pack_count", CountsPayload)
HOST_JOURNAL_BEHIND_DEVICE = _kind("host.journal_behind_device", JournalBehindDevicePayload)
HOST_STORAGE_FAULT = _kind("host.storage_fault", DetailPayload)
HOST_STORAGE_LOW = _kind("host.storage_low", StorageLowPayload)
HOST_STORAGE_RECOVERED = _kind("host.storage_recovered", StorageRecoveredPayload)
HOST_FINDING = _kind("host.finding", HostFindingPayload)

# The device's and the driver's events (procedure/inputs.py DEVICE_INPUTS, DRIVER_INPUTS):
# version 2, the neutral form. Version 1, the cardshoe wire form, needs that family's codec
# to read, so it is read by procedure/inputs.py from_record with the family's legacy reader.
_WIRE_READER = "procedure/inputs.py from_record, with the cardshoe family's legacy reader"
DEVICE_CARD_SEEN = _kind("device.card_seen", CardSeenPayload, 2, upcast_elsewhere=_WIRE_READER)
DEVICE_CUT_CARD_SEEN = _kind(
    "device.cut_card_seen", DeviceEventPayload, 2, upcast_elsewhere=_WIRE_READER
)
DEVICE_SHOE_EMPTIED = _kind(
    "device.shoe_emptied", ShoeEmptiedPayload, 2, upcast_elsewhere=_WIRE_READER
)
DEVICE_BUTTON_PRESSED = _kind(
    "device.button_pressed", ButtonPressedPayload, 2, upcast_elsewhere=_WIRE_READER
)
DEVICE_FAULT_RAISED = _kind(
    "device.fault_raised", FaultRaisedPayload, 2, upcast_elsewhere=_WIRE_READER
)
DEVICE_FAULT_CLEARED = _kind(
    "device.fault_cleared", FaultClearedPayload, 2, upcast_elsewhere=_WIRE_READER
)
DEVICE_SELF_TEST_DONE = _kind(
    "device.self_test_done", SelfTestDonePayload, 2, upcast_elsewhere=_WIRE_READER
)
DEVICE_OPERATION_DONE = _kind(
    "device.operation_done", OperationDonePayload, 2, upcast_elsewhere=_WIRE_READER
)
LINK_LOST = _kind("link.lost", LinkLostPayload, 2, upcasts={1: _same_fields})
LINK_RESTORED = _kind("link.restored", LinkRestoredPayload, 2, upcast_elsewhere=_WIRE_READER)
LINK_SEQUENCE_GAP = _kind("link.sequence_gap", SequenceGapPayload, 2, upcasts={1: _same_fields})
LINK_SEQUENCE_REGRESSION = _kind(
    "link.sequence_regression", SequenceRegressionPayload, 2, upcasts={1: _same_fields}
)
LINK_PROTOCOL_VIOLATION = _kind(
    "link.protocol_violation", ProtocolViolationPayload, 2, upcasts={1: _same_fields}
)
LINK_AUTH_FAILURE = _kind(
    "link.auth_failure", ProtocolViolationPayload, 2, upcasts={1: _same_fields}
)

# Version 1 device records whose kind the neutral form renamed: read from old journals only.
DEVICE_CARD_V1 = _kind("device.card", WirePayload, retired=True, upcast_elsewhere=_WIRE_READER)
DEVICE_CUT_CARD_V1 = _kind(
    "device.cut_card", WirePayload, retired=True, upcast_elsewhere=_WIRE_READER
)
DEVICE_SHOE_EMPTY_V1 = _kind(
    "device.shoe_empty", WirePayload, retired=True, upcast_elsewhere=_WIRE_READER
)
DEVICE_BUTTON_V1 = _kind("device.button", WirePayload, retired=True, upcast_elsewhere=_WIRE_READER)
DEVICE_FAULT_V1 = _kind("device.fault", WirePayload, retired=True, upcast_elsewhere=_WIRE_READER)
DEVICE_SELF_TEST_RESULT_V1 = _kind(
    "device.self_test_result", WirePayload, retired=True, upcast_elsewhere=_WIRE_READER
)

# The session's records about the controller process (service/), which replay passes over.
SESSION_STARTED = _kind(SESSION_PREFIX + "started", SessionStartedPayload)
SESSION_DEVICE_REFUSED = _kind(SESSION_PREFIX + "device_refused", AlarmPayload)
"""Why the controller would not deal with the device; its payload is the alarm's."""
SESSION_REPEATED = _kind(SESSION_PREFIX + "repeated", RepeatedPayload)
"""How many records of a kind were only counted in the last interval (journal/repeats.py)."""
SESSION_STORAGE_ALARM = _kind(SESSION_PREFIX + "storage_alarm", AlarmPayload)
"""A storage fault the table goes on through (a failing checkpoint); payload is the alarm's."""
SESSION_JOURNAL_REFUSED = _kind(SESSION_PREFIX + "journal_refused", AlarmPayload)
"""The service refused to start on a journal that failed its check; payload is the alarm's."""
SESSION_OPERATOR = _kind(SESSION_PREFIX + "operator", OperatorCommandPayload)
"""Who gave the command journaled right after it in the same transaction: uid, user, role."""
SESSION_COMMAND_DENIED = _kind(SESSION_PREFIX + "command_denied", CommandDeniedPayload)
"""A command refused because of who gave it (their role), before it reached the procedure."""
SESSION_REREAD_BY = _kind(SESSION_PREFIX + "reread_by", RereadByPayload)
"""The dealer signed in when a misread card was re-read (the card.corrected before it)."""
SESSION_DEVICE_RESYNC = _kind(SESSION_PREFIX + "device_resync", DeviceResyncPayload)
"""An operator re-synchronised to the device's stream after a regression (a new epoch)."""
SESSION_SUPERVISOR_SIGNED_IN = _kind(
    SESSION_PREFIX + "supervisor_signed_in", SupervisorSignedInPayload
)
"""The supervisor who took the table and the one relieved: who witnesses each pack loaded."""
SESSION_CONSOLE_PIN = _kind(SESSION_PREFIX + "console_pin", ConsolePinPayload)
"""A PIN given at the table's console: the name, what for, accepted, wrong or locked."""
SESSION_CONSOLE_SIGNED_OUT = _kind(SESSION_PREFIX + "console_signed_out", ConsoleSignedOutPayload)
"""A person signed out of the table's console: by a key, or after console_idle_s idle."""
SESSION_PACK_CUSTODY = _kind(SESSION_PREFIX + "pack_custody", PackCustodyPayload)
"""The session's record right after shoe.started: who loaded the pack, who witnessed it, on
which device under which software (scoreboard/pack_receipt.py prints it)."""
SOFTWARE_AUTHENTICATED = _kind(SOFTWARE_PREFIX + "authenticated", SoftwareAuthenticatedPayload)
"""A regulator's seed and the software's answer to it (software_identity.py), and who asked."""
SOFTWARE_FIRMWARE_UPDATE = _kind(SOFTWARE_PREFIX + "firmware_update", FirmwareUpdatePayload)
"""One attempt to install device firmware, installed or refused (service/firmware_update.py)."""

# The journal's own record (journal/store.py).
CLOCK_STEPPED = _kind("clock.stepped", ClockSteppedPayload)
"""Added before a record whose wall-clock time is well before the record before it."""


def spec_of(kind: str) -> KindSpec:
    """The registered kind, or one line saying it is not registered."""
    spec = _REGISTRY.get(kind)
    if spec is None:
        raise RecordKindError(
            f"journal record kind {kind!r} is not registered: add it to "
            "controller/record_kinds.py (docs/architecture.md: how to add a record kind)"
        )
    return spec


def registered_kinds() -> frozenset[str]:
    return frozenset(_REGISTRY)


def stored_version(payload: Mapping[str, Any]) -> int:
    """The version of a stored payload: its RECORD_VERSION_KEY, 1 without it."""
    return int(payload.get(RECORD_VERSION_KEY, 1))


def check_payload(kind: str, payload: Mapping[str, Any]) -> None:
    """Refuse a record about to be written whose kind is unknown or whose payload does not
    have the fields and the version its kind has now."""
    spec = spec_of(kind)
    if spec.retired:
        raise RecordKindError(
            f"journal record kind {kind!r} is only read from old journals; nothing writes it now"
        )
    version = stored_version(payload)
    if version != spec.version:
        raise RecordKindError(
            f"a {kind} record is written in version {spec.version}, not {version} "
            f"({RECORD_VERSION_KEY} in its payload)"
        )
    missing = sorted(spec.payload.__required_keys__ - payload.keys())  # type: ignore[attr-defined]
    if missing:
        raise RecordKindError(
            f"a {kind} record's payload lacks {', '.join(missing)} "
            f"({spec.payload.__name__} in controller/record_kinds.py)"
        )


def read_payload(kind: str, payload: Mapping[str, Any]) -> dict[str, Any]:
    """A stored payload in the form its kind has now, an older version upcast.

    A payload is not checked field by field here: a field added to a kind without a new
    version (a None default) is absent from older records, and readers take those with get.
    """
    spec = spec_of(kind)
    version = stored_version(payload)
    data = dict(payload)
    if version > spec.version:
        raise RecordKindError(
            f"a {kind} record in version {version}: this software reads up to {spec.version}"
        )
    while version < spec.version:
        upcast = spec.upcasts.get(version)
        if upcast is None:
            where = spec.upcast_elsewhere or "nowhere: its kind registers no upcast"
            raise RecordKindError(f"a {kind} record in version {version} is read by {where}")
        data = upcast(data)
        version += 1
        data[RECORD_VERSION_KEY] = version
    return data
