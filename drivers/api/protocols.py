"""The protocol registry: a device's family chosen by name, built-in or installed.

The table config's `[device] protocol = NAME` (default "cardshoe") picks the
family; open_device() asks it to build a DeviceLink. A family is a
ProtocolFamily: its name, the capabilities it can ever promise, a parser for
its own `[device.NAME]` table of the config, and open().

Names resolve in this order:
1. BUILTIN_FAMILIES, this package's own families ("module:attribute" strings, so
   a family's code is imported only when a table uses it);
2. the `cardshoe.protocols` entry point group, through which another installed
   distribution adds one, as python-can does for its interfaces. In its
   pyproject.toml:

       [project.entry-points."cardshoe.protocols"]
       acme = "acme_shoe.family:FAMILY"

   where FAMILY is a ProtocolFamily whose name is "acme". A built-in name cannot
   be taken over by an entry point.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from cardshoe.drivers.api.device_link import Capability, DeviceLink
from cardshoe.drivers.errors import DriverError

ENTRY_POINT_GROUP = "cardshoe.protocols"
DEFAULT_PROTOCOL = "cardshoe"

BUILTIN_FAMILIES: Mapping[str, str] = {
    "cardshoe": "cardshoe.drivers.cardshoe_family:FAMILY",
    "hid": "cardshoe.drivers.hid.family:FAMILY",
    "line": "cardshoe.drivers.line.family:FAMILY",
}
"""Each built-in family's name and where its ProtocolFamily lives."""


class UnknownProtocol(DriverError):
    """No family of that name is built in or installed."""


class BadProtocolOptions(DriverError):
    """A family's [device.NAME] table does not say what it needs; the message says how."""


@dataclass(frozen=True)
class OpenRequest:
    """Everything open_device() hands a family; each family reads what applies to it."""

    url: str
    timeout: float = 2.0
    """Seconds to connect and learn who the device is."""
    reconnect: bool = True
    """After an unplug, keep reconnecting (LinkLost / LinkRestored) instead of ending."""
    options: Any = None
    """What the family's parse_options made of its [device.NAME] table (None: defaults)."""
    usb_backend: Any = None
    """A pyusb backend for usb:// URLs (the simulator's in tests); None: the system's."""
    keys: Callable[[str], Any] | None = None
    """The host's pairing key for a serial number, for families with AUTHENTICATED."""
    timing: Any = None
    """The family's own timing knobs (cardshoe: a LinkTiming), for tests and benchmarks."""


def _no_options(table: Mapping[str, Any], base_dir: Path) -> None:
    if table:
        raise BadProtocolOptions(
            f"this protocol takes no options, but its table sets {', '.join(sorted(table))}: "
            "remove them"
        )


@dataclass(frozen=True)
class ProtocolFamily:
    """One way of talking to devices, registered under a name."""

    name: str
    capabilities: Capability
    """The most any device of the family guarantees; a device declares its own subset."""
    open: Callable[[OpenRequest], DeviceLink]
    """Connect and return the DeviceLink; raise the DriverError kinds of drivers/errors.py."""
    parse_options: Callable[[Mapping[str, Any], Path], Any] = field(default=_no_options)
    """Read the [device.NAME] table (relative paths against the config's folder); raise
    BadProtocolOptions with one line saying what is wrong and how to fix it."""
    summary: str = ""
    """One line for `shoectl` listings: what devices this family speaks to."""


def _load(target: str, where: str) -> ProtocolFamily:
    module_name, _, attribute = target.partition(":")
    try:
        found = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise UnknownProtocol(f"{where} names {target!r}, which cannot be loaded: {exc}") from exc
    family = found() if callable(found) and not isinstance(found, ProtocolFamily) else found
    if not isinstance(family, ProtocolFamily):
        raise UnknownProtocol(f"{where} names {target!r}, which is no ProtocolFamily")
    return family


def _installed() -> dict[str, str]:
    """The entry points of the group, by name (a built-in name is never shadowed)."""
    return {
        point.name: point.value
        for point in entry_points(group=ENTRY_POINT_GROUP)
        if point.name not in BUILTIN_FAMILIES
    }


def family_names() -> list[str]:
    """Every family a table can name: built-in first, then installed, each sorted."""
    return sorted(BUILTIN_FAMILIES) + sorted(_installed())


def find_family(name: str) -> ProtocolFamily:
    """The family registered under name; UnknownProtocol lists the names there are."""
    target = BUILTIN_FAMILIES.get(name)
    where = f"built-in protocol {name!r}"
    if target is None:
        target = _installed().get(name)
        where = f"entry point {name!r} of group {ENTRY_POINT_GROUP}"
    if target is None:
        raise UnknownProtocol(
            f"no device protocol named {name!r}: use one of {', '.join(family_names())}, "
            f"or install the package that provides it (entry point group {ENTRY_POINT_GROUP})"
        )
    family = _load(target, where)
    if family.name != name:
        raise UnknownProtocol(f"{where} is a family named {family.name!r}, not {name!r}")
    return family


def open_device(
    url: str,
    *,
    protocol: str = DEFAULT_PROTOCOL,
    options: Any = None,
    timeout: float = 2.0,
    reconnect: bool = True,
    usb_backend: Any = None,
    keys: Callable[[str], Any] | None = None,
    timing: Any = None,
) -> DeviceLink:
    """Connect to the device at url with the family named protocol, within timeout seconds.

    options: what the family's parse_options returned for the table's [device.NAME]
    table (None: its defaults). Raises UnknownProtocol, or the family's DriverError.
    """
    family = find_family(protocol)
    request = OpenRequest(
        url=url,
        timeout=timeout,
        reconnect=reconnect,
        options=options,
        usb_backend=usb_backend,
        keys=keys,
        timing=timing,
    )
    return family.open(request)
