"""A man in the middle on the serial line: what a hostile relay between shoe and PC can do.

The relay opens the simulator's pty with pyserial, as a host would, and offers
the host a pty of its own; every frame crossing it is decoded, passed through
`rewrite` and framed again, so a test changes what it likes of the clear
handshake (GET_INFO, HELLO) and passes sealed frames on untouched, as an
attacker without the key must. `rewrite` may be swapped while the relay runs,
and `cut` drops everything both ways, as a pulled cable, until it is cleared.
"""

from __future__ import annotations

import select
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import serial

from cardshoe.drivers.protocol.auth import Direction, is_sealed
from cardshoe.drivers.protocol.errors import MessageError
from cardshoe.drivers.protocol.framing import FrameDecoder, encode_frame
from cardshoe.drivers.protocol.link_constants import APPENDED_IN_1_2, SERIAL_BAUDRATE
from cardshoe.drivers.protocol.message_codec import decode_message, encode_message
from cardshoe.drivers.protocol.messages import GetInfo, Hello, Message
from cardshoe.firmware_sim.attach_pty import PtyEndpoint

Rewrite = Callable[[Direction, Message], Message]
"""What the relay makes of one clear message on its way; sealed frames pass untouched."""
TICK_S = 0.02


def passing(direction: Direction, message: Message) -> Message:
    """An honest wire."""
    return message


def downgrading(minor: int, **hello_changes: object) -> Rewrite:
    """Rewrite the minor of GET_INFO and HELLO down to `minor` (and drop what that minor
    does not carry), and change whatever else of the HELLO the caller names."""

    def rewrite(direction: Direction, message: Message) -> Message:
        if isinstance(message, GetInfo):
            return replace(message, protocol_minor=minor)
        if isinstance(message, Hello):
            epoch = message.epoch if minor >= APPENDED_IN_1_2 else None
            return replace(message, protocol_minor=minor, epoch=epoch, **hello_changes)
        return message

    return rewrite


def altering_hello(**hello_changes: object) -> Rewrite:
    """Change fields of the HELLO and nothing else: the tampering the HELLO digest catches."""

    def rewrite(direction: Direction, message: Message) -> Message:
        return replace(message, **hello_changes) if isinstance(message, Hello) else message

    return rewrite


class WireRelay:
    """Frames between the device's pty and the host's, through `rewrite`, on one thread."""

    def __init__(self, device_path: Path, host_link: Path, rewrite: Rewrite = passing) -> None:
        self.rewrite = rewrite
        self.cut = False
        self.seen: Counter[str] = Counter()
        """Clear messages that crossed, by type name: how often the host retried."""
        self._device = serial.Serial(str(device_path), SERIAL_BAUDRATE, timeout=0)
        self._host = PtyEndpoint(host_link)
        self.link = host_link
        self._decoders = {
            Direction.HOST_TO_DEVICE: FrameDecoder(),
            Direction.DEVICE_TO_HOST: FrameDecoder(),
        }
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="test-wire-relay")
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self._host.close()
        self._device.close()

    def __enter__(self) -> WireRelay:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _run(self) -> None:
        (host_fd,) = self._host.fds()
        device_fd = self._device.fileno()
        while not self._stop.is_set():
            ready, _, _ = select.select([host_fd, device_fd], [], [], TICK_S)
            if host_fd in ready:
                self._pass(Direction.HOST_TO_DEVICE, self._host.read(host_fd))
            if device_fd in ready:
                self._pass(Direction.DEVICE_TO_HOST, self._device.read(4096))

    def _pass(self, direction: Direction, data: bytes) -> None:
        if self.cut:
            return
        out = b"".join(
            encode_frame(self._altered(direction, payload))
            for payload in self._decoders[direction].feed(data)
        )
        if not out:
            return
        if direction is Direction.HOST_TO_DEVICE:
            self._device.write(out)
        else:
            self._host.write(out)

    def _altered(self, direction: Direction, payload: bytes) -> bytes:
        if is_sealed(payload):
            return payload
        try:
            message = decode_message(payload)
        except MessageError:
            return payload
        self.seen[type(message).__name__] += 1
        return encode_message(self.rewrite(direction, message))
