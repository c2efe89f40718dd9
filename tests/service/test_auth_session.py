"""A whole table session over an authenticated link, and what a replayed frame does to it.

On a paired link the simulator's duplicate-frame fault is exactly a replay:
the same sealed frame, the same counter, twice on the wire. The driver drops
the copy unread, and the session journals the AuthFailure and raises its
alarm, while the card itself counts once.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from support.session_support import (
    FAST_LINK,
    SIM_DECK_SET,
    DealerButton,
    assert_every_event_journaled_once,
    journaled,
    rounds_as_the_rules_engine_plays_them,
    table_config,
)

from cardshoe.controller.journal.store import Journal
from cardshoe.controller.service.recovery import recover
from cardshoe.controller.service.session import TableSession
from cardshoe.drivers.api.device_link import Capability
from cardshoe.drivers.api.protocols import open_device
from cardshoe.drivers.errors import AuthenticationFailed
from cardshoe.drivers.protocol.auth import LinkKey, new_pairing_key
from cardshoe.firmware_sim.core import FirmwareCore
from cardshoe.firmware_sim.devices import create_device
from cardshoe.firmware_sim.faults import parse_injection
from cardshoe.firmware_sim.sim_url import publish, register_sim_url_handler, release

CONFIG = table_config(decks=1)
KEY = new_pairing_key()


def paired_shoe(*inject: str, key: bytes = KEY) -> FirmwareCore:
    core = create_device(
        "cs-1",
        seed=9,
        decks=1,
        pairing_key=key,
        injections=[parse_injection(text) for text in inject],
    )
    core.dealer.auto = True
    return core


@contextmanager
def authenticated_session(core: FirmwareCore, journal_path: Path) -> Iterator[TableSession]:
    register_sim_url_handler()
    name = f"auth-session-{id(core)}"
    url = publish(core, name)
    keys = {core.serial_number: LinkKey(KEY)}.get
    try:
        with (
            Journal.open(journal_path, table_id=CONFIG.table_id, create=True) as journal,
            open_device(url, timing=FAST_LINK, keys=keys) as device,
        ):
            assert Capability.AUTHENTICATED in device.capabilities
            yield TableSession.open(CONFIG, journal, device, [DealerButton(core)])
    finally:
        release(name)


def test_a_whole_shoe_deals_over_an_authenticated_link(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    core = paired_shoe()
    with authenticated_session(core, path) as session:
        ended = session.run_shoe(deck_set=SIM_DECK_SET)
    assert ended is not None and ended.reconciled
    assert_every_event_journaled_once(path)
    rounds_as_the_rules_engine_plays_them(path, CONFIG)
    assert journaled(path, "link.auth_failure") == []
    assert core.link.auth_failures == 0


def test_a_replayed_frame_is_journaled_with_an_alarm_and_the_card_counts_once(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.sqlite"
    with authenticated_session(paired_shoe("duplicate-frame@card=7"), path) as session:
        ended = session.run_shoe(deck_set=SIM_DECK_SET)
    assert ended is not None and ended.reconciled
    (failure,) = journaled(path, "link.auth_failure")
    assert "replayed" in failure.payload["reason"]
    alarms = [record.payload for record in journaled(path, "alarm")]
    assert {
        "kind": "device_fault",
        "detail": f"the device broke the protocol: {failure.payload['reason']}",
    } in alarms
    assert_every_event_journaled_once(path)
    with Journal.open_readonly(path) as journal:
        assert recover(CONFIG, journal).mismatches == ()


def test_a_session_cannot_open_on_a_device_paired_with_another_key(tmp_path: Path) -> None:
    with (
        pytest.raises(AuthenticationFailed, match="did not prove it holds"),
        authenticated_session(paired_shoe(key=new_pairing_key()), tmp_path / "j.sqlite"),
    ):
        pytest.fail("the session opened")
