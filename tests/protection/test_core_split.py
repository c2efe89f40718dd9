"""The pricing child on a core of its own: real processes, real affinities.

Each case runs in a process of its own, as the service does: pinning the
test run's own threads would slow every test after it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from cardshoe.controller.protection.core_split import CoreSplit, split_cores

CORES = sorted(os.sched_getaffinity(0))
needs_two_cores = pytest.mark.skipif(len(CORES) < 2, reason="needs two cores to keep apart")

PROBE = textwrap.dedent(
    """
    import json, os, signal, sys, threading
    from cardshoe.controller.config import GameConfig
    from cardshoe.controller.protection.pricing_process import PRICING, PricedGame

    cores = json.loads(sys.argv[1])
    if cores:
        os.sched_setaffinity(0, cores)
    game = PricedGame(GameConfig(decks=8).build_game())
    PRICING.run_on_own_core()
    PRICING.start()
    started_before = threading.Thread(target=threading.Event().wait, daemon=True)
    started_before.start()
    first = PRICING._child.pid
    priced = PRICING.price(game, 8, ()).cards_left
    report = {
        "priced": priced,
        "child": sorted(os.sched_getaffinity(first)),
        "threads": sorted(
            {tuple(sorted(os.sched_getaffinity(int(t)))) for t in os.listdir("/proc/self/task")}
        ),
    }
    os.kill(first, signal.SIGKILL)
    PRICING._child.wait()
    PRICING.price(game, 8, ())  # priced here while the child is gone
    PRICING.price(game, 8, ())  # by a new child
    report["restarted"] = PRICING._child.pid != first
    report["child_again"] = sorted(os.sched_getaffinity(PRICING._child.pid))
    print(json.dumps(report))
    """
)


def probe(cores: list[int]) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(cores)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout.splitlines()[-1])


def test_the_last_allowed_core_prices_and_the_rest_serve() -> None:
    assert split_cores({0, 1}) == CoreSplit(service=frozenset({0}), pricing=frozenset({1}))
    assert split_cores([5, 0, 2]) == CoreSplit(service=frozenset({0, 2}), pricing=frozenset({5}))
    assert split_cores({3}) is None
    assert split_cores(()) is None


@needs_two_cores
def test_the_child_and_every_service_thread_are_kept_on_different_cores() -> None:
    report = probe([])
    assert report["priced"] == 416
    assert report["child"] == CORES[-1:]
    assert report["threads"] == [CORES[:-1]]  # the threads started before and after too
    assert report["restarted"]
    assert report["child_again"] == CORES[-1:]  # the same core, not one of the narrowed set


@needs_two_cores
def test_a_service_allowed_one_core_pins_nothing_and_still_prices() -> None:
    report = probe(CORES[:1])
    assert report["priced"] == 416
    assert report["child"] == CORES[:1]
    assert report["threads"] == [CORES[:1]]
    assert report["child_again"] == CORES[:1]
