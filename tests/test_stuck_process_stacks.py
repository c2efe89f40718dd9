"""A child stuck past its stop signal fails its test with the stack it is stuck in."""

from __future__ import annotations

import re
import signal
import subprocess
import sys

import pytest
from support.process_support import StuckProcess, ended, in_mask

STUCK = """
import signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
def waiting_for_ever():
    print("ready", flush=True)
    while True:
        time.sleep(0.05)
waiting_for_ever()
"""


def test_a_child_that_ignores_its_signal_is_shown_where_it_waits() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", STUCK], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert child.stdout is not None and child.stdout.readline() == "ready\n"
    child.terminate()
    with pytest.raises(StuckProcess) as stuck:
        ended(child, 0.5)
    assert "did not end within 0.5 s" in str(stuck.value)
    assert "in waiting_for_ever" in str(stuck.value)
    assert child.poll() is not None
    ignored = re.search(r"SigIgn ([0-9a-f]+)", str(stuck.value))
    assert ignored is not None, "the signal masks close the message"
    assert in_mask(int(ignored.group(1), 16), signal.SIGTERM)


def test_a_child_that_ends_gives_its_exit_code() -> None:
    child = subprocess.Popen([sys.executable, "-c", "raise SystemExit(4)"])
    assert ended(child, 30) == 4
