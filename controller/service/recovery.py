"""The procedure's journal form, and rebuilding the table's exact state from it.

journaled_apply() is the one way an input enters the journal: the input
record, then the facts it caused, in the caller's transaction. Recovery reads
exactly that back.

The journal holds every input the procedure ever received, each followed by
the facts it caused, all committed together. Recovery takes the inputs
after the latest table.idle record (the table was idle with no hold active:
nothing before it can matter), replays them through a fresh TableModel with
no device and no observers, and so stands exactly where the table stood.

While replaying it checks that each input causes the very facts the journal
holds for it. A difference means the journal was altered or the procedure
software changed in the middle of a shoe: recovery reports it, and the
session raises an alarm, because the table's record no longer follows from
its inputs.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from cardshoe.controller.canonical import canonical_json
from cardshoe.controller.config import TableConfig
from cardshoe.controller.journal.records import Record
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.journal.transaction import CLOCK_STEPPED, Transaction
from cardshoe.controller.procedure.facts import ShoeStarted, TableIdle
from cardshoe.controller.procedure.inputs import (
    RECORD_VERSION_KEY,
    from_record,
    is_input_kind,
    record_version,
    to_record,
)
from cardshoe.controller.procedure.shoe import Fact
from cardshoe.controller.procedure.table import TableModel
from cardshoe.controller.protection.watcher import is_watcher_record
from cardshoe.drivers.cardshoe_family import read_version_1_record

SESSION_KIND_PREFIX = "session."
"""Records about the controller process itself (start, recovery); not part of any replay."""
SOFTWARE_KIND_PREFIX = "software."
"""Records about the controller's own software (a regulator's authentication); no replay."""
NOT_REPLAYED_PREFIXES = (SESSION_KIND_PREFIX, SOFTWARE_KIND_PREFIX, CLOCK_STEPPED)
"""Record kinds (by prefix) replay passes over; CLOCK_STEPPED is the journal's own alarm."""


def journaled_apply(
    model: TableModel, item: object, transaction: Transaction, device_serial: str | None
) -> list[Fact]:
    """Record an input, apply it, record the facts it caused; all in one transaction.

    The input record carries the shoe and round as they stood when it came;
    each fact carries its own. Every record carries the device's serial number.
    """
    record = to_record(item)
    transaction.append(
        record.kind,
        record.payload,
        shoe_id=model.shoe_id,
        round_no=model.round_no,
        device_serial=device_serial,
        device_seq=record.device_seq,
    )
    facts = model.apply(item)
    for fact in facts:
        transaction.append(
            fact.event.KIND,
            fact.event.payload(),
            shoe_id=fact.shoe_id,
            round_no=fact.round_no,
            device_serial=device_serial,
        )
    return facts


@dataclass(frozen=True)
class Recovered:
    model: TableModel
    inputs_replayed: int
    mismatches: tuple[str, ...]
    """Where the replayed facts differ from the journaled ones; empty when they agree."""


def read_input(record: Record) -> object:
    """The procedure input a journal record holds, whichever record version it is in."""
    return from_record(record.kind, record.payload, legacy=read_version_1_record)


def device_forms(record: Record) -> tuple[int | None, dict[str, Any] | None]:
    """A device or link record's record version and the neutral form it is read as; (None,
    None) for any other record. A version 1 record holds the cardshoe wire form."""
    if not is_input_kind(record.kind):
        return None, None
    version = record_version(record.kind, record.payload)
    if version is None:
        return None, None
    neutral = to_record(read_input(record)).payload
    return version, {key: value for key, value in neutral.items() if key != RECORD_VERSION_KEY}


def replay_start(journal: Journal) -> int:
    """The id after which the inputs that matter begin: the latest table.idle, or 0."""
    latest = journal.latest([TableIdle.KIND])
    return latest[0].id if latest else 0


def recover(config: TableConfig, journal: Journal, *, after_id: int | None = None) -> Recovered:
    """A model in the state the journal leaves the table in, and any disagreement found.

    after_id: replay the inputs after this record (0: the whole journal, as an audit
    does); None: from the latest table.idle, all a restart needs.
    Raises ConfigError when a shoe is open under other game options than the
    configuration now gives (Macau Art. 18: options do not change mid-shoe).
    """
    model = TableModel(config)
    replay = _Replay(model)
    start = replay_start(journal) if after_id is None else after_id
    for record in journal.records(after_id=start):
        if record.kind == ShoeStarted.KIND:
            config.ensure_unchanged_since(record.payload["fingerprint"], record.payload["shoe_id"])
        replay.take(record)
    replay.finish()
    return Recovered(model, replay.inputs, tuple(replay.mismatches))


class _Replay:
    """Feeds journaled inputs to the model and compares what it says with what follows."""

    def __init__(self, model: TableModel) -> None:
        self.model = model
        self.inputs = 0
        self.mismatches: list[str] = []
        self._input: Record | None = None
        self._expected: list[Fact] = []
        self._journaled: list[Record] = []

    def take(self, record: Record) -> None:
        if record.kind.startswith(NOT_REPLAYED_PREFIXES) or is_watcher_record(record):
            return
        if not is_input_kind(record.kind):
            self._journaled.append(record)
            return
        self.finish()
        self._input = record
        self.inputs += 1
        self._expected = self.model.apply(read_input(record))

    def finish(self) -> None:
        """Compare the facts of the input just replayed with the records that followed it."""
        if self._input is not None:
            self.mismatches.extend(_differences(self._input, self._expected, self._journaled))
        self._input, self._expected, self._journaled = None, [], []


def _differences(source: Record, facts: list[Fact], records: Iterable[Record]) -> list[str]:
    replayed = [_comparable(fact.event.KIND, fact.event.payload(), fact) for fact in facts]
    journaled = [_comparable(record.kind, record.payload, record) for record in records]
    if replayed == journaled:
        return []
    return [
        f"input record {source.id} ({source.kind}): the journal holds {journaled}, "
        f"the replay gives {replayed}"
    ]


def _comparable(
    kind: str, payload: object, where: Fact | Record
) -> tuple[str, object, object, object]:
    """Kind, payload as JSON would return it, shoe and round: what a record and a fact share."""
    return kind, json.loads(canonical_json(payload)), where.shoe_id, where.round_no
