"""shoectl sim: run a simulated shoe or shuffler-dealer on a pty or TCP port.

The command itself lives in cardshoe.firmware_sim.cli so that
`python -m cardshoe.firmware_sim` is the very same command; that module
imports only click until the command runs.
"""

from cardshoe.firmware_sim.cli import sim

__all__ = ["sim"]
