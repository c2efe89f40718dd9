"""Everything that drives the table procedure, and its form in the journal.

The procedure is event-sourced: its only inputs are the device's events (in
the device-neutral vocabulary of drivers/api/events.py, whatever protocol the
device speaks), the driver's own events (link lost and restored, sequence
gaps), the operator's commands (operator_commands.py) and the host's below.
Each input is journaled as one record together with the records it causes, in
one transaction; replaying the inputs through a fresh procedure rebuilds the
exact state (recovery.py).

Device and driver records carry a record version (record_kinds.RECORD_VERSION_KEY,
as every kind that changed form does): 2 is the neutral form written today. A record
without it is version 1, the cardshoe wire form journals written before the device
seam hold; from_record reads those through the legacy reader its caller passes (the
cardshoe family's).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from cardshoe.controller import record_kinds
from cardshoe.controller.procedure.operator_commands import COMMAND_INPUTS, ClearHold
from cardshoe.controller.record_kinds import (
    DEVICE_PREFIX,
    RECORD_VERSION_KEY,
    spec_of,
    stored_version,
    versioned,
)
from cardshoe.drivers.api.events import (
    AuthFailure,
    ButtonPressed,
    CardSeen,
    CutCardSeen,
    DeviceEvent,
    DriverEvent,
    FaultCleared,
    FaultRaised,
    LinkLost,
    LinkRestored,
    OperationDone,
    ProtocolViolation,
    SelfTestDone,
    SequenceGap,
    SequenceRegression,
    ShoeEmptied,
)
from cardshoe.drivers.api.json_form import from_json, to_json


@dataclass(frozen=True)
class DeviceCount:
    """The device's own card counts (from STATUS), for the end-of-shoe reconciliation."""

    cards_dealt: int | None
    """None: the device counts nothing (no DEVICE_COUNTS); the journal's accounting stands."""
    cards_remaining: int | None


@dataclass(frozen=True)
class PackCount:
    """A manual shoe's own count of its pack, read once when its shoe starts."""

    cards_dealt: int | None
    """None: the device counts nothing."""
    cards_remaining: int | None
    """None: the device cannot tell. Its own two counts, from one STATUS: their sum is the
    pack it was loaded with, however many cards are in flight to the host."""


@dataclass(frozen=True)
class JournalBehindDevice:
    """At the handshake the device had acknowledgements for events the journal does not hold
    (a lost or restored-from-old journal): those events are gone from both sides."""

    journaled_seq: int
    device_acked_seq: int
    """Journaled as the record's device_seq, so a restart does not find the loss again."""


@dataclass(frozen=True)
class StorageFault:
    """The journal survived a storage fault that a person must look into (its files were
    removed or replaced under the running service)."""

    detail: str


@dataclass(frozen=True)
class StorageLow:
    """Free space for the journal fell below the configured floor (service.journal_min_free_mb)."""

    free_bytes: int
    floor_bytes: int


@dataclass(frozen=True)
class StorageRecovered:
    """Free space for the journal is back above the floor."""

    free_bytes: int


@dataclass(frozen=True)
class HostFinding:
    """The host found the device's reports unable to go on: hold for a person, with why.

    The session raises it where the table would otherwise wait silently, with no
    card allowed out and nothing awaited from the operator (a double feed whose
    cards never all come). hold is a HoldReason that an operator clears.
    """

    hold: str
    detail: str


HOST_INPUTS: Mapping[str, type] = {
    **COMMAND_INPUTS,
    record_kinds.HOST_DEVICE_COUNT: DeviceCount,
    record_kinds.HOST_PACK_COUNT: PackCount,
    record_kinds.HOST_JOURNAL_BEHIND_DEVICE: JournalBehindDevice,
    record_kinds.HOST_STORAGE_FAULT: StorageFault,
    record_kinds.HOST_STORAGE_LOW: StorageLow,
    record_kinds.HOST_STORAGE_RECOVERED: StorageRecovered,
    record_kinds.HOST_FINDING: HostFinding,
}
_HOST_KINDS = {cls: kind for kind, cls in HOST_INPUTS.items()}

