"""Build a simulated device from a profile name and options: the one entry point."""

from __future__ import annotations

from typing import Any

from cardshoe.drivers.messages import DeviceKind
from cardshoe.firmware_sim.core import FirmwareCore
from cardshoe.firmware_sim.manual_shoe import ManualShoe
from cardshoe.firmware_sim.profiles import DEFAULT_PROFILE, get_profile
from cardshoe.firmware_sim.shuffler_dealer import ShufflerDealer

MODEL_CLASSES: dict[DeviceKind, type[FirmwareCore]] = {
    DeviceKind.MANUAL_SHOE: ManualShoe,
    DeviceKind.AUTO_DEALER: ShufflerDealer,
}


def create_device(
    profile: str = DEFAULT_PROFILE, *, serial_number: str | None = None, **options: Any
) -> FirmwareCore:
    """A powered-up device of the named profile; options are FirmwareCore's keywords.

    Options: seed, decks, deck_set, cut_card_depth, injections, timing,
    clock, queue_capacity.
    """
    device_profile = get_profile(profile).with_serial_number(serial_number)
    return MODEL_CLASSES[device_profile.kind](device_profile, **options)
