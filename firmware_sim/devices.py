"""Build a simulated device from a profile name and options: the one entry point."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from cardshoe.drivers.protocol.messages import DeviceKind
from cardshoe.firmware_sim.core import FirmwareCore
from cardshoe.firmware_sim.faults import Scenario, load_scenario, parse_injection
from cardshoe.firmware_sim.manual_shoe import ManualShoe
from cardshoe.firmware_sim.profiles import DEFAULT_PROFILE, get_profile
from cardshoe.firmware_sim.shoe import DEFAULT_DECKS
from cardshoe.firmware_sim.shuffler_dealer import ShufflerDealer
from cardshoe.firmware_sim.shuffles import parse_shuffle
from cardshoe.firmware_sim.timing import INSTANT, Timing

MODEL_CLASSES: dict[DeviceKind, type[FirmwareCore]] = {
    DeviceKind.MANUAL_SHOE: ManualShoe,
    DeviceKind.AUTO_DEALER: ShufflerDealer,
}


def create_device(
    profile: str = DEFAULT_PROFILE, *, serial_number: str | None = None, **options: Any
) -> FirmwareCore:
    """A powered-up device of the named profile; options are FirmwareCore's keywords.

    Options: seed, decks, deck_set, cut_card_depth, injections, timing,
    clock, queue_capacity, pairing_key, pairing_mode, shuffle, previous_order.
    """
    device_profile = get_profile(profile).with_serial_number(serial_number)
    return MODEL_CLASSES[device_profile.kind](device_profile, **options)


def configure_device(
    *,
    profile: str | None = None,
    seed: int | None = None,
    decks: int | None = None,
    serial_number: str | None = None,
    inject: Iterable[str] = (),
    scenario: Path | None = None,
    realistic: bool = False,
    pairing_mode: bool = False,
    shuffle: str = "fair",
) -> FirmwareCore:
    """A device from user-facing settings (CLI flags, sim:// URL parameters).

    A scenario file supplies what the other settings leave out; its
    injections and the `inject` strings (KIND@round=N...) all apply.
    shuffle is fair, riffle:N or carry:LEN (firmware_sim/shuffles.py).
    """
    base = load_scenario(scenario) if scenario is not None else Scenario()
    return create_device(
        profile or base.profile or DEFAULT_PROFILE,
        serial_number=serial_number,
        seed=seed if seed is not None else base.seed,
        decks=decks or base.decks or DEFAULT_DECKS,
        injections=[*base.injections, *(parse_injection(text) for text in inject)],
        timing=Timing.realistic() if realistic else INSTANT,
        pairing_mode=pairing_mode,
        shuffle=parse_shuffle(shuffle),
    )