DEVICE_INPUTS: Mapping[str, type] = {
    record_kinds.DEVICE_CARD_SEEN: CardSeen,
    record_kinds.DEVICE_CUT_CARD_SEEN: CutCardSeen,
    record_kinds.DEVICE_SHOE_EMPTIED: ShoeEmptied,
    record_kinds.DEVICE_BUTTON_PRESSED: ButtonPressed,
    record_kinds.DEVICE_FAULT_RAISED: FaultRaised,
    record_kinds.DEVICE_FAULT_CLEARED: FaultCleared,
    record_kinds.DEVICE_SELF_TEST_DONE: SelfTestDone,
    record_kinds.DEVICE_OPERATION_DONE: OperationDone,
}
DRIVER_INPUTS: Mapping[str, type] = {
    record_kinds.LINK_LOST: LinkLost,
    record_kinds.LINK_RESTORED: LinkRestored,
    record_kinds.LINK_SEQUENCE_GAP: SequenceGap,
    record_kinds.LINK_SEQUENCE_REGRESSION: SequenceRegression,
    record_kinds.LINK_PROTOCOL_VIOLATION: ProtocolViolation,
    record_kinds.LINK_AUTH_FAILURE: AuthFailure,
}
_EVENT_INPUTS = {**DEVICE_INPUTS, **DRIVER_INPUTS}
_EVENT_KINDS = {cls: kind for kind, cls in _EVENT_INPUTS.items()}
_LEGACY_DRIVER_KINDS = frozenset({record_kinds.LINK_RESTORED})
"""The driver records whose version 1 form differs from version 2 (a wire HELLO)."""

LegacyReader = Callable[[str | None, Mapping[str, Any]], Any]
"""Reads a version 1 record into its neutral input: (the wire message type of a device.<type>
record, or None for a link restored, whose payload holds the wire HELLO; the payload)."""


@dataclass(frozen=True)
class InputRecord:
    """An input as the journal stores it."""

    kind: str
    payload: dict[str, Any]
    device_seq: int | None


def to_record(item: Any) -> InputRecord:
    """The journal form of one input."""
    kind = record_kind(item)
    if type(item) in _EVENT_KINDS:
        payload = versioned(kind, to_json(item))
        return InputRecord(kind, payload, item.seq if isinstance(item, DeviceEvent) else None)
    return InputRecord(kind, versioned(kind, asdict(item)), _device_seq_of(item))


def record_kind(item: Any) -> str:
    """The record kind an input is journaled under, without encoding its payload (the
    session asks it of every input before journaling it)."""
    kind = _EVENT_KINDS.get(type(item))
    if kind is not None:
        return kind
    if isinstance(item, DriverEvent):
        raise TypeError(f"{item!r} is a driver event the journal has no kind for")
    kind = _HOST_KINDS.get(type(item))
    if kind is None:
        raise TypeError(f"{item!r} is not an input of the table procedure")
    return kind


def _device_seq_of(item: object) -> int | None:
    """The device seq a host input vouches for, journaled so last_device_seq counts it."""
    if isinstance(item, ClearHold):
        return item.accepted_seq
    if isinstance(item, JournalBehindDevice):
        return item.device_acked_seq
    return None


def is_input_kind(kind: str) -> bool:
    return kind in HOST_INPUTS or kind in DRIVER_INPUTS or kind.startswith(DEVICE_PREFIX)


def record_version(kind: str, payload: Mapping[str, Any]) -> int | None:
    """2 or 1 for a device or driver record (1: the wire form), None for a host input."""
    if kind in HOST_INPUTS:
        return None
    return stored_version(payload)


def from_record(kind: str, payload: Mapping[str, Any], legacy: LegacyReader | None = None) -> Any:
    """The input a journal record holds (the inverse of to_record).

    legacy reads a version 1 device record; without it such a record is refused.
    """
    host_input = HOST_INPUTS.get(kind)
    if host_input is not None:
        return host_input(**payload)
    version = record_version(kind, payload)
    if kind in _EVENT_INPUTS and version == spec_of(kind).version:
        fields = {key: value for key, value in payload.items() if key != RECORD_VERSION_KEY}
        return from_json(_EVENT_INPUTS[kind], fields)
    if version == 1 and kind in DRIVER_INPUTS and kind not in _LEGACY_DRIVER_KINDS:
        return from_json(DRIVER_INPUTS[kind], payload)
    if version == 1 and (kind.startswith(DEVICE_PREFIX) or kind in _LEGACY_DRIVER_KINDS):
        if legacy is None:
            raise ValueError(
                f"journal record kind {kind!r} is in record version 1 (the cardshoe wire form): "
                "read it with the cardshoe family's legacy reader"
            )
        if kind == record_kinds.LINK_RESTORED:
            return legacy(None, payload)
        return legacy(kind.removeprefix(DEVICE_PREFIX), payload)
    raise ValueError(
        f"journal record kind {kind!r} (record version {version}) is not an input of the "
        "table procedure"
    )
