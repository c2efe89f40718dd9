"""Waiting for a child process to end, and seeing why when it does not.

A child that outlives its stop signal in CI leaves only "timed out after 30
seconds". Every child of the suite runs with faulthandler on (tests/conftest.py
sets PYTHONFAULTHANDLER), so SIGABRT makes it print every thread's stack to its
stderr before it dies: the failure then says where it was stuck.
"""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Callable
from typing import Any

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
        process.send_signal(signal.SIGABRT)
        try:
            _, stderr = process.communicate(timeout=STACKS_WAIT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            _, stderr = process.communicate()
        printed = log() if log is not None else stderr
        raise StuckProcess(
            f"{process.args} did not end within {timeout:g} s; what it printed, "
            f"with its threads' stacks at SIGABRT:\n{printed}"
        ) from None
