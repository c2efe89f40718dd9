"""Issue 21 item 1 at the driver: the protocol version a paired device is pinned to.

The simulator on a real pty, a relay (support/wire_relay.py) between it and
the pty the host's link opens with pyserial, and the host's key for the
device pinned at protocol 1.2, as `shoectl pair` writes it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.driver_testing import next_of
from support.wire_relay import WireRelay, downgrading, passing

from cardshoe.drivers.device import open_device
from cardshoe.drivers.errors import AuthenticationFailed, ProtocolDowngrade
from cardshoe.drivers.link import LinkTiming
from cardshoe.drivers.link_events import AuthFailure, LinkLost
from cardshoe.drivers.protocol.auth import KeyLookup, LinkKey, new_pairing_key
from cardshoe.drivers.protocol.link_constants import PROTOCOL_MINOR
from cardshoe.drivers.protocol.messages import GetInfo, Message
from cardshoe.firmware_sim.attach_pty import serve_pty
from cardshoe.firmware_sim.core import FirmwareCore
from cardshoe.firmware_sim.devices import create_device

KEY = new_pairing_key()
RECONNECTING = LinkTiming(
    poll_interval_s=0.2, link_down_after_s=0.6, backoff_initial_s=0.05, backoff_max_s=0.2
)


@pytest.fixture
def shoe() -> FirmwareCore:
    return create_device("cs-1", seed=21, pairing_key=KEY)


@pytest.fixture
def relay(tmp_path: Path, shoe: FirmwareCore) -> Iterator[WireRelay]:
    with serve_pty(shoe) as pty, WireRelay(pty.link, tmp_path / "ttyRELAY0") as relay:
        yield relay


def pinned(shoe: FirmwareCore, minor: int = PROTOCOL_MINOR) -> KeyLookup:
    return {shoe.serial_number: LinkKey(KEY, minor)}.get


def lowering_the_hosts_minor_only(direction: object, message: Message) -> Message:
    return GetInfo(message.request_id, 1) if isinstance(message, GetInfo) else message


def test_case_1_a_relay_downgrading_a_paired_link_to_1_1_is_refused(
    shoe: FirmwareCore, relay: WireRelay
) -> None:
    """Issue 21 item 1: 1.2 rewritten to 1.1 in GET_INFO and HELLO was accepted, and the
    HELLO digest and the stream epoch went with it."""
    relay.rewrite = downgrading(1)
    with pytest.raises(ProtocolDowngrade, match=r"protocol 1\.1, below the 1\.2 it was paired at"):
        open_device(str(relay.link), timeout=2, keys=pinned(shoe))
    relay.rewrite = passing
    with open_device(str(relay.link), timeout=2, keys=pinned(shoe)) as device:
        assert device.info.authenticated
        assert device.info.protocol_version == f"1.{PROTOCOL_MINOR}"
        assert device.info.epoch == shoe.link.epoch


def test_case_1_a_downgrade_at_a_reconnect_is_an_alarm_not_a_session(
    shoe: FirmwareCore, relay: WireRelay
) -> None:
    """The relay waits until the table is up, cuts the line, and downgrades the reconnect."""
    with open_device(
        str(relay.link), timeout=2, keys=pinned(shoe), timing=RECONNECTING, reconnect=True
    ) as device:
        relay.cut = True
        next_of(device, LinkLost)
        relay.rewrite = downgrading(1)
        relay.cut = False
        failure = next_of(device, AuthFailure)
        assert "below the 1.2 it was paired at" in failure.reason
        assert not device.connected


def test_a_relay_lowering_only_the_hosts_minor_is_refused_for_the_missing_digest(
    shoe: FirmwareCore, relay: WireRelay
) -> None:
    relay.rewrite = lowering_the_hosts_minor_only
    with pytest.raises(AuthenticationFailed, match="did not vouch for its HELLO"):
        open_device(str(relay.link), timeout=2, keys=pinned(shoe))


def test_a_key_paired_before_versions_were_pinned_keeps_the_floor_of_1_1(
    shoe: FirmwareCore, relay: WireRelay
) -> None:
    """What docs/security.md says a key file without its version line leaves open: pair
    again to pin the version."""
    relay.rewrite = downgrading(1)
    with open_device(str(relay.link), timeout=2, keys=pinned(shoe, 1)) as device:
        assert device.info.protocol_version == "1.1" and device.info.epoch is None
