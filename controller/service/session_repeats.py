"""Which inputs changed nothing, so that a burst of them is counted, not journaled.

A client can send a refused command, and a device a rejected frame, as fast as it
can: each would be a transaction. The session journals one per kind and interval
(journal/repeats.py counts the rest); this module says which inputs qualify and
carries the facts of one that was only counted out of its rolled-back transaction.
"""

from __future__ import annotations

from cardshoe.controller.procedure.facts import Alarm, AlarmKind, RefusedCommand
from cardshoe.controller.procedure.inputs import to_record
from cardshoe.controller.procedure.shoe import Fact
from cardshoe.drivers.api.events import DeviceEvent

REPEAT_INTERVAL_S = 10.0
"""At most one record of each refused or rejected kind per this many seconds."""
REPEATABLE_ALARMS = frozenset({AlarmKind.PROCEDURE_VIOLATION, AlarmKind.DEVICE_FAULT})
"""An input whose only facts are these alarms changed nothing: a refusal, a rejected frame."""


class Counted(Exception):
    """Rolls back a refusal RepeatCounter only counts, carrying the facts to publish."""

    def __init__(self, facts: list[Fact]) -> None:
        super().__init__("counted, not journaled")
        self.facts = facts


def counted_kind(item: object) -> str | None:
    """The record kind an input is counted under when it changes nothing; None for a
    device event (journaled and acknowledged one by one) or an input vouching for a seq."""
    if isinstance(item, DeviceEvent):
        return None
    record = to_record(item)
    return record.kind if record.device_seq is None else None


def only_refusals(facts: list[Fact]) -> bool:
    """Whether every fact is a refusal or a repeatable alarm: the input changed nothing."""
    return bool(facts) and all(
        isinstance(fact.event, RefusedCommand)
        or (isinstance(fact.event, Alarm) and fact.event.kind in REPEATABLE_ALARMS)
        for fact in facts
    )
