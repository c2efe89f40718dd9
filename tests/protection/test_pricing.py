"""Pricing off the session thread: a real child process and a real worker thread."""

from __future__ import annotations

import errno
import os
import pickle
import signal
import subprocess
import sys
import threading
import time

import pytest
from structlog.testing import capture_logs

from cardshoe.controller.config import GameConfig
from cardshoe.controller.protection import pricing_child
from cardshoe.controller.protection.advantage import player_edges
from cardshoe.controller.protection.pricing_process import (
    CHILD_MODULE,
    PricedGame,
    PricingProcess,
)
from cardshoe.controller.protection.pricing_worker import MAX_WAIT_S, QUIET_S, PricingWorker
from cardshoe.controller.rules.cards import parse_card
from cardshoe.controller.rules.errors import RulesError


@pytest.fixture
def pricer():
    process = PricingProcess()
    yield process
    process.close()


OUT = [parse_card(card) for card in ("7S", "7H", "7D", "7C", "KS", "2H", "9D")]


def test_the_child_prices_exactly_what_the_rules_engine_prices(pricer) -> None:
    for name in ("punto-banco", "seven-up", "macau-2"):
        game = GameConfig(name=name, decks=6).build_game()
        assert pricer.price(PricedGame(game), 6, OUT) == player_edges(game, 6, OUT)


def test_a_child_that_dies_is_replaced_and_no_pricing_is_lost(pricer) -> None:
    game = PricedGame(GameConfig(decks=8).build_game())
    expected = player_edges(game.game, 8, OUT)
    assert pricer.price(game, 8, OUT) == expected
    first = pricer._child
    assert first is not None
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    with capture_logs() as logs:
        assert pricer.price(game, 8, OUT) == expected  # priced here while the child was gone
    assert [log["event"] for log in logs] == ["pricing process unavailable; pricing in the service"]
    assert pricer.price(game, 8, OUT) == expected
    assert pricer._child is not None and pricer._child.pid != first.pid


def test_a_child_started_then_killed_before_its_first_request_costs_no_pricing(pricer) -> None:
    """The request's flush fails on the dead child's pipe, and closing the pipe flushed the
    same bytes again: that second broken pipe escaped as a traceback from the pricing."""
    game = PricedGame(GameConfig(decks=8).build_game())
    pricer.start()
    child = pricer._child
    assert child is not None
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    with capture_logs() as logs:
        assert pricer.price(game, 8, OUT) == player_edges(game.game, 8, OUT)
    assert [log["event"] for log in logs] == ["pricing process unavailable; pricing in the service"]


def test_a_shoe_that_cannot_be_priced_is_that_requests_error_and_the_child_stays_up(
    pricer,
) -> None:
    """A card seen more often than one deck holds (a salted shoe) used to end the child, and
    every later round of that shoe paid for a new one: under load the respawns outlived the
    session that asked."""
    game = PricedGame(GameConfig(decks=1).build_game())
    assert pricer.price(game, 1, OUT) == player_edges(game.game, 1, OUT)
    child = pricer._child
    assert child is not None
    salted = [*OUT, parse_card("7S")]
    with capture_logs() as logs, pytest.raises(RulesError, match="7S seen 2 times"):
        pricer.price(game, 1, salted)
    assert logs == []  # nothing says the child is gone: it is not
    assert pricer._child is child and child.poll() is None
    assert pricer.price(game, 1, OUT) == player_edges(game.game, 1, OUT)


def test_the_child_ignores_ctrl_c_and_ends_when_its_parent_hangs_up(pricer) -> None:
    game = PricedGame(GameConfig(decks=8).build_game())
    pricer.price(game, 8, ())
    child = pricer._child
    assert child is not None
    os.kill(child.pid, signal.SIGINT)  # what a terminal sends the whole process group
    assert pricer.price(game, 8, OUT) == player_edges(game.game, 8, OUT)
    assert pricer._child is child and child.poll() is None
    pricer.close()
    assert child.returncode == 0


def test_the_worker_does_the_job_under_way_then_only_the_latest_and_leaves_no_thread() -> None:
    """Rounds that came while a pricing was under way are coalesced: only the latest
    remaining shoe is priced next, and one line says how many were passed over."""
    done: list[int] = []
    started, release = threading.Event(), threading.Event()

    def slow(job: int) -> None:
        started.set()
        release.wait(5)
        done.append(job)

    worker: PricingWorker[int] = PricingWorker(slow, name="test-pricing")
    worker.submit(0)
    assert started.wait(5)
    for job in range(1, 5):
        worker.submit(job)
    assert [thread.name for thread in threading.enumerate()].count("test-pricing") == 1
    with capture_logs() as logs:
        release.set()
        worker.drain()
    assert done == [0, 4]
    assert [(log["event"], log["rounds"]) for log in logs] == [
        ("rounds not priced: a later round's remaining shoe was", 3)
    ]
    assert "test-pricing" not in [thread.name for thread in threading.enumerate()]
    worker.submit(5)  # a new thread for new work
    worker.drain()
    assert done[-1] == 5


