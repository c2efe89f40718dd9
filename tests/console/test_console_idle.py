"""A console left signed in: the service signs the person out after [roles] console_idle_s
without a press, on its own clock, journals it, and no longer acts on the console's token.
A hand-turned clock stands in for the minutes, with a real session, journal and device."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest
from support.console_support import ME
from support.session_support import journaled, session_on, simulated_device, table_config

from cardshoe.controller.config import RolesConfig
from cardshoe.controller.errors import UserError
from cardshoe.controller.service.console_access import ConsoleAccess
from cardshoe.controller.service.control_socket import Peer
from cardshoe.controller.service.pins import PinRole, ScryptCost, make_entry, write_pins

CHEAP = ScryptCost(n=2**10)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_an_idle_sign_in_ends_by_the_services_clock_and_is_journaled(tmp_path: Path) -> None:
    pins = tmp_path / "pins.json"
    write_pins(pins, {"ann": make_entry(PinRole.DEALER, "2468", CHEAP)})
    roles = RolesConfig(console=(ME,), pins_file=pins, console_idle_s=60)
    config = replace(table_config(decks=1), roles=roles)
    clock = Clock()
    access = ConsoleAccess(roles, clock)
    me = Peer(os.getpid(), os.geteuid(), os.getegid())
    with session_on(config, simulated_device(config, seed=3), tmp_path / "j.sqlite") as (
        session,
        _,
    ):
        signed = access.sign_in(session, me, {"name": "ann", "pin": "2468"})
        assert session.dealer == "ann"
        clock.now += 59
        person, rest = access.acting(session, me, "no-more-bets", {"console": signed["token"]})
        assert person is not None and person.user == "ann" and rest == {}
        clock.now += 59
        access.expire(session)  # a press 59 s ago: still signed in
        clock.now += 1
        access.expire(session)
        with pytest.raises(UserError, match="nobody is signed in at the console"):
            access.acting(session, me, "no-more-bets", {"console": signed["token"]})
        journal_path = session.journal.path
    (out,) = [r.payload for r in journaled(journal_path, "session.console_signed_out")]
    assert out == {"name": "ann", "why": "idle"}
