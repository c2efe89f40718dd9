"""Why the table holds, and which holds are alarms or need a person to clear them.

A device fault holds under its own name (fault_hold); the other reasons are
the link's and the procedure's own. Kept apart from the model so the session,
the demo and the displays name a hold without importing the procedure's state.
"""

from __future__ import annotations

from enum import StrEnum

from cardshoe.controller.procedure.facts import AlarmKind
from cardshoe.drivers.api.events import FaultKind


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
    JOURNAL_BEHIND_DEVICE = "journal_behind_device"
    """The device had acknowledgements for events the journal does not hold: they are lost."""
    JOURNAL_STORAGE = "journal_storage"
    """The journal's files were removed or replaced under the running service."""
    JOURNAL_SPACE_LOW = "journal_space_low"
    """Less space is free for the journal than service.journal_min_free_mb."""
    CARDS_UNJOURNALED = "cards_unjournaled"
    """The device counts more cards out than the journal holds, with nothing left to send:
    a card event was lost on the way (a forged ACK)."""
    MISREAD_CARD = "misread_card"
    """A card due to a hand could not be read: its place is known, its identity not. It ends
    when the card is re-read, a supervisor enters it (enter-card) or the round is void."""
    INTRUDER_ON_TABLE = "intruder_on_table"
    """The automatic machine dealt a card that was never part of its pack: it must come off
    the table and stay out of the machine; a person confirms it is removed (clear-hold)."""
    FEED_INCOMPLETE = "feed_incomplete"
    """A double feed announced more cards than came (or than a round can hold): the host
    would otherwise wait behind a locked gate for cards that cannot come."""
    DEVICE_CANNOT_REPLAY = "device_cannot_replay"
    """The controller restarted in the middle of a shoe and the device does not resend what
    it sent meanwhile (no acknowledged delivery): a card may have left unrecorded. A
    supervisor confirms the layout: enter-card for a card on the table the journal lacks,
    void-round, or clear-hold when nothing is missing."""


EVENTS_LOST_HOLDS = frozenset(
    {
        HoldReason.SEQUENCE_GAP,
        HoldReason.SEQUENCE_REGRESSION,
        HoldReason.JOURNAL_BEHIND_DEVICE,
        HoldReason.FEED_INCOMPLETE,
        HoldReason.CARDS_UNJOURNALED,
    }
)
"""Holds that mean device events were lost: the round under way may be missing cards."""
OPERATOR_CLEARED_HOLDS = EVENTS_LOST_HOLDS | {
    HoldReason.DEVICE_CANNOT_REPLAY,
    HoldReason.DECK_SET_MISMATCH,
    HoldReason.PACK_COUNT_MISMATCH,
    HoldReason.JOURNAL_STORAGE,
    HoldReason.INTRUDER_ON_TABLE,
}
"""Holds no device event can end: a person must look and clear them (ClearHold)."""


def fault_hold(kind: FaultKind) -> str:
    return f"fault.{kind.name.lower()}"


HOLD_ALARMS: dict[str, AlarmKind] = {
    HoldReason.SEQUENCE_GAP: AlarmKind.SEQUENCE_GAP,
    HoldReason.SEQUENCE_REGRESSION: AlarmKind.SEQUENCE_GAP,
    HoldReason.JOURNAL_BEHIND_DEVICE: AlarmKind.SEQUENCE_GAP,
    HoldReason.JOURNAL_STORAGE: AlarmKind.STORAGE,
    HoldReason.JOURNAL_SPACE_LOW: AlarmKind.STORAGE,
    HoldReason.SELF_TEST_FAILED: AlarmKind.DEVICE_FAULT,
    HoldReason.FEED_INCOMPLETE: AlarmKind.DEVICE_FAULT,
    HoldReason.CARDS_UNJOURNALED: AlarmKind.SEQUENCE_GAP,
    HoldReason.FIRMWARE_NOT_APPROVED: AlarmKind.FIRMWARE,
    fault_hold(FaultKind.TAMPER): AlarmKind.TAMPER,
    fault_hold(FaultKind.FIRMWARE_HASH_MISMATCH): AlarmKind.FIRMWARE,
    fault_hold(FaultKind.CARD_COUNT_MISMATCH): AlarmKind.CARD_COUNT,
    fault_hold(FaultKind.MEMORY_FAILURE): AlarmKind.DEVICE_FAULT,
}
"""Holds that are also alarms: the pit must look, not only wait for the device."""
