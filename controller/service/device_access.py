"""Opening a device from a shoectl command, with one-line errors.

Every command that talks to a device opens it here, so each one accepts
the same URLs and fails the same way: an absent, busy or forbidden device
is exit 3, a malformed URL exit 2, a device that misbehaves exit 1, always
on one line (UserError).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from cardshoe.controller.errors import (
    EXIT_BAD_INPUT,
    EXIT_CHECK_FAILED,
    EXIT_DEVICE_UNAVAILABLE,
    UserError,
)

if TYPE_CHECKING:
    from cardshoe.drivers.device import DealerDevice, ShoeDevice
    from cardshoe.drivers.errors import DriverError
    from cardshoe.drivers.protocol.auth import KeyLookup


@contextmanager
def opened_device(
    url: str, *, timeout: float, keys: KeyLookup | None = None
) -> Iterator[ShoeDevice | DealerDevice]:
    """The device at url for the length of a command, without reconnection.

    keys: the pairing keys to authenticate a paired device with (open_device's).
    """
    from cardshoe.drivers.device import open_device
    from cardshoe.drivers.errors import DriverError

    try:
        with open_device(url, timeout=timeout, reconnect=False, keys=keys) as device:
            yield device
    except DriverError as exc:
        raise device_user_error(exc) from exc


def device_user_error(exc: DriverError) -> UserError:
    """The exit code a technician's script can act on, with the driver's one-line message."""
    from cardshoe.drivers.errors import CommandRefused, InvalidUrl, LinkProtocolError
    from cardshoe.drivers.protocol.error_codes import ErrorCode

    if isinstance(exc, InvalidUrl):
        return UserError(str(exc), EXIT_BAD_INPUT)
    if isinstance(exc, CommandRefused) and exc.code is ErrorCode.AUTH_REQUIRED:
        return UserError(
            f"{exc}: the device is paired, so it serves only an authenticated host: give its "
            "table's --config (service.key_dir) or --key-dir DIR holding its SERIAL.key",
            EXIT_CHECK_FAILED,
        )
    if isinstance(exc, LinkProtocolError | CommandRefused):
        return UserError(str(exc), EXIT_CHECK_FAILED)
    return UserError(str(exc), EXIT_DEVICE_UNAVAILABLE)
