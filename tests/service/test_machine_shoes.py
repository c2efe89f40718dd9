"""Issue 28: an automatic shuffler-dealer's shoe ends by the house's policy (Art. 3.2).

The machine takes every round's cards back (Art. 7.2), so only the house ends its shoe:
after shoe.machine_rounds rounds, at a time of day, or at a dealer's relief. Under
--auto-shoe the service then opens the next shoe by itself, and each one reconciles.
With the policy off the shoe deals on, and what the table keeps in memory stays the same
size however long it gets.
"""

from __future__ import annotations

import gc
from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime, time, timedelta
from pathlib import Path

import pytest
from support.service_support import running_service, simulated_table, wait_until
from support.session_support import (
    SIM_DECK_SET,
    ConfirmsFaceUp,
    journaled,
    session_on,
    simulated_device,
    table_config,
)

from cardshoe.controller.procedure.facts import RoundOpened, TableEvent
from cardshoe.controller.scoreboard.board import RESULTS_KEPT, TableBoard
from cardshoe.controller.service.control_socket import EventFeed
from cardshoe.controller.service.session import TableSession
from cardshoe.controller.service.shoe_endings import next_machine_ending

MACHINE_ROUNDS = 4
SHOES = 3


def test_under_auto_shoe_the_machine_ends_its_shoe_every_n_rounds_and_each_reconciles(
    tmp_path: Path,
) -> None:
    with (
        simulated_table(
            tmp_path, kind="auto", shoe_lines=f"machine_rounds = {MACHINE_ROUNDS}\n"
        ) as table,
        running_service(table, "--auto-shoe") as service,
    ):
        service.wait_for_notification("READY=1")
        wait_until(lambda: len(journaled(table.journal_path, "shoe.ended")) >= SHOES, "shoes")
        assert service.stop() == 0
    ended = [record.payload for record in journaled(table.journal_path, "shoe.ended")]
    last_rounds = [record.payload for record in journaled(table.journal_path, "shoe.last_round")]
    assert len({shoe["shoe_id"] for shoe in ended}) == len(ended) >= SHOES
    for shoe in ended[:SHOES]:
        assert shoe["rounds"] == MACHINE_ROUNDS
        assert shoe["reconciled"] is True
        assert shoe["returned"] == shoe["dealt"] + shoe["burned"] > 0
        assert shoe["loaded"] == shoe["remaining"] == 52 * table.config().game.decks
    assert (
        last_rounds[:SHOES]
        == [{"last_round": MACHINE_ROUNDS, "cause": "house", "reason": "machine_rounds"}] * SHOES
    )
    options = journaled(table.journal_path, "shoe.started")[0].payload["options"]
    assert options["machine_rounds"] == MACHINE_ROUNDS


CACHED_TYPES = frozenset({"Outcome"})
"""The rules engine's settlement cache (Game.net_returns) keeps one per outcome a round can
have: a few thousand at most, whatever the shoe's length."""


def project_objects() -> Counter[str]:
    """The live objects of the project's own types, by type, after a collection."""
    gc.collect()
    return Counter(
        type(item).__qualname__
        for item in gc.get_objects()
        if _is_projects(type(item)) and type(item).__qualname__ not in CACHED_TYPES
    )


def _is_projects(kind: type) -> bool:
    # Not every type's __module__ is a string: where a type's class defines __module__ as a
    # descriptor (some the rest of the suite imports), the type shows the descriptor.
    module = getattr(kind, "__module__", None)
    return isinstance(module, str) and module.startswith("cardshoe.")


class RoundCounter:
    """Stops the session at the rounds asked for and counts the project's objects then."""

    def __init__(self, session: TableSession, stops: tuple[int, ...]) -> None:
        self.session = session
        self.stops = list(stops)
        self.objects: dict[int, Counter[str]] = {}

    def notify(self, event: TableEvent) -> None:
        if isinstance(event, RoundOpened) and self.stops and event.round_no == self.stops[0]:
            # The pricing worker may hold a round under way and one waiting at one count and
            # not at the other. Count after it has caught up, so only what the table keeps
            # per round is measured.
            self.session.wait_for_surveillance()
            self.objects[self.stops.pop(0)] = project_objects()
            if not self.stops:
                self.session.stop()


