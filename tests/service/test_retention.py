"""uplink.prune_after_shoe: the service's observer prunes what the floor verified, no more."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.dealt_journals import deal_shoes

from cardshoe.controller.config import UplinkConfig
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.journal.uplink_state import (
    Position,
    UplinkState,
    save_state,
    state_path,
)
from cardshoe.controller.procedure.facts import CardsReturned, ShoeEnded
from cardshoe.controller.service.retention import PruneAfterShoe

SHOE_ENDED = ShoeEnded(
    shoe_id="S",
    rounds=2,
    loaded=416,
    dealt=10,
    burned=3,
    returned=0,
    intruders=0,
    remaining=403,
    device_cards_dealt=10,
    reconciled=True,
)


@pytest.fixture
def journal(tmp_path: Path) -> Path:
    path = tmp_path / "journal.sqlite"
    deal_shoes(path, 2)
    return path


def records(path: Path) -> list[tuple[int, str, str]]:
    with Journal.open_readonly(path) as opened:
        return [(r.id, r.hash, r.kind) for r in opened.records()]


def keep_anchor(state_dir: Path, record_id: int, digest: str) -> None:
    anchor = Position(record_id, digest)
    save_state(state_path(state_dir, "table-1"), UplinkState(anchor, anchor))


def test_after_a_shoe_the_service_prunes_the_shoes_the_floor_verified(
    journal: Path, tmp_path: Path
) -> None:
    before = records(journal)
    last_id, last_hash, _ = before[-1]
    keep_anchor(tmp_path, last_id, last_hash)
    uplink = UplinkConfig(state_dir=tmp_path, prune_after_shoe=True, prune_keep_days=0)
    with Journal.open(journal, table_id="table-1") as opened:
        pruner = PruneAfterShoe(opened, uplink)
        pruner.notify(CardsReturned(expected=1, counted=1))
        assert len(records(journal)) == len(before)
        pruner.notify(SHOE_ENDED)
        assert records(journal) == []
        assert opened.verify().ok


def test_without_an_anchor_or_with_a_wrong_one_nothing_is_pruned(
    journal: Path, tmp_path: Path
) -> None:
    before = records(journal)
    uplink = UplinkConfig(state_dir=tmp_path, prune_after_shoe=True, prune_keep_days=0)
    with Journal.open(journal, table_id="table-1") as opened:
        pruner = PruneAfterShoe(opened, uplink)
        pruner.notify(SHOE_ENDED)
        assert records(journal) == before
        keep_anchor(tmp_path, before[-1][0], "0" * 64)
        pruner.notify(SHOE_ENDED)
        assert records(journal) == before