def test_a_job_waits_for_a_pause_in_the_dealing_and_drain_does_not() -> None:
    """A pricing beside the cards doubled their p99 even from the other core: the job
    starts only once no card has come for QUIET_S, unless drain() asks for it."""
    dealt_at: list[float] = []
    started: list[float] = []
    worker: PricingWorker[int] = PricingWorker(lambda job: started.append(time.monotonic()))

    def deal() -> None:
        dealt_at.append(time.monotonic())
        worker.dealt()

    deal()
    worker.submit(1)
    for _ in range(6):
        time.sleep(QUIET_S / 5)
        deal()
    deadline = time.monotonic() + 30
    while not started and time.monotonic() < deadline:
        time.sleep(0.01)
    (start,) = started
    before = [at for at in dealt_at if at <= start]
    assert start - before[-1] >= QUIET_S  # a pause, as long as asked, before it began
    worker.drain()

    dealing = threading.Event()

    def keep_dealing() -> None:
        while not dealing.is_set():
            worker.dealt()
            time.sleep(0.01)

    dealer = threading.Thread(target=keep_dealing)
    dealer.start()
    try:
        worker.submit(2)
        asked = time.monotonic()
        worker.drain()  # the end of a shoe or of the run waits for no pause
        assert len(started) == 2 and time.monotonic() - asked < MAX_WAIT_S
    finally:
        dealing.set()
        dealer.join()


@pytest.mark.skipif(not hasattr(os, "SCHED_IDLE"), reason="SCHED_IDLE is Linux's")
def test_the_child_prices_at_the_lowest_cpu_priority(pricer) -> None:
    game = PricedGame(GameConfig(decks=8).build_game())
    assert pricer.price(game, 8, OUT) == player_edges(game.game, 8, OUT)
    child = pricer._child
    assert child is not None
    assert os.sched_getscheduler(child.pid) == os.SCHED_IDLE
    assert os.sched_getscheduler(0) != os.SCHED_IDLE  # the service itself keeps its priority


def test_a_refused_priority_leaves_the_child_pricing_at_its_parents(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A unit's system-call filter refusing the call (EPERM; no seccomp filter can be set up
    here) used to end the child before it priced anything, so every round priced in the
    service, beside the card."""

    def refused(*_: object) -> None:
        raise PermissionError(errno.EPERM, os.strerror(errno.EPERM))

    monkeypatch.setattr(os, "sched_setscheduler", refused)
    monkeypatch.setattr(os, "nice", refused)
    pricing_child.yield_the_cpu()
    (line,) = capsys.readouterr().err.splitlines()
    assert "prices at the service's CPU priority" in line
    assert "Operation not permitted" in line and "SystemCallFilter" in line


def test_a_failing_job_is_logged_and_the_next_one_still_runs() -> None:
    done: list[int] = []

    def fussy(job: int) -> None:
        if job == 1:
            raise ValueError("bad shoe")
        done.append(job)

    worker: PricingWorker[int] = PricingWorker(fussy)
    with capture_logs() as logs:
        for job in range(3):
            worker.submit(job)
            worker.drain()  # each priced: none coalesced into a later one
    assert done == [0, 2]
    assert [log["event"] for log in logs] == [
        "remaining-shoe pricing failed; the next round prices again"
    ]


def test_drain_waits_for_the_job_under_way() -> None:
    started, finished = threading.Event(), threading.Event()

    def job(_: None) -> None:
        started.set()
        time.sleep(0.2)
        finished.set()

    worker: PricingWorker[None] = PricingWorker(job)
    worker.submit(None)
    assert started.wait(5)
    worker.drain()
    assert finished.is_set()


def test_a_child_sent_garbage_says_so_in_one_line_and_exits() -> None:
    child = subprocess.run(
        [sys.executable, "-I", "-m", CHILD_MODULE], input=b"not a pickle", capture_output=True
    )
    assert child.returncode == 1
    assert child.stdout == b""
    lines = child.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cardshoe pricing child: UnpicklingError")


def test_a_parent_that_hangs_up_mid_answer_gets_no_traceback_from_the_child() -> None:
    game = PricedGame(GameConfig(decks=8).build_game())
    child = subprocess.Popen(
        [sys.executable, "-I", "-m", CHILD_MODULE],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stdin is not None and child.stdout is not None
    child.stdout.close()  # nobody will read the answer
    # One request, in the pipe before the child can answer: a second one could meet a child
    # that has already gone, and the broken pipe would be this test's own.
    child.stdin.write(pickle.dumps((game.pickled, 8, tuple(OUT))))
    child.stdin.flush()
    child.stdin.close()
    assert child.wait(30) == 0
    assert child.stderr is not None and child.stderr.read() == b""
