"""A shoectl command started with SIGTERM and SIGINT blocked still hears them.

A thread that has blocked signals passes its mask on to the processes it
spawns; a blocked stop signal waits pending for ever, and only SIGKILL ends
the command, without its last batch, transaction or acknowledgement.
"""

from __future__ import annotations

import select
import signal
import subprocess
import sys

from support.process_support import (
    ended,
    in_mask,
    signal_mask,
    spawned_with_stop_signals_blocked,
)

SIM = [sys.executable, "-m", "cardshoe.controller.cli", "sim", "--pty", "--seed", "1"]


def test_a_command_spawned_with_its_stop_signals_blocked_ends_at_ctrl_c() -> None:
    process = spawned_with_stop_signals_blocked(
        lambda: subprocess.Popen(SIM, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    )
    try:
        ready, _, _ = select.select([process.stdout], [], [], 20)
        assert ready, "the simulator printed nothing within 20 s"
        assert process.stdout is not None and process.stdout.readline().startswith("/dev/pts/")
        for number in (signal.SIGINT, signal.SIGTERM):
            assert not in_mask(signal_mask(process.pid, "SigBlk"), number), number.name
        process.send_signal(signal.SIGINT)
        assert ended(process, 10) == 0, "Ctrl-C is the normal way to stop it"
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()
