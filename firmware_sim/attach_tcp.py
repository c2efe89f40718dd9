"""Attach a simulated device to a TCP port on loopback: pyserial's socket:// URL.

One host at a time, as on a serial port: a new connection replaces the old
one and starts with a 0x00. Unplugging drops the connection and turns new
ones away until the device is plugged back, on the same port.
"""

from __future__ import annotations

import logging
import socket

from cardshoe.firmware_sim.runner import DeviceThread, SimulatedDevice, SocketEndpoint

log = logging.getLogger(__name__)


class TcpEndpoint(SocketEndpoint):
    def __init__(self, core: SimulatedDevice, host: str, port: int) -> None:
        super().__init__(core)
        self.listener = socket.create_server((host, port))
        self.listener.setblocking(False)

    def fds(self) -> list[int]:
        return [self.listener.fileno(), *super().fds()]

    def read(self, fd: int) -> bytes:
        if fd != self.listener.fileno():
            return super().read(fd)
        try:
            connection, peer = self.listener.accept()
        except BlockingIOError:
            return b""
        if not self.core.plugged:
            log.info("simulator: refused %s: the device is unplugged", peer)
            connection.close()
            return b""
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        log.info("simulator: host connected from %s", peer)
        self.adopt(connection)
        return b""

    def close(self) -> None:
        super().close()
        self.listener.close()


class TcpAttachment:
    """A device on a loopback TCP port; open `url` with pyserial's serial_for_url."""

    def __init__(self, core: SimulatedDevice, host: str, port: int) -> None:
        self.core = core
        self._endpoint = TcpEndpoint(core, host, port)
        self.host, self.port = self._endpoint.listener.getsockname()[:2]
        self.url = f"socket://{self.host}:{self.port}"
        self._thread = DeviceThread(core, self._endpoint, f"sim-tcp-{core.serial_number}")
        self._thread.start()

    def close(self) -> None:
        self._thread.close()

    def __enter__(self) -> TcpAttachment:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def serve_tcp(core: SimulatedDevice, host: str = "127.0.0.1", port: int = 0) -> TcpAttachment:
    """Listen on host:port (0 picks a free port) and run `core` until close()."""
    return TcpAttachment(core, host, port)
