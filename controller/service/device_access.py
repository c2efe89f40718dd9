"""Opening a device from a shoectl command, with one-line errors.

Every command that talks to a device opens it here, so each one accepts
the same URLs and fails the same way: an absent, busy or forbidden device
is exit 3, a malformed URL exit 2, a device that misbehaves exit 1, always
on one line (UserError). The drivers' own log lines (a dropped frame, an
undecodable payload) stay off the command's stderr meanwhile: the command
reports what matters in its output or its one error line, and the service,
which configures logging, still logs them.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Protocol

from cardshoe.controller.errors import (
    EXIT_BAD_INPUT,
    EXIT_CHECK_FAILED,
    EXIT_DEVICE_UNAVAILABLE,
    UserError,
)
from cardshoe.drivers.device import open_device
from cardshoe.drivers.errors import CommandRefused, DriverError, InvalidUrl, LinkProtocolError
from cardshoe.drivers.protocol.error_codes import ErrorCode
from cardshoe.drivers.protocol.messages import Capability

if TYPE_CHECKING:
    from cardshoe.drivers.device import DealerDevice, ShoeDevice
    from cardshoe.drivers.protocol.auth import KeyLookup

PAIRING_KEY_HINT = (
    "give its table's --config (service.key_dir) or --key-dir DIR holding its SERIAL.key"
)
"""How a servicing command is given a paired device's key."""
LOGGER_NAME = "cardshoe"


class Identified(Protocol):
    """What a HELLO and a DeviceInfo both say: who the device is and what it requires."""

    @property
    def serial_number(self) -> str: ...

    @property
    def capabilities(self) -> Capability: ...


@contextmanager
def quiet_device_logs() -> Iterator[None]:
    """Keep the project's log lines off stderr while a command has a device open.

    With no handler configured, Python prints every warning to stderr (its
    last-resort handler), beside the command's own one-line error. A
    NullHandler on the package's logger stops that and nothing else: records
    still reach whatever handlers a service configured on the root logger.
    """
    logger, handler = logging.getLogger(LOGGER_NAME), logging.NullHandler()
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)


@contextmanager
def opened_device(
    url: str, *, timeout: float, keys: KeyLookup | None = None
) -> Iterator[ShoeDevice | DealerDevice]:
    """The device at url for the length of a command, without reconnection.

    keys: the pairing keys to authenticate a paired device with (open_device's);
    a paired device opened without them is refused at once (it would refuse
    every command, and send no event, to a host that has not authenticated).
    """

    with quiet_device_logs():
        try:
            with open_device(url, timeout=timeout, reconnect=False, keys=keys) as device:
                refuse_paired_without_key(device.info, url, keys is not None)
                yield device
        except DriverError as exc:
            raise device_user_error(exc) from exc


def refuse_paired_without_key(device: Identified, url: str, keyed: bool, purpose: str = "") -> None:
    """A paired device (AUTH_REQUIRED) and no keys given: one line naming the options."""

    if keyed or Capability.AUTH_REQUIRED not in device.capabilities:
        return
    raise UserError(
        f"device {device.serial_number!r} at {url} is paired, so it serves only an "
        f"authenticated host: {PAIRING_KEY_HINT} to authenticate{' ' + purpose if purpose else ''}",
        EXIT_DEVICE_UNAVAILABLE,
    )


def device_user_error(exc: DriverError) -> UserError:
    """The exit code a technician's script can act on, with the driver's one-line message."""

    if isinstance(exc, InvalidUrl):
        return UserError(str(exc), EXIT_BAD_INPUT)
    if isinstance(exc, CommandRefused) and exc.code is ErrorCode.AUTH_REQUIRED:
        return UserError(
            f"{exc}: the device is paired, so it serves only an authenticated host: "
            f"{PAIRING_KEY_HINT}",
            EXIT_DEVICE_UNAVAILABLE,
        )
    if isinstance(exc, LinkProtocolError | CommandRefused):
        return UserError(str(exc), EXIT_CHECK_FAILED)
    return UserError(str(exc), EXIT_DEVICE_UNAVAILABLE)
