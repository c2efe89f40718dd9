"""A controller process for the crash tests: runs one shoe and may SIGKILL itself on the way.

    python tests/support/crash_child.py JOURNAL DEVICE GAME KIND [POINT NTH]

runs a TableSession over the real driver on DEVICE (the simulator's pty,
served by the test process so that it outlives this one) until the shoe is
reconciled, then prints the ShoeEnded payload as JSON and exits 0. With
POINT and NTH it kills itself with SIGKILL at the NTH time it reaches POINT:

    append    inside a journal transaction, before the NTH record is written
              (the transaction never commits);
    ack       after the commit, before the NTH acknowledgement is sent;
    acked     right after the NTH acknowledgement, before observers and draw control;
    command   right after the NTH draw-control command reached the device.

No part of the controller is replaced: the kill is a real SIGKILL of a real
process in the middle of its real work.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Callable
from typing import Any

from cardshoe.controller.config import DeviceConfig, DeviceMode, GameConfig, TableConfig
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.journal.transaction import Transaction
from cardshoe.controller.service.logging_setup import configure_logging
from cardshoe.controller.service.session import TableSession
from cardshoe.drivers.api.events import DeviceKind
from cardshoe.drivers.api.protocols import open_device

DECK_SET = 0x00BC614E
AUTOMATIC_ROUNDS = 30


def config_for(game: str, kind: str, decks: int) -> TableConfig:
    device = DeviceConfig(kind=DeviceMode(kind))
    return TableConfig(table_id="T1", game=GameConfig(name=game, decks=decks), device=device)


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def kill_at(owner: Any, name: str, nth: int, *, after: bool) -> None:
    """Make owner.name SIGKILL this process on its nth call, before or after it runs."""
    original: Callable[..., Any] = getattr(owner, name)
    calls = 0

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == nth and not after:
            die()
        result = original(*args, **kwargs)
        if calls == nth:
            die()
        return result

    setattr(owner, name, wrapper)


def main(argv: list[str]) -> int:
    journal_path, device_path, game, kind, decks = argv[:5]
    point, nth = (argv[5], int(argv[6])) if len(argv) > 5 else (None, 0)
    config = config_for(game, kind, int(decks))
    configure_logging(stream=sys.stderr)
    with (
        Journal.open(journal_path, table_id="T1", create=True) as journal,
        open_device(device_path) as device,
    ):
        if point == "append":
            kill_at(Transaction, "append", nth, after=False)
        elif point in ("ack", "acked"):
            kill_at(device, "ack", nth, after=point == "acked")
        elif point == "command":
            commands = ("deal_next", "return_cards", "shuffle")
            for name in commands if device.kind is DeviceKind.DEALER else ("release_one",):
                kill_at(device, name, nth, after=True)
        session = TableSession.open(config, journal, device)
        automatic = config.device.kind is DeviceMode.AUTO
        ended = session.run_shoe(
            deck_set=DECK_SET,
            rounds=AUTOMATIC_ROUNDS if automatic else None,
            betting_time_s=0,
        )
    assert ended is not None
    print(json.dumps(ended.payload()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
