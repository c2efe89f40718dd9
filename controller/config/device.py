"""The [device] section: which device deals, how it is reached, which firmware it may run.

Separate because it is the one section that speaks to the drivers (the transport registry's
URL schemes, the protocol registry that reads its own [device.<protocol>] table).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any, ClassVar

from cardshoe.controller.config.checks import ConfigError, show
from cardshoe.drivers.api.protocols import DEFAULT_PROTOCOL, find_family
from cardshoe.drivers.errors import DriverError
from cardshoe.drivers.transports.registry import configurable_schemes


class DeviceMode(StrEnum):
    SHOE = "shoe"
    """A manual dealing shoe: cut card and start-of-shoe burn (Macau Art. 2.1)."""
    AUTO = "auto"
    """An automatic shuffler-dealer: deals straight after loading (Macau Art. 2.3)."""


_SHA256_PATTERN = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class DeviceConfig:
    """The [device] section: which device deals and which firmware it may run."""

    SECTION: ClassVar[str] = "device"

    kind: DeviceMode = DeviceMode.SHOE
    url: str | None = None
    """A device node (/dev/cardshoe/shoe0) or a pyserial URL (socket://, sim://, rfc2217://)."""
    usb_vid: int | None = None
    usb_pid: int | None = None
    usb_serial: str | None = None
    allowed_firmware_hashes: tuple[str, ...] = ()
    """SHA-256 of every firmware image allowed; empty means not enforced."""
    maker: str | None = None
    """The device's maker as its approval names it: the wire does not carry it, and each
    pack's receipt must (New Jersey 13:69E-1.18A, Washington WAC 230-16-158)."""
    house_public_key: Path | None = None
    """The house's firmware signing public key (PEM): `shoectl pair` gives it to the device,
    and a firmware update is sent only when the house key signed it."""
    protocol: str = DEFAULT_PROTOCOL
    """The device's protocol family by registry name (drivers/api/protocols.py)."""
    protocol_options: Any = field(default=None, metadata={"derived": True})
    """What the family made of the [device.<protocol>] table (None: its defaults)."""

    def __post_init__(self) -> None:
        if self.url is not None:
            _check_url(self.url)
            if self._usb_given:
                raise ConfigError(
                    "device.url and device.usb_vid/usb_pid/usb_serial both given: "
                    "choose the device by url or by USB ids, not both"
                )
        for key, number in (("device.usb_vid", self.usb_vid), ("device.usb_pid", self.usb_pid)):
            if number is not None and not 0 <= number <= 0xFFFF:
                raise ConfigError(f"{key} = {number} is out of range: use 0x0000-0xFFFF")
        if self.usb_serial == "":
            raise ConfigError("device.usb_serial is empty: give the serial number or remove it")
        for digest in self.allowed_firmware_hashes:
            if not _SHA256_PATTERN.match(digest):
                raise ConfigError(
                    f"device.allowed_firmware_hashes has {digest!r}: "
                    "each entry is a SHA-256 written as 64 hex digits"
                )

    @property
    def _usb_given(self) -> bool:
        return any(value is not None for value in (self.usb_vid, self.usb_pid, self.usb_serial))

    @property
    def firmware_check_enforced(self) -> bool:
        return bool(self.allowed_firmware_hashes)

    def firmware_approved(self, firmware_hash: bytes) -> bool:
        """Whether a device reporting this SHA-256 may deal here (always, when not enforced)."""
        return (
            not self.firmware_check_enforced or firmware_hash.hex() in self.allowed_firmware_hashes
        )


def _check_url(url: str) -> None:
    if url.startswith("/"):
        return
    scheme, separator, rest = url.partition("://")
    schemes = configurable_schemes()
    if not separator or scheme not in schemes or not rest:
        raise ConfigError(
            f"device.url = {url!r} is not usable: give a device path such as "
            "/dev/cardshoe/shoe0 or a URL starting with "
            + ", ".join(f"{name}://" for name in schemes)
        )


def split_protocol_table(
    device_data: Mapping[str, Any],
) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    """[device] without its protocol's own [device.<protocol>] table, and that table."""
    protocol = device_data.get("protocol", DEFAULT_PROTOCOL)
    if not isinstance(protocol, str) or protocol not in device_data:
        return device_data, {}
    table = device_data[protocol]
    if not isinstance(table, Mapping):
        raise ConfigError(
            f"device.{protocol} must be a [device.{protocol}] table of the protocol's options"
        )
    return {key: value for key, value in device_data.items() if key != protocol}, table


def with_protocol_options(
    device: DeviceConfig, table: Mapping[str, Any], base_dir: Path
) -> DeviceConfig:
    """The device section with its protocol family's options read by the family itself."""
    try:
        options = find_family(device.protocol).parse_options(table, base_dir)
    except DriverError as exc:
        raise ConfigError(f"device.protocol = {show(device.protocol)}: {exc}") from None
    return replace(device, protocol_options=options)
