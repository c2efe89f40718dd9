"""Device profiles: what a simulated device is, read from profiles.toml.

A profile is the data a real device carries in its ROM: model, kind,
capabilities, USB identity, serial number and firmware. Keeping it in a
data file means a new simulated model is a few lines of TOML, not code.
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass, replace
from enum import Enum
from functools import cache, reduce
from importlib import resources
from operator import or_
from typing import Any

from cardshoe.drivers.protocol.errors import MalformedMessage
from cardshoe.drivers.protocol.messages import MAX_TEXT_BYTES, Capability, DeviceKind
from cardshoe.drivers.protocol.wire_fields import Text
from cardshoe.firmware_sim.errors import SimConfigError

DEFAULT_PROFILE = "cs-1"


@dataclass(frozen=True)
class DeviceProfile:
    name: str
    model: str
    kind: DeviceKind
    capabilities: Capability
    usb_vid: int
    usb_pid: int
    manufacturer: str
    product: str
    serial_number: str
    firmware_version: str
    firmware_image: bytes
    """Stands in for the firmware binary; its SHA-256 is the hash a host approves."""
    self_test_checks: int

    @property
    def firmware_hash(self) -> bytes:
        return hashlib.sha256(self.firmware_image).digest()

    def has(self, capability: Capability) -> bool:
        return capability in self.capabilities

    def with_serial_number(self, serial_number: str | None) -> DeviceProfile:
        """The same model with another serial number, for several devices at once."""
        if serial_number is None:
            return self
        return replace(self, serial_number=checked_serial_number(serial_number))


def checked_serial_number(serial_number: str) -> str:
    """A serial number a HELLO can carry (--serial, sim://...?serial=); SimConfigError for
    one it cannot, which the device would otherwise meet only when it first says hello."""
    try:
        return Text(MAX_TEXT_BYTES).from_json(serial_number)
    except MalformedMessage as exc:
        raise SimConfigError(
            f"serial number: {exc}: give at most {MAX_TEXT_BYTES} bytes of text without "
            "control characters"
        ) from None


def _enum_member(enum: type[Enum], name: str, profile: str) -> Any:
    try:
        return enum[name]
    except KeyError:
        raise SimConfigError(
            f"profile {profile}: {name!r} is not a {enum.__name__} "
            f"(use one of {', '.join(enum.__members__)})"
        ) from None


def _profile_from_table(name: str, table: dict[str, Any]) -> DeviceProfile:
    try:
        return DeviceProfile(
            name=name,
            model=str(table["model"]),
            kind=_enum_member(DeviceKind, str(table["kind"]), name),
            capabilities=reduce(
                or_,
                (_enum_member(Capability, str(cap), name) for cap in table["capabilities"]),
                Capability(0),
            ),
            usb_vid=int(table["usb_vid"]),
            usb_pid=int(table["usb_pid"]),
            manufacturer=str(table["manufacturer"]),
            product=str(table["product"]),
            serial_number=str(table["serial_number"]),
            firmware_version=str(table["firmware_version"]),
            firmware_image=str(table["firmware_image"]).encode("utf-8"),
            self_test_checks=int(table["self_test_checks"]),
        )
    except KeyError as exc:
        raise SimConfigError(f"profile {name}: missing key {exc.args[0]!r}") from None


@cache
def load_profiles() -> dict[str, DeviceProfile]:
    """Every profile in the packaged profiles.toml, by name."""
    text = resources.files("cardshoe.firmware_sim").joinpath("profiles.toml").read_text("utf-8")
    return {name: _profile_from_table(name, table) for name, table in tomllib.loads(text).items()}


def get_profile(name: str) -> DeviceProfile:
    profiles = load_profiles()
    try:
        return profiles[name]
    except KeyError:
        raise SimConfigError(
            f"no simulator profile {name!r}; choose one of {', '.join(sorted(profiles))}"
        ) from None
