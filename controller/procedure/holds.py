"""Why the table holds, and which holds are alarms or need a person to clear them.

A device fault holds under its own name (fault_hold); the other reasons are
the link's and the procedure's own. Kept apart from the model so the session,
the demo and the displays name a hold without importing the procedure's state.
"""

from __future__ import annotations

from enum import StrEnum

from cardshoe.controller.procedure.facts import AlarmKind
from cardshoe.drivers.protocol.messages import FaultKind


class HoldReason(StrEnum):
    """Holds other than device faults, which are named fault.<kind> (fault_hold)."""

    LINK_LOST = "link_lost"
    SEQUENCE_GAP = "sequence_gap"
    SEQUENCE_REGRESSION = "sequence_regression"
    FACE_DOWN_CARD = "face_down_card"
    SELF_TEST_FAILED = "self_test_failed"
    FIRMWARE_NOT_APPROVED = "firmware_not_approved"
    PACK_COUNT_MISMATCH = "pack_count_mismatch"
    """The device holds another number of cards than the table's decks: the wrong pack."""
    DECK_SET_MISMATCH = "deck_set_mismatch"
    """Before any card of the declared deck set, a card of another set: the declaration or
    the pack is wrong."""


EVENTS_LOST_HOLDS = frozenset({HoldReason.SEQUENCE_GAP, HoldReason.SEQUENCE_REGRESSION})
"""Holds that mean device events were lost: the round under way may be missing cards."""
OPERATOR_CLEARED_HOLDS = EVENTS_LOST_HOLDS | {
    HoldReason.DECK_SET_MISMATCH,
    HoldReason.PACK_COUNT_MISMATCH,
}
"""Holds no device event can end: a person must look and clear them (ClearHold)."""


def fault_hold(kind: FaultKind) -> str:
    return f"fault.{kind.name.lower()}"


HOLD_ALARMS: dict[str, AlarmKind] = {
    HoldReason.SEQUENCE_GAP: AlarmKind.SEQUENCE_GAP,
    HoldReason.SEQUENCE_REGRESSION: AlarmKind.SEQUENCE_GAP,
    HoldReason.SELF_TEST_FAILED: AlarmKind.DEVICE_FAULT,
    HoldReason.FIRMWARE_NOT_APPROVED: AlarmKind.FIRMWARE,
    fault_hold(FaultKind.TAMPER): AlarmKind.TAMPER,
    fault_hold(FaultKind.FIRMWARE_HASH_MISMATCH): AlarmKind.FIRMWARE,
    fault_hold(FaultKind.CARD_COUNT_MISMATCH): AlarmKind.CARD_COUNT,
    fault_hold(FaultKind.MEMORY_FAILURE): AlarmKind.DEVICE_FAULT,
}
"""Holds that are also alarms: the pit must look, not only wait for the device."""