@pytest.mark.timeout(600)  # a few hundred rounds: under 30 s alone, longer on a loaded machine
def test_a_machine_shoe_longer_than_any_policy_keeps_the_same_state_in_memory(
    tmp_path: Path,
) -> None:
    """Policy off: past the board's list and the watcher's packs, nothing grows per round."""
    automatic = table_config(automatic=True, decks=2)
    config = replace(automatic, shoe=replace(automatic.shoe, machine_rounds=0))
    warm, late = RESULTS_KEPT + 10, RESULTS_KEPT + 160
    board = TableBoard(table_id=config.table_id)
    with session_on(config, simulated_device(config, seed=28), tmp_path / "j.sqlite") as (
        session,
        dealer,
    ):
        dealer.seen = _Forgetful()
        counter = RoundCounter(session, (warm, late))
        session.subscribe(ConfirmsFaceUp(session))
        session.subscribe(EventFeed(board))
        session.subscribe(counter)
        session.run_shoe(deck_set=SIM_DECK_SET, betting_time_s=0)
        assert session.snapshot().round_no == late
    assert len(board.results) == RESULTS_KEPT
    assert board.rounds == late - 1
    grown = counter.objects[late] - counter.objects[warm]
    assert counter.objects[warm]["SeenCard"] > 0, "the count sees the watcher's cards"
    assert all(count <= 2 for count in grown.values()), (
        f"after {late - warm} more rounds, more of: {grown.most_common(8)}"
    )


class _Forgetful(list[TableEvent]):
    """The test dealer's record of events, kept empty: this test measures the table's."""

    def append(self, event: TableEvent) -> None:
        return None


def test_the_next_clock_ending_is_the_first_time_of_day_after_the_shoe_opened() -> None:
    opened = datetime(2026, 3, 1, 13, 30).astimezone()
    times = (time(6, 0), time(14, 0), time(22, 0))
    assert next_machine_ending(opened, times) == datetime(2026, 3, 1, 14, 0).astimezone()
    late = datetime(2026, 3, 1, 22, 0).astimezone()
    assert next_machine_ending(late, times) == datetime(2026, 3, 2, 6, 0).astimezone()
    assert next_machine_ending(opened.astimezone(UTC), ()) is None
    assert next_machine_ending(late, (time(22, 0),)) - late == timedelta(days=1)


class Clock:
    """The table PC's wall clock, which the test moves on when a round opens."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


class ClockMovesOn:
    def __init__(self, clock: Clock, at_round: int, by: timedelta) -> None:
        self.clock, self.at_round, self.by = clock, at_round, by

    def notify(self, event: TableEvent) -> None:
        if isinstance(event, RoundOpened) and event.round_no == self.at_round:
            self.clock.now += self.by


def test_a_time_of_day_ends_the_machine_shoe_after_the_round_being_dealt(tmp_path: Path) -> None:
    automatic = table_config(automatic=True, decks=6)
    config = replace(automatic, shoe=replace(automatic.shoe, machine_end_at=("03:00",)))
    clock = Clock(datetime(2026, 3, 1, 2, 58).astimezone())
    path = tmp_path / "j.sqlite"
    with session_on(config, simulated_device(config, seed=3), path, wall_clock=clock) as (
        session,
        _,
    ):
        session.subscribe(ConfirmsFaceUp(session))
        session.subscribe(ClockMovesOn(clock, 3, timedelta(minutes=3)))
        ended = session.run_shoe(deck_set=SIM_DECK_SET, betting_time_s=0)
    assert ended is not None and ended.reconciled and ended.rounds == 3
    assert [record.payload for record in journaled(path, "command.end_shoe")] == [
        {"reason": "machine_end_at"}
    ]
    assert [record.payload for record in journaled(path, "shoe.last_round")] == [
        {"last_round": 3, "cause": "house", "reason": "machine_end_at"}
    ]
