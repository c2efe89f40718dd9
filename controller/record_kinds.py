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

Nearly a leaf (it imports only record_payloads.py, the TypedDicts, which imports nothing of
the project): the journal, the procedure and every layer above them import it, and
import-linter keeps the journal and the procedure apart.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cardshoe.controller.record_payloads import (
    AdvantagePayload,
    AlarmPayload,
    BetsCarriedPayload,
    BetsClosedPayload,
    BurnedPayload,
    ButtonPressedPayload,
    CardAssignedPayload,
    CardCorrectedPayload,
    CardSeenPayload,
    CardSetAsidePayload,
    CardsReturnedPayload,
    CarriedBetsReturnedPayload,
    ClearHoldPayload,
    ClockSteppedPayload,
    CommandDeniedPayload,
    CommandRefusedPayload,
    ConsolePinPayload,
    ConsoleSignedOutPayload,
    CountsPayload,
    DeckSetPayload,
    DetailPayload,
    DeviceEventPayload,
    DeviceResyncPayload,
    EmptyPayload,
    EnterCardPayload,
    FaultClearedPayload,
    FaultRaisedPayload,
    FirmwareUpdatePayload,
    FirstCardCorrectedPayload,
    HoldEndedPayload,
    HoldStartedPayload,
    HostFindingPayload,
    IrregularityPayload,
    JournalBehindDevicePayload,
    LastRoundPayload,
    LinkLostPayload,
    LinkRestoredPayload,
    OperationDonePayload,
    OperatorCommandPayload,
    PackCustodyPayload,
    ProtocolViolationPayload,
    ReasonPayload,
    ReliefBurnDroppedPayload,
    ReliefBurnDuePayload,
    RepeatedPayload,
    RereadByPayload,
    RoundOpenedPayload,
    RoundResultPayload,
    RoundVoidPayload,
    SelfTestDonePayload,
    SequenceGapPayload,
    SequenceRegressionPayload,
    SessionStartedPayload,
    ShoeEmptiedPayload,
    ShoeEndedPayload,
    ShoeStartedPayload,
    ShuffledPayload,
    SignInPayload,
    SoftwareAuthenticatedPayload,
    StartShoePayload,
    StorageLowPayload,
    StorageRecoveredPayload,
    SupervisorSignedInPayload,
    VoidRoundPayload,
    WirePayload,
)

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
    """A TypedDict of record_payloads.py: its required keys must all be in a payload written
    now."""
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


def required_keys(spec: KindSpec) -> frozenset[str]:
    """The keys a payload of the kind must hold: its TypedDict's required keys, or every field
    of an operator command's input (command_kind), which its record holds whole."""
    if dataclasses.is_dataclass(spec.payload):
        return frozenset(item.name for item in dataclasses.fields(spec.payload))
    keys: frozenset[str] = spec.payload.__required_keys__  # type: ignore[attr-defined]
    return keys


def command_kind(command_name: str, procedure_input: type) -> str:
    """The journal kind of an operator command that has no constant here: command.<name>,
    registered with its input dataclass as the payload's form, so that a new command is one
    row of procedure/operator_commands.py and its handling (docs/architecture.md)."""
    name = COMMAND_PREFIX + command_name.replace("-", "_")
    known = _REGISTRY.get(name)
    if known is not None and known.payload is procedure_input:
        return name
    return _kind(name, procedure_input)


def registered_kinds() -> frozenset[str]:
    return frozenset(_REGISTRY)


def stored_version(payload: Mapping[str, Any]) -> int:
    """The version of a stored payload: its RECORD_VERSION_KEY, 1 without it."""
    return int(payload.get(RECORD_VERSION_KEY, 1))


def versioned(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    """The payload as written for its kind now: with RECORD_VERSION_KEY from version 2 on, so
    a version 1 kind's records stay exactly as they were stored before versions (the same
    dict, not a copy: every card's facts pass here)."""
    version = spec_of(kind).version
    return payload if version == 1 else {**payload, RECORD_VERSION_KEY: version}


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
    missing = sorted(required_keys(spec) - payload.keys())
    if missing:
        raise RecordKindError(
            f"a {kind} record's payload lacks {', '.join(missing)} ({spec.payload.__name__})"
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
