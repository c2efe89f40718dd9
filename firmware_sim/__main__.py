"""`python -m cardshoe.firmware_sim`: the same command as `shoectl sim`."""

from cardshoe.firmware_sim.cli import sim

sim(prog_name="python -m cardshoe.firmware_sim")
