"""Reading TOML values: the type and description of every key, and one reader for them all.

Separate from the sections so every key is checked the same way and named in the same words,
whichever section it belongs to; the sections only check what the values mean.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import fields
from enum import StrEnum
from pathlib import Path
from typing import Any

from cardshoe.controller.config.checks import ConfigError, one_of, show
from cardshoe.controller.config.device import DeviceMode
from cardshoe.controller.config.operation import ConsoleLanguage
from cardshoe.controller.config.shoe import BurnPolicy, CutCardPolicy

_FIELD_READERS: dict[tuple[str, str], tuple[type, str]] = {
    ("game", "name"): (str, "a game name"),
    ("game", "decks"): (int, "a whole number of decks"),
    ("game", "commission"): (str, "a commission option name"),
    ("game", "paytable"): (str, "a paytable name"),
    ("game", "demo_rounds"): (int, "a whole number 0-3"),
    ("game", "round_burn"): (int, "a whole number of cards"),
    ("game", "relief_burn"): (int, "a whole number of cards"),
    ("game", "tie_bets"): (str, "a tie option name"),
    ("game", "commission_rounding"): (str, "floor or half-up"),
    ("shoe", "burn"): (BurnPolicy, ""),
    ("shoe", "burn_fixed"): (int, "a whole number 1-8"),
    ("shoe", "cut_card_depth"): (int, "a whole number of cards"),
    ("shoe", "cut_card"): (CutCardPolicy, ""),
    ("shoe", "cut_card_tolerance"): (int, "a whole number of cards"),
    ("shoe", "machine_rounds"): (int, "a whole number of rounds"),
    ("shoe", "machine_end_at"): (tuple, 'a list of times of day such as ["06:00", "22:30"]'),
    ("shoe", "machine_end_at_relief"): (bool, "true or false"),
    ("device", "kind"): (DeviceMode, ""),
    ("device", "url"): (str, "a device path or URL"),
    ("device", "usb_vid"): (int, "a number such as 0x1209"),
    ("device", "usb_pid"): (int, "a number such as 0x0001"),
    ("device", "usb_serial"): (str, "the serial number text"),
    ("device", "allowed_firmware_hashes"): (tuple, "a list of SHA-256 hex strings"),
    ("device", "maker"): (str, "the maker's name"),
    ("device", "house_public_key"): (Path, "a file path"),
    ("device", "protocol"): (str, 'a protocol name such as "cardshoe"'),
    ("service", "journal_path"): (Path, "a file path"),
    ("service", "control_socket"): (Path, "a file path"),
    ("service", "key_dir"): (Path, "a folder path"),
    ("service", "journal_min_free_mb"): (int, "a whole number of megabytes"),
    ("roles", "dealer"): (tuple, 'a list of user names and "@group"s'),
    ("roles", "supervisor"): (tuple, 'a list of user names and "@group"s'),
    ("roles", "technician"): (tuple, 'a list of user names and "@group"s'),
    ("roles", "console"): (tuple, 'a list of user names and "@group"s'),
    ("roles", "pins_file"): (Path, "a file path"),
    ("roles", "console_idle_s"): (float, "a number of seconds"),
    ("console", "language"): (ConsoleLanguage, ""),
    ("uplink", "broker"): (str, "a broker URL such as mqtts://floor.example:8883"),
    ("uplink", "site"): (str, "a site name"),
    ("uplink", "state_dir"): (Path, "a folder path"),
    ("uplink", "ca"): (Path, "a file path"),
    ("uplink", "cert"): (Path, "a file path"),
    ("uplink", "key"): (Path, "a file path"),
    ("uplink", "resend_after_s"): (float, "a number of seconds"),
    ("uplink", "prune_after_shoe"): (bool, "true or false"),
    ("uplink", "prune_keep_days"): (int, "a whole number of days"),
    ("surveillance", "advantage_threshold"): (float, "a share of the stake such as 0.005"),
}


def section_of(data: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    value = data.get(name, {})
    if not isinstance(value, Mapping):
        raise ConfigError(f"{name} must be a [{name}] section, not a single value")
    return value


def build_section(section: Any, data: Mapping[str, Any]) -> Any:
    names = [item.name for item in fields(section) if not item.metadata.get("derived")]
    reject_unknown_keys(section.SECTION + ".", data, names)
    values = {}
    for name in names:
        kind, description = _FIELD_READERS[(section.SECTION, name)]
        value = read_key(data, name, kind, f"{section.SECTION}.{name}", description)
        if value is not None:
            values[name] = value
    return section(**values)


def reject_unknown_keys(prefix: str, data: Mapping[str, Any], known: list[str]) -> None:
    for key in data:
        if key not in known:
            shown = key if key.isprintable() else json.dumps(key)  # a quoted TOML key may hold \n
            raise ConfigError(f"unknown key {prefix}{shown}: the keys here are {', '.join(known)}")


def read_key(data: Mapping[str, Any], name: str, kind: Any, key: str, description: str) -> Any:
    """The value of one key converted to its field type, or None when the key is absent."""
    if name not in data:
        return None
    value = data[name]
    if issubclass(kind, StrEnum):
        allowed = [member.value for member in kind]
        if value not in allowed:
            raise ConfigError(f"{key} = {show(value)} is not allowed: use {one_of(allowed)}")
        return kind(value)
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise ConfigError(f"{key} = {show(value)} is not {description}")
    # TOML writes inf and nan too; no setting takes either (nan even passes `<` checks).
    if kind is float and (
        isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value)
    ):
        raise ConfigError(f"{key} = {show(value)} is not {description}")
    if kind in (str, Path) and not isinstance(value, str):
        raise ConfigError(f"{key} = {show(value)} is not {description}")
    if kind is bool and not isinstance(value, bool):
        raise ConfigError(f"{key} = {show(value)} is not {description}")
    if kind is tuple:
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise ConfigError(f"{key} = {show(value)} is not {description}")
        return tuple(item.lower() for item in value)
    return kind(value)
