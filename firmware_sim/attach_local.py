"""Attach a simulated device inside the host's own process, over socket pairs.

The sim:// pyserial handler and the pyusb backend use this: each time the
host opens the device, connect() hands it one end of a fresh socket pair
while the device thread serves the other, so the bytes take the same path
as over TCP, without a port. Unplugging closes the device's end (the host
reads end-of-file) and connect() refuses until the device is plugged back.
"""

from __future__ import annotations

import socket
from typing import Generic, TypeVar

from cardshoe.firmware_sim.runner import DeviceThread, SimulatedDevice, SocketEndpoint

DeviceT = TypeVar("DeviceT", bound=SimulatedDevice)


class DeviceUnplugged(ConnectionError):
    """The simulated device is unplugged, so there is nothing to open."""


class LocalAttachment(Generic[DeviceT]):
    """A device served on a background thread to hosts in the same process."""

    def __init__(self, core: DeviceT) -> None:
        self.core = core
        self._endpoint = SocketEndpoint(core)
        self._thread = DeviceThread(core, self._endpoint, f"sim-local-{core.serial_number}")
        self._thread.start()

    def connect(self) -> socket.socket:
        """The host's end of a new connection (it replaces any earlier one)."""
        if not self.core.plugged:
            raise DeviceUnplugged(f"simulated device {self.core.serial_number} is unplugged")
        host_end, device_end = socket.socketpair()
        self._endpoint.adopt(device_end)
        self._thread.wake()
        return host_end

    def close(self) -> None:
        self._thread.close()

    def __enter__(self) -> LocalAttachment[DeviceT]:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def attach_in_process(core: DeviceT) -> LocalAttachment[DeviceT]:
    """Run `core` on a background thread; call connect() for each host connection."""
    return LocalAttachment(core)
