"""Helpers for the simulator tests: a settable clock, and a bare host speaking the codec.

The host here is deliberately minimal (send a message, decode what comes
back) so the tests see exactly what the device puts on the wire; the real
host drivers are tested by their own contract suite.
"""

from __future__ import annotations

import select
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from cardshoe.drivers.protocol.framing import FrameDecoder, encode_frame
from cardshoe.drivers.protocol.message_codec import decode_message, encode_message
from cardshoe.drivers.protocol.messages import Ack, GetInfo, Message
from cardshoe.firmware_sim.core import FirmwareCore


@dataclass
class FakeClock:
    now: float = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class WireHost:
    """A host talking to a core directly: no thread, time moves only when the test says."""

    core: FirmwareCore
    clock: FakeClock
    decoder: FrameDecoder = field(default_factory=FrameDecoder)
    raw: bytearray = field(default_factory=bytearray)
    next_request_id: int = 1

    def send(self, message: Message) -> None:
        self.core.feed(encode_frame(encode_message(message)))

    def send_raw(self, payload: bytes) -> None:
        self.core.feed(encode_frame(payload))

    def request_id(self) -> int:
        self.next_request_id += 1
        return self.next_request_id - 1

    def receive(self, tick: bool = True) -> list[Message]:
        """Everything the device has sent since the last call (after a tick, unless told)."""
        if tick:
            self.core.tick()
        data = self.core.take_output()
        self.raw += data
        return [decode_message(payload) for payload in self.decoder.feed(data)]

    def wait(self, seconds: float) -> list[Message]:
        """Let `seconds` pass in small steps, as the device thread would, and collect."""
        received: list[Message] = []
        steps = max(1, round(seconds / 0.01))
        for _ in range(steps):
            self.clock.advance(seconds / steps)
            received += self.receive()
        return received

    def connect(self) -> list[Message]:
        self.receive()
        self.send(GetInfo(self.request_id(), 0))
        return self.receive()

    def ack(self, seq: int) -> list[Message]:
        self.send(Ack(seq))
        return self.receive()


def decoded(data: bytes) -> list[Message]:
    return [decode_message(payload) for payload in FrameDecoder().feed(data)]


class StreamHost:
    """A host on a real byte stream (a pyserial port, a socket) with a deadline per wait."""

    def __init__(self, write: Callable[[bytes], object], read: Callable[[], bytes]) -> None:
        self._write = write
        self._read = read
        self.decoder = FrameDecoder()
        self.inbox: list[Message] = []

    def send(self, message: Message) -> None:
        self._write(encode_frame(encode_message(message)))

    def wait_for(self, matches: Callable[[Message], bool], timeout: float = 5.0) -> Message:
        """The first message (received now or earlier) that matches; AssertionError on timeout."""
        deadline = time.monotonic() + timeout
        while True:
            for message in self.inbox:
                if matches(message):
                    self.inbox.remove(message)
                    return message
            if time.monotonic() > deadline:
                raise AssertionError(f"no matching message within {timeout} s; got {self.inbox}")
            self.inbox += [decode_message(payload) for payload in self.decoder.feed(self._read())]


@contextmanager
def running(command: list[str]) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """Start a simulator process and yield it with the first line it prints."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        ready, _, _ = select.select([process.stdout], [], [], 20)
        assert ready, "the simulator printed nothing within 20 s"
        yield process, process.stdout.readline().strip()  # type: ignore[union-attr]
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=10)
        finally:
            process.kill()
            process.communicate()
