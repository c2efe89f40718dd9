"""The sim:// URL scheme: open a simulated device with pyserial's serial_for_url.

    sim://<profile>?seed=7&decks=8&inject=double-feed@round=3&inject=jam@card=20
    sim://cs-auto?name=table7          a named device that outlives its port

Parameters: seed, decks, serial, inject (repeatable), scenario (a file path),
realistic (1 for real-world timing) and name. Without a name each open
builds a fresh device that lives as long as the port. With a name the first
open builds it and later opens of the same name reach the same device, so
a host that closes and reopens the URL (after an unplug, say) finds it
again; publish() names a device built in code, for tests and the demo.

pyserial has no entry points for URL schemes: call register_sim_url_handler()
once before serial_for_url("sim://..."). Nothing registers on import.
"""

from __future__ import annotations

import threading
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import serial

from cardshoe.firmware_sim.attach_local import LocalAttachment, attach_in_process
from cardshoe.firmware_sim.core import FirmwareCore
from cardshoe.firmware_sim.devices import configure_device
from cardshoe.firmware_sim.errors import SimConfigError

SCHEME = "sim"
HANDLER_PACKAGE = "cardshoe.firmware_sim"
"""Holds protocol_sim.py, the module pyserial looks up for the sim:// scheme."""
SINGLE_VALUED = frozenset({"seed", "decks", "serial", "scenario", "realistic", "name"})

_named: dict[str, LocalAttachment[FirmwareCore]] = {}
_named_lock = threading.Lock()


def register_sim_url_handler() -> None:
    """Let serial.serial_for_url open sim:// URLs (idempotent)."""
    if HANDLER_PACKAGE not in serial.protocol_handler_packages:
        serial.protocol_handler_packages.append(HANDLER_PACKAGE)


def publish(device: FirmwareCore, name: str) -> str:
    """Serve `device` to sim:// opens under `name`; returns the URL to open."""
    with _named_lock:
        if name in _named:
            raise SimConfigError(f"a simulated device is already published as {name!r}")
        _named[name] = attach_in_process(device)
    return f"{SCHEME}://{device.profile.name}?{urlencode({'name': name})}"


def release(name: str) -> None:
    """Stop serving a named device (its thread ends; open ports read end-of-file)."""
    with _named_lock:
        attachment = _named.pop(name, None)
    if attachment is not None:
        attachment.close()


def release_all() -> None:
    for name in list(_named):
        release(name)


def open_sim_url(url: str) -> tuple[LocalAttachment, bool]:
    """The attachment a sim:// URL names, and whether the opener owns (and closes) it."""
    parts = urlsplit(url)
    if parts.scheme != SCHEME or not parts.netloc:
        raise SimConfigError(f"{url!r} is not a sim://<profile>?... URL")
    params = parse_qs(parts.query, keep_blank_values=True, strict_parsing=False)
    unknown = set(params) - SINGLE_VALUED - {"inject"}
    if unknown:
        raise SimConfigError(
            f"{url}: unknown parameters {sorted(unknown)}; "
            f"use {', '.join(sorted(SINGLE_VALUED | {'inject'}))}"
        )
    repeated = sorted(key for key in SINGLE_VALUED & set(params) if len(params[key]) > 1)
    if repeated:
        raise SimConfigError(f"{url}: {', '.join(repeated)} given more than once")
    single = {key: values[0] for key, values in params.items() if key in SINGLE_VALUED}
    name = single.get("name")
    with _named_lock:
        if name is not None and name in _named:
            return _named[name], False
        attachment = attach_in_process(_device_from(parts.netloc, single, params))
        if name is None:
            return attachment, True
        _named[name] = attachment
        return attachment, False


def _device_from(
    profile: str, single: dict[str, str], params: dict[str, list[str]]
) -> FirmwareCore:
    return configure_device(
        profile=profile,
        seed=_whole_number(single, "seed"),
        decks=_whole_number(single, "decks"),
        serial_number=single.get("serial"),
        inject=params.get("inject", []),
        scenario=Path(single["scenario"]) if "scenario" in single else None,
        realistic=single.get("realistic", "0") not in ("0", ""),
    )


def _whole_number(single: dict[str, str], key: str) -> int | None:
    if key not in single:
        return None
    try:
        return int(single[key])
    except ValueError:
        raise SimConfigError(f"sim:// {key} must be a whole number, not {single[key]!r}") from None
