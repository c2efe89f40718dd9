"""Attach a simulated device to a real pseudo-terminal, as if on a serial port.

The host opens the pty's slave side with pyserial (or miniterm, or
`shoectl info PATH`) like any serial port. The simulator keeps its own copy
of the slave descriptor open for the life of the pty, so a host may open,
close and reopen it without the master ever reading EIO, and it sets the
slave raw at once, so nothing the device sends is echoed back before the
host has configured the port.

Unplugging closes the pty and removes the link: a host read fails, and the
path is gone, as when a USB-serial adapter is pulled and udev removes its
/dev/serial/by-id link. (A link left pointing at the closed /dev/pts/N
would let a host reconnect to whatever pty the kernel hands that number to
next: another simulator's, under load.) A pty cannot come back under the
same number, so re-plugging opens a new one and points the link at it: a
host that reconnects through the link finds the device again.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import tty
from pathlib import Path

from cardshoe.firmware_sim.runner import READ_SIZE, DeviceThread, SimulatedDevice

log = logging.getLogger(__name__)

LINK_NAME = "ttySIM0"


class PtyEndpoint:
    def __init__(self, link: Path) -> None:
        self.link = link
        self._master: int | None = None
        self._slave: int | None = None
        self.path = ""
        self._open()

    def _open(self) -> None:
        master, slave = os.openpty()
        tty.setraw(slave)
        os.set_blocking(master, False)
        self._master, self._slave = master, slave
        self.path = os.ttyname(slave)
        staging = self.link.with_name(self.link.name + ".new")
        with contextlib.suppress(FileNotFoundError):
            staging.unlink()
        staging.symlink_to(self.path)
        staging.replace(self.link)
        log.info("simulator: pty %s (link %s)", self.path, self.link)

    def fds(self) -> list[int]:
        return [] if self._master is None else [self._master]

    def read(self, fd: int) -> bytes:
        try:
            return os.read(fd, READ_SIZE)
        except (BlockingIOError, OSError):
            return b""

    def write(self, data: bytes) -> None:
        """Write what the pty takes; with nobody reading, a full buffer drops the rest."""
        if self._master is None:
            return
        view = memoryview(data)
        while view:
            try:
                written = os.write(self._master, view)
            except BlockingIOError:
                log.debug("simulator: pty buffer full, %d bytes dropped", len(view))
                return
            view = view[written:]

    def plug_changed(self, plugged: bool) -> None:
        if plugged:
            self._open()
        else:
            self.close()

    def close(self) -> None:
        """Close the pty and remove the link: what an unplug and the end of the device do."""
        self._close_pty()
        with contextlib.suppress(FileNotFoundError):
            self.link.unlink()

    def _close_pty(self) -> None:
        for fd in (self._master, self._slave):
            if fd is not None:
                os.close(fd)
        self._master = self._slave = None


class PtyAttachment:
    """A device on a pty; `path` is today's /dev/pts/N, `link` survives re-plugs."""

    def __init__(self, core: SimulatedDevice, link: Path | None = None) -> None:
        self.core = core
        self._own_dir: Path | None = None
        if link is None:
            self._own_dir = Path(tempfile.mkdtemp(prefix="cardshoe-sim-"))
            link = self._own_dir / LINK_NAME
        self.link = link
        self._endpoint = PtyEndpoint(self.link)
        self._thread = DeviceThread(core, self._endpoint, f"sim-pty-{core.serial_number}")
        self._thread.start()

    @property
    def path(self) -> str:
        return self._endpoint.path

    def close(self) -> None:
        """Stop the device thread, which closes the pty and removes the link."""
        self._thread.close()
        if self._own_dir is not None:
            self._own_dir.rmdir()

    def __enter__(self) -> PtyAttachment:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def serve_pty(core: SimulatedDevice, link: Path | None = None) -> PtyAttachment:
    """Put `core` on a new pty and run it on a background thread until close().

    `link` is where to keep the stable symlink; by default a fresh temporary
    directory holds it.
    """
    return PtyAttachment(core, link)
