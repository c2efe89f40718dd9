"""The few exceptions a caller of the drivers has to tell apart.

Every failure of a port, a USB device or the link ends as one of these, so
the controller needs one except clause per decision it makes (wait, hold the
table, tell the technician) instead of one per library. Each message is one
line a technician can act on; AccessDenied names the udev group that grants
access.
"""

from __future__ import annotations

from enum import Enum

UDEV_GROUP = "cardshoe"
UDEV_RULES_FILE = "udev/70-cardshoe.rules"
ACCESS_HINT = (
    f"add the user to group '{UDEV_GROUP}' "
    f"({UDEV_RULES_FILE} sets GROUP={UDEV_GROUP} MODE=0660), then log in again"
)


class DriverError(Exception):
    """Anything that stops the drivers from talking to a device."""


class InvalidUrl(DriverError):
    """A device URL that names no transport or has a malformed address."""


class DeviceNotFound(DriverError):
    """No device at that URL: nothing plugged in, a wrong path, or a wrong serial number."""


class PortBusy(DriverError):
    """Another process holds the port: two readers must never share one shoe."""


class AccessDenied(DriverError):
    """The operating system refused access to the device node."""

    def __init__(self, what: str) -> None:
        super().__init__(f"permission denied for {what}: {ACCESS_HINT}")


class DeviceGone(DriverError):
    """The link went down (unplugged, closed), so a command's outcome is unknown."""


class DeviceTimeout(DriverError):
    """The device did not answer a command after every retry."""


class LinkProtocolError(DriverError):
    """The device speaks the protocol wrongly or in a version this host cannot use."""


class AuthenticationFailed(DriverError):
    """The device could not be authenticated (protocol 1.1): it holds another pairing key,
    it is unpaired though this host holds a key for it, or it is paired and this host holds
    none. Either way nothing it sends is trusted; re-pairing is the fix when it is ours."""


class ProtocolDowngrade(AuthenticationFailed):
    """A paired device answered in a protocol minor below the one pinned when it was
    paired: a relay rewriting the version on the wire, or its firmware rolled back."""


class Refusal(Enum):
    """Why the host refused a command itself, before any device saw it."""

    UNSUPPORTED = "unsupported"
    """The device's capabilities do not include it (DeviceLink's defaults)."""


class CommandRefused(DriverError):
    """The device answered a command with an error code instead of OK (code: its family's
    error code enum), or the host refused it for the device (a Refusal)."""

    def __init__(self, command: str, code: Enum) -> None:
        super().__init__(f"the device refused {command}: {code.name}")
        self.command = command
        self.code = code
