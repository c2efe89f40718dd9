"""The URL schemes a device can be reached by, and the transport each one opens.

A URL string alone chooses the transport, so test, debugging and production differ only
by that string. This table is the one list of schemes: the configuration checks a
device URL against it, and open_transport() opens through it. A program that brings its
own scheme (shoectl brings the simulator's sim://) registers it once at start-up;
nothing registers on import.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cardshoe.drivers.errors import InvalidUrl
from cardshoe.drivers.transports.base import Transport

SCHEME_SEPARATOR = "://"

Opener = Callable[[str, Any], Transport]
"""Opens a URL of the scheme; the second argument is a pyusb backend (None but in tests)."""


@dataclass(frozen=True)
class Scheme:
    name: str
    open: Opener
    configurable: bool = True
    """Whether a table's device.url may name it (USB devices are configured by their ids)."""


def open_serial(url: str, _usb_backend: Any = None) -> Transport:
    """Open a serial device path or any pyserial URL (the opener of every serial scheme)."""
    # Late for start-up, as in _open_usb: shoectl imports this registry on every run.
    from cardshoe.drivers.transports.serial_port import SerialTransport

    return SerialTransport.open(url)


def _open_usb(url: str, usb_backend: Any) -> Transport:
    # Late for start-up: shoectl imports this registry on every run (main, through sim_scheme),
    # and pyserial and pyusb (5-20 ms) load only when a URL of theirs opens.
    from cardshoe.drivers.transports.usb_bulk import UsbTransport

    return UsbTransport.open(url, backend=usb_backend)


_SCHEMES: dict[str, Scheme] = {
    scheme.name: scheme
    for scheme in (
        Scheme("usb", _open_usb, configurable=False),  # an automatic machine's bulk pipes
        Scheme("socket", open_serial),  # a serial-over-LAN adapter
        Scheme("rfc2217", open_serial),  # a Telnet COM-port server
        Scheme("loop", open_serial, configurable=False),  # pyserial's echo port, for a host alone
    )
}


def register_scheme(scheme: Scheme) -> None:
    """Add a scheme; registering the same one again is a no-op, another under its name a bug."""
    known = _SCHEMES.setdefault(scheme.name, scheme)
    if known != scheme:
        raise ValueError(f"the URL scheme {scheme.name}:// is already registered")


def configurable_schemes() -> tuple[str, ...]:
    return tuple(name for name, scheme in _SCHEMES.items() if scheme.configurable)


def open_transport(url: str, *, usb_backend: Any = None) -> Transport:
    """Open the transport a URL names; a URL without a scheme is a serial device path.

    usb_backend is a pyusb IBackend; tests pass the simulator's so the real pyusb code
    runs without libusb. Other schemes ignore it.
    """
    name, separator, _ = url.partition(SCHEME_SEPARATOR)
    if not separator:
        return open_serial(url, usb_backend)
    scheme = _SCHEMES.get(name)
    if scheme is None:
        known = ", ".join(f"{known}{SCHEME_SEPARATOR}" for known in _SCHEMES)
        raise InvalidUrl(f"{url}: unknown URL scheme {name!r}; known schemes: {known}")
    return scheme.open(url, usb_backend)
