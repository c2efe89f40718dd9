"""The crash campaign: SIGKILL the running service at random moments, over and over, until
the shoe is dealt; nothing may be lost, doubled or decided differently.

The real service (`shoectl run`, a child process) deals from the simulator on
a real pty held by this process, so the device and its unacknowledged events
outlive every service process, as a shoe outlives a crash of the table PC.
Each life of the service lasts a random time from a seeded generator: from
none at all (killed while Python imports) through the journal's replay and
the device handshake into the deal, then SIGKILL, and a new service starts.
A pit boss (a thread here) acts over the control socket whenever a service
answers, deciding from the status it reads: it opens the shoe, confirms it
loaded and cut, and on the automatic machine ends the shoe after ROUNDS
rounds. After the last kill one more service deals until the shoe is
reconciled and stops on SIGTERM.

Then the journal must show: the chain verifies; the device's events 1..N,
each exactly once; one shoe, reconciled, its cards dealt + burned equal to
the device's own count (and on the machine every card back in it); each
round equal to the rules engine's result for its journaled cards, replayed
independently; every restart's replay agreeing with the journal; no alarm
and no void round, since a crash of the controller is no irregularity.

The line campaign deals through a line reader (tests/support/reader_service.py), which
resends nothing: each service started mid-shoe holds device_cannot_replay, and the pit's
supervisor enters the card a killed service read but never journaled, to the hand or the
burn it was due, or clears the hold. The kills start with the shoe, its start-of-shoe burn
included, and the reader has no cut card: the pit ends the shoe after its rounds.

CARDSHOE_CRASH_SEED=<n> replays a run: the seed is printed and named in every
failure message. CARDSHOE_CRASH_KILLS=<n> sets the kills per device kind.
"""

from __future__ import annotations

import contextlib
import os
import random
import secrets
import signal
import threading
import time
from collections import Counter
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support.reader_service import ReaderDealer, simulated_reader_table
from support.service_support import (
    Table,
    assert_shoe_dealt_once,
    running_service,
    simulated_table,
    wait_until,
)
from support.session_support import (
    assert_every_event_journaled_once,
    journaled,
    procedure_alarms,
    rounds_as_the_rules_engine_plays_them,
)

from cardshoe.controller.errors import UserError
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.procedure.facts import ENTERED_CARD_ID
from cardshoe.controller.service.control_client import request
from cardshoe.controller.service.recovery import recover
from cardshoe.firmware_sim.timing import Timing

SHOE_ID = "CRASH-1"
DECK_SET = 0x00BC614E
KILLS = int(os.environ.get("CARDSHOE_CRASH_KILLS", "100"))
"""Kills per device kind: two kinds make the campaign's 200 and more."""
LONGEST_LIFE_S = 1.0
"""Each life lasts a uniform random time up to this; start-up takes about 0.3 s of it."""
PIT_POLL_S = 0.05
FINAL_WAIT_S = 120.0
"""The last service's time to finish the shoe; reached only when something is broken."""


@dataclass(frozen=True)
class Campaign:
    """One device kind's table, paced so the shoe spans most of the kills."""

    kind: str
    game: str
    decks: int
    pull_interval_s: float = 0.0
    """The virtual dealer's pace at a manual shoe."""
    deal_s: float = 0.0
    """The automatic machine's time to deal a card."""
    rounds: int | None = None
    """The pit ends a shoe without a cut card (the automatic machine's, or the line reader's
    here) after this many rounds."""
    kills: int = KILLS


