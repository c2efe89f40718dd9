"""The JSON form of each journal record kind's payload, one TypedDict per form.

What a record holds once written: cards, hands, enums and fractions as their text, tuples as
lists. record_kinds.py pairs each kind with one of these; they are apart from it so that the
list of kinds stays short enough to read as a table of contents of the journal.

No `from __future__ import annotations` here: Python 3.11's TypedDict sees NotRequired only
in evaluated annotations, and would count every optional key as required.
"""

from typing import Any, NotRequired, TypedDict

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
    reports_end: bool
    """Written since 2026-12; a record from before lacks it and reads as true (the event's
    default), as every device then reported its faults' ends."""


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
