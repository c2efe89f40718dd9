"""The pricing child on a core of its own, and the service's threads on the others.

At the lowest CPU priority alone (pricing_child.py) the child still slowed
the card: on a 2-core table PC, bench/bench_session.py measured the durable
wire-to-decision p99 at 3.7-4.3 ms with the pricing on against 1.7-1.9 ms
with it off. Linux counts a core that runs only idle-priority work as idle,
so the service's threads keep waking onto the child's core and taking it
back, and the child keeps landing on theirs; a process that burns a core
without ever talking to the service does the same. Kept apart, the child
pricing every round and the service on the other core, the same bench
measured 1.05-1.13 times pricing off.

The service asks for the split (table_service.py) before its session
starts the child; the child takes the last core the service was allowed
(systemd's CPUAffinity= or taskset sets that set), and every thread of the
service, and every thread it starts later, the rest. With one core allowed
nothing is pinned: idle priority is then all there is. Only the service
asks: a test run or a script that prices (shoectl demo, odds) keeps every
core it has.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from dataclasses import dataclass

import structlog

log = structlog.get_logger(__name__)

TASKS = "/proc/self/task"
"""One entry per thread of this process, named by its thread id."""


@dataclass(frozen=True)
class CoreSplit:
    """Which cores the service's threads run on, and which the pricing child runs on."""

    service: frozenset[int]
    pricing: frozenset[int]


def split_cores(allowed: Iterable[int]) -> CoreSplit | None:
    """The last allowed core for the pricing, the rest for the service; None with one core."""
    cores = sorted(allowed)
    if len(cores) < 2:
        return None
    return CoreSplit(service=frozenset(cores[:-1]), pricing=frozenset(cores[-1:]))


def allowed_split() -> CoreSplit | None:
    """The split of the cores this process may run on now, where Linux lets a process pin."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    return split_cores(os.sched_getaffinity(0))


def keep_apart(split: CoreSplit, child_pid: int) -> None:
    """Pin the child to its core and every thread of this process to the others.

    A thread started later inherits its starter's cores, so this holds for the threads
    the service starts after it too. A core taken away meanwhile (a cpuset changed under
    the service) leaves both where the kernel puts them, said in one line."""
    try:
        os.sched_setaffinity(child_pid, split.pricing)
        for thread_id in os.listdir(TASKS):
            with contextlib.suppress(ProcessLookupError):  # a thread that ended meanwhile
                os.sched_setaffinity(int(thread_id), split.service)
    except OSError as exc:
        log.warning("pricing not kept on a core of its own", error=str(exc))
        return
    log.info(
        "pricing kept on a core of its own",
        pricing_core=sorted(split.pricing),
        service_cores=sorted(split.service),
    )
