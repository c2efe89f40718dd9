"""Waiting for a child process to end, and seeing why when it does not.

A child that outlives its stop signal in CI leaves only "timed out after 30
seconds". Every child of the suite runs with faulthandler on (tests/conftest.py
sets PYTHONFAULTHANDLER), so SIGABRT makes it print every thread's stack to its
stderr before it dies: the failure then says where it was stuck.
"""

from __future__ import annotations

import signal
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from cardshoe.controller.service.stop_signals import STOP_SIGNALS

STACKS_WAIT_S = 10.0
"""How long a stuck child may take to write its stacks after SIGABRT."""


class StuckProcess(AssertionError):
    """A child did not end in time; the message holds what it printed, stacks included."""


def ended(
    process: subprocess.Popen[Any], timeout: float, log: Callable[[], str] | None = None
) -> int:
    """The child's exit code once it ends within timeout; else its stacks, in StuckProcess.

    log reads the child's log file, for a child whose stderr goes there; without
    it, the stacks are read from its stderr pipe.
    """
    try:
        return process.wait(timeout)
    except subprocess.TimeoutExpired:
        dispositions = signal_dispositions(process.pid)
        process.send_signal(signal.SIGABRT)
        try:
            _, stderr = process.communicate(timeout=STACKS_WAIT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            _, stderr = process.communicate()
        printed = log() if log is not None else stderr
        raise StuckProcess(
            f"{process.args} did not end within {timeout:g} s; what it printed, with its "
            f"threads' stacks at SIGABRT:\n{printed}\n"
            f"its signals when it had not ended (last, where CI's tail shows it): {dispositions}"
        ) from None


SIGNAL_LINES = ("SigPnd", "ShdPnd", "SigBlk", "SigIgn", "SigCgt")
"""/proc/PID/status's signal masks: pending (thread, process), blocked, ignored, caught."""


def signal_dispositions(pid: int) -> str:
    """The child's signal masks, hex as the kernel prints them: whether its stop signal waits
    pending, blocked, or is ignored says why it did not stop."""
    try:
        return ", ".join(f"{name} {signal_mask(pid, name):016x}" for name in SIGNAL_LINES)
    except OSError as exc:
        return f"/proc/{pid}/status unreadable: {exc.strerror}"


Spawned = TypeVar("Spawned")


@contextmanager
def stop_signals_blocked() -> Iterator[None]:
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


def spawned_with_stop_signals_blocked(spawn: Callable[[], Spawned]) -> Spawned:
    """spawn() run on a thread of its own that blocked SIGTERM and SIGINT first: the child
    inherits that mask, and the test's own thread keeps its own."""
    spawned: list[Spawned] = []
    failed: list[BaseException] = []

    def blocked_then_spawn() -> None:
        with stop_signals_blocked():
            try:
                spawned.append(spawn())
            except BaseException as exc:  # handed to the test's thread, raised there
                failed.append(exc)

    thread = threading.Thread(target=blocked_then_spawn)
    thread.start()
    thread.join()
    if failed:
        raise failed[0]
    return spawned[0]


def signal_mask(pid: int, name: str) -> int:
    """One of a process's signal masks (SIGNAL_LINES) from /proc: bit N-1 is signal N."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{name}:"):
            return int(line.split()[1], 16)
    raise AssertionError(f"no {name} in /proc/{pid}/status")


def in_mask(mask: int, number: int) -> bool:
    """Whether signal `number` is in a /proc signal mask (bit N-1 is signal N)."""
    return bool(mask & 1 << (number - 1))
