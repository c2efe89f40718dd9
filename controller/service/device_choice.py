"""Which device the table's [device] section names: by URL, by USB ids, or the only one there.

A URL is taken as it is. USB ids (vendor, product, serial; any of them)
pick among the discovered candidates, whether a USB-serial adapter or a raw
USB dealer, so a shoe keeps its configuration whichever port it is plugged
into. With neither, the one candidate found is used; two are never guessed
between. Pure over the candidates, so the service's discovery is the only I/O.
"""

from __future__ import annotations

from collections.abc import Iterable

from cardshoe.controller.config import DeviceConfig
from cardshoe.controller.errors import UserError
from cardshoe.drivers.discovery import Candidate
from cardshoe.drivers.errors import DeviceNotFound


def configured_url(device: DeviceConfig, candidates: Iterable[Candidate]) -> str:
    """The URL to open; DeviceNotFound when nothing matches, UserError when several do."""
    if device.url is not None:
        return device.url
    wanted = {
        "usb_vid": device.usb_vid,
        "usb_pid": device.usb_pid,
        "usb_serial": device.usb_serial,
    }
    given = {key: value for key, value in wanted.items() if value is not None}
    matching = [candidate for candidate in candidates if _matches(candidate, given)]
    described = ", ".join(f"device.{key} = {_show(value)}" for key, value in given.items())
    if not matching:
        what = f"with {described}" if given else "to use (no device.url set)"
        raise DeviceNotFound(f"no shoe or dealer found {what}: check the cable, `shoectl list`")
    if len(matching) > 1:
        urls = ", ".join(candidate.url for candidate in matching)
        raise UserError(
            f"{len(matching)} devices match ({urls}): set device.url or device.usb_serial "
            "in the table configuration"
        )
    return matching[0].url


def _matches(candidate: Candidate, given: dict[str, int | str]) -> bool:
    found = {
        "usb_vid": candidate.vendor_id,
        "usb_pid": candidate.product_id,
        "usb_serial": candidate.serial_number,
    }
    return all(found[key] == value for key, value in given.items())


def _show(value: int | str) -> str:
    return f"0x{value:04x}" if isinstance(value, int) else repr(value)
