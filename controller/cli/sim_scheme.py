"""The simulator's sim:// URL scheme, registered where shoectl starts, never by the core.

The service and the technician's commands open whatever URL they are given through the
drivers' scheme registry; only the command-line entry point (and the test suite) knows
that a simulator exists, so the core never imports firmware_sim.
"""

from __future__ import annotations

from typing import Any

from cardshoe.drivers.transports.base import Transport
from cardshoe.drivers.transports.registry import Scheme, open_serial, register_scheme


def _open_sim(url: str, usb_backend: Any) -> Transport:
    # Late for start-up: main registers this scheme for every shoectl run, and the simulator
    # (~100 ms of imports) loads only when a sim:// URL opens.
    from cardshoe.firmware_sim.sim_url import register_sim_url_handler

    register_sim_url_handler()
    return open_serial(url, usb_backend)


SIM_SCHEME = Scheme("sim", _open_sim)


def register_sim_scheme() -> None:
    """Let every device URL in this process be sim://... (idempotent)."""
    register_scheme(SIM_SCHEME)
