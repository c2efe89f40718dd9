"""Retention on the table PC: delete the closed shoes the floor holds, keep a checkpoint.

Only a prefix of the journal is ever deleted, ending at a shoe.ended record,
so every shoe left is whole and the chain of what remains verifies from the
checkpoint (the last deleted record's hash). The cut never passes:

- the floor's anchor (every record up to it is stored and verified there);
- the end of the last closed shoe (the open shoe stays whole);
- shoes that ended less than keep_days ago.

Before deleting, the whole journal must verify against the anchor: a
journal that no longer matches the floor keeps everything, for the audit.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cardshoe.controller.journal.errors import JournalError
from cardshoe.controller.journal.records import ChainAnchor
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.journal.uplink_state import load_state, state_path

SHOE_ENDED_KIND = "shoe.ended"
NS_PER_DAY = 86_400 * 1_000_000_000


@dataclass(frozen=True)
class PruneResult:
    cut_id: int | None
    """The last record deleted; None when nothing could go."""
    shoes: tuple[str, ...]
    """The closed shoes deleted, oldest first."""
    deleted: int
    why_not: str | None = None


def prune_cut(journal: Journal, anchor: ChainAnchor, keep_before_ns: int) -> tuple[int, list[str]]:
    """The last record that may go, and the shoes that go with it; (0, []) when none may."""
    start = journal.checkpoint()
    cut, shoes = 0, []
    after_id = 0 if start is None else start.record_id
    for record in journal.records(kinds=[SHOE_ENDED_KIND], after_id=after_id):
        if record.id > anchor.record_id or record.time_ns > keep_before_ns:
            break
        cut = record.id
        shoes.append(record.shoe_id or "?")
    return cut, shoes


def prune_journal(path: Path, anchor: ChainAnchor, *, keep_days: float, now_ns: int) -> PruneResult:
    """Delete the closed shoes the anchor covers; the journal's writer lock is held meanwhile."""
    with Journal.open_readonly(path) as reader:
        table_id = reader.table_id
    with Journal.open(path, table_id=table_id) as journal:
        return prune_open_journal(journal, anchor, keep_days=keep_days, now_ns=now_ns)


def prune_open_journal(
    journal: Journal, anchor: ChainAnchor, *, keep_days: float, now_ns: int
) -> PruneResult:
    """prune_journal on a journal already open for writing (the service, after a shoe)."""
    checked = journal.verify(anchor=anchor)
    if not checked.ok:
        raise JournalError(
            f"{journal.path}: does not verify against the floor's anchor {anchor} "
            f"(record {checked.first_bad_id}: {checked.reason}): nothing pruned; "
            "keep the journal for the audit",
            exit_code=1,
        )
    keep_before_ns = now_ns - int(keep_days * NS_PER_DAY)
    cut, shoes = prune_cut(journal, anchor, keep_before_ns)
    if cut == 0:
        return PruneResult(
            None, (), 0, "no closed shoe lies wholly within the anchor and the days kept"
        )
    return PruneResult(cut, tuple(shoes), journal.prune_through(cut))


def floor_anchor(state_dir: Path, table_id: str) -> ChainAnchor | None:
    """The anchor the floor last sent, as the uplink keeps it; None before the first."""
    held = load_state(state_path(state_dir, table_id)).anchor
    return None if held.hash is None else ChainAnchor(held.record_id, held.hash)