CAMPAIGNS = [
    pytest.param(Campaign("shoe", "punto-banco", decks=8, pull_interval_s=0.06), id="shoe"),
    pytest.param(Campaign("auto", "macau-1", decks=6, deal_s=0.03, rounds=120), id="auto"),
    pytest.param(
        Campaign("line", "punto-banco", decks=2, rounds=14, kills=max(1, KILLS // 8)), id="line"
    ),
]


class PitBoss(threading.Thread):
    """Does what the pit does for the shoe, whenever a service answers on the control socket.

    Each action follows from the status just read, so an answer lost to a kill
    is simply read again from the next service: nothing is sent twice.
    """

    def __init__(self, table: Table, campaign: Campaign, dealer: ReaderDealer | None) -> None:
        super().__init__(name="pit-boss")
        self.table = table
        self.campaign = campaign
        self.dealer = dealer
        """A reader's dealer and supervisor; None: the simulated device deals by itself."""
        self.shoe_seen_open = False
        self.shoe_done = threading.Event()
        self.failure: BaseException | None = None
        """What stopped the pit, other than a service not answering: a failure of the test."""
        self._halt = threading.Event()

    def run(self) -> None:
        try:
            while not self._halt.is_set() and not self.shoe_done.is_set():
                # No service answering, or one killed mid-answer: ask the next one.
                with contextlib.suppress(UserError):
                    self._act(self._ask("status"))
                self._halt.wait(PIT_POLL_S)
        except BaseException as failure:
            self.failure = failure

    def stop(self) -> None:
        self._halt.set()
        self.join()

    def _ask(self, command: str, **arguments: Any) -> dict[str, Any]:
        status = request(self.table.socket_path, command, timeout=2.0, **arguments)
        if status["device"] is not None and status["state"] != "idle":  # None: starting
            self.shoe_seen_open = True
        return status

    def _act(self, status: dict[str, Any]) -> None:
        state = status["state"]
        if self.dealer is not None:
            self.dealer.act(status)
        if state == "idle" and self.shoe_seen_open:
            self.shoe_done.set()
        elif state == "idle" and self.dealer is not None:
            self._ask("new-shoe", shoe_id=SHOE_ID)  # a reader's cards name no deck set
        elif state == "idle":
            self._ask("new-shoe", shoe_id=SHOE_ID, deck_set=DECK_SET)
        elif state == "loading":
            self._ask("shoe-loaded")
        elif state == "cut":
            self._ask("cut-done")
        elif self._time_to_end(status):
            self._ask("end-shoe")

    def _time_to_end(self, status: dict[str, Any]) -> bool:
        rounds = self.campaign.rounds
        return (
            rounds is not None
            and status["state"] in ("dealing", "returning")
            and status["last_round"] is None
            and status["rounds_finished"] >= rounds
        )


def campaign_seed() -> int:
    seed = int(os.environ.get("CARDSHOE_CRASH_SEED") or secrets.randbits(32))
    print(f"crash campaign seed {seed}: CARDSHOE_CRASH_SEED={seed} replays it")
    return seed


def kill_and_restart(
    table: Table, rng: random.Random, seed: int, kills: int, dealer: ReaderDealer | None
) -> None:
    """kills lives of the service, each ended by SIGKILL after a random time. At a reader's
    table every other life ends once a card is due, and the dealer draws it while no service
    listens: its line is lost for certain."""
    for life in range(kills):
        draws_unheard = dealer is not None and life % 2 == 1
        with running_service(table) as service:
            time.sleep(rng.uniform(0, LONGEST_LIFE_S))
            if draws_unheard:
                assert dealer is not None
                draws_unheard = dealer.wait_for_a_card_due(LONGEST_LIFE_S)
            code = service.stop(signal.SIGKILL)
            assert code == -signal.SIGKILL, (
                f"seed {seed}: life {life} ended by itself, exit {code}: {service.log_tail()}"
            )
        if dealer is not None:
            dealer.deal_on(draw_first=draws_unheard)


def deal_to_the_end(table: Table, pit: PitBoss, seed: int) -> None:
    with running_service(table) as service:
        service.wait_for_notification("READY=1")
        ended = lambda: pit.shoe_done.is_set() or pit.failure is not None  # noqa: E731
        wait_until(ended, f"seed {seed}: the shoe to end", FINAL_WAIT_S)
        assert pit.failure is None, f"seed {seed}: the pit failed: {pit.failure!r}"
        assert service.stop() == 0, f"seed {seed}: {service.log_tail()}"


@pytest.mark.timeout(600)
@pytest.mark.parametrize("campaign", CAMPAIGNS)
def test_sigkill_at_random_moments_loses_nothing_and_decides_nothing_differently(
    tmp_path: Path, campaign: Campaign
) -> None:
    seed = campaign_seed()
    rng = random.Random(seed)
    with campaign_table(tmp_path, campaign, seed) as table:
        dealer = ReaderDealer(table) if campaign.kind == "line" else None
        pit = PitBoss(table, campaign, dealer)
        pit.start()
        try:
            kill_and_restart(table, rng, seed, campaign.kills, dealer)
            deal_to_the_end(table, pit, seed)
        finally:
            pit.stop()
        core = table.core
        device_cards_dealt = core.status().cards_dealt if dealer is None else core.counts.cards
        config = table.config()
    check_the_journal(table, campaign, device_cards_dealt, seed)
    if dealer is not None:
        check_the_layout_confirmations(table, dealer, seed)
    with Journal.open(table.journal_path, table_id=config.table_id, create=True) as journal:
        rebuilt = recover(config, journal)
    assert (rebuilt.mismatches, rebuilt.model.state) == ((), "idle"), f"seed {seed}"


def campaign_table(folder: Path, campaign: Campaign, seed: int) -> AbstractContextManager[Table]:
    if campaign.kind == "line":
        return simulated_reader_table(
            folder, seed=seed, game=campaign.game, decks=campaign.decks, cut_card_depth=None
        )
    return simulated_table(
        folder,
        seed=seed,
        kind=campaign.kind,
        game=campaign.game,
        decks=campaign.decks,
        pull_interval_s=campaign.pull_interval_s,
        timing=Timing(deal_s=campaign.deal_s),
    )


def check_the_layout_confirmations(table: Table, dealer: ReaderDealer, seed: int) -> None:
    """Services started mid-shoe held the table (device_cannot_replay), and each card drawn
    while no service ran came back as the supervisor's entry. (A kill can take the answer to a
    confirmation with it, journaled or not: the next service holds and is confirmed again.)"""
    path, failure = table.journal_path, f"seed {seed}"
    findings = {r.payload["hold"] for r in journaled(path, "host.finding")}
    assert findings == {"device_cannot_replay"}, failure
    corrected = [r.payload for r in journaled(path, "card.corrected")]
    burned = [r.payload for r in journaled(path, "card.burned")]
    entered = [*corrected, *(p for p in burned if p["physical_id"] == ENTERED_CARD_ID)]
    assert len(entered) >= dealer.drawn_unheard > 0, failure
    assert {payload["card"] for payload in entered} <= set(dealer.entered), failure
    assert {payload["irregularity"] for payload in corrected} <= {"device_cannot_replay"}
    print(
        f"{len(dealer.entered)} lost cards entered ({len(entered) - len(corrected)} into a "
        f"burn; {dealer.drawn_unheard} drawn while no service ran), {dealer.cleared} holds "
        "cleared"
    )


def check_the_journal(table: Table, campaign: Campaign, device_cards_dealt: int, seed: int) -> None:
    path = table.journal_path
    failure = f"seed {seed}"
    starts = journaled(path, "session.started")
    mid_shoe = sum(record.shoe_id is not None for record in starts)
    lives = campaign.kills + 1
    print(f"{len(starts)} of {lives} lives reached the session, {mid_shoe} in the open shoe")
    assert 1 <= len(starts) <= lives, failure
    assert [r.payload["replay_mismatches"] for r in starts] == [[]] * len(starts), failure
    assert [r.payload for r in procedure_alarms(path)] == [], failure
    assert journaled(path, "round.void") == [], failure
    assert [r.payload["shoe_id"] for r in journaled(path, "shoe.started")] == [SHOE_ID], failure
    (ended,) = [r.payload for r in journaled(path, "shoe.ended")]
    assert ended["dealt"] + ended["burned"] == device_cards_dealt, failure
    if campaign.kind == "line":
        assert_every_event_journaled_once(path)
        assert ended["reconciled"] and ended["device_cards_dealt"] is None, failure
        rounds_as_the_rules_engine_plays_them(path, table.config())
        return
    if campaign.kind == "shoe":
        assert_shoe_dealt_once(table, SHOE_ID)
        return
    assert_every_event_journaled_once(path)
    assert ended["reconciled"] and ended["device_cards_dealt"] == device_cards_dealt, failure
    assert ended["remaining"] == ended["loaded"] == 52 * campaign.decks, failure
    assert ended["returned"] == ended["dealt"], failure
    by_round = Counter(
        (r.round_no, r.payload["physical_id"]) for r in journaled(path, "card.assigned")
    )
    assert [card for card, count in by_round.items() if count > 1] == [], failure
    rounds_as_the_rules_engine_plays_them(path, table.config())
