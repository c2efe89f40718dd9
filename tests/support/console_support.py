"""A table set up for its console: this user as [roles] console, and two people with PINs,
set through the real `shoectl console pin set` reading standard input."""

from __future__ import annotations

import os
import pwd
import subprocess
import sys

from support.service_support import Table

DEALER, DEALER_PIN = "ann", "2468"
SUPERVISOR, SUPERVISOR_PIN = "sam", "9753"
OTHER_DEALER, OTHER_DEALER_PIN = "lee", "1357"
ME = pwd.getpwuid(os.geteuid()).pw_name
"""The tests' own user stands for the console's user ([roles] console)."""


def set_pin(
    table: Table, name: str, role: str, pin: str, again: str | None = None
) -> subprocess.CompletedProcess[str]:
    """`shoectl console pin set NAME --role ROLE --config ...` with the PIN twice on stdin."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "cardshoe.controller.cli",
            "console",
            "pin",
            "set",
            name,
            "--role",
            role,
            "--config",
            str(table.config_path),
        ],
        input=f"{pin}\n{again or pin}\n",
        capture_output=True,
        text=True,
        timeout=60,
    )


def with_console(table: Table, idle_s: float = 300) -> None:
    """[roles]: this user is the console, the PINs in pins.json; ann and lee deal, sam
    supervises."""
    table.config_path.write_text(
        table.config_path.read_text()
        + f'[roles]\nconsole = ["{ME}"]\npins_file = "pins.json"\nconsole_idle_s = {idle_s}\n'
    )
    for name, role, pin in (
        (DEALER, "dealer", DEALER_PIN),
        (SUPERVISOR, "supervisor", SUPERVISOR_PIN),
        (OTHER_DEALER, "dealer", OTHER_DEALER_PIN),
    ):
        done = set_pin(table, name, role, pin)
        assert done.returncode == 0, done.stderr
