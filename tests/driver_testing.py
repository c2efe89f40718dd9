"""Helpers for the driver tests: a scripted pty peer and a thread-leak check.

ScriptedPeer is the device end of a real pseudo-terminal, scripted frame by
frame by a test. It is not a simulator: it does nothing by itself. It decodes what the host driver
writes and sends exactly the frames a test gives it, so a test can produce
what a well-behaved device never would (a sequence gap, a CRC-valid but
undecodable payload, a foreign protocol major) and check the host's answer.
"""

from __future__ import annotations

import contextlib
import os
import queue
import select
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from cardshoe.drivers.device import DealerDevice, ShoeDevice, open_device
from cardshoe.drivers.framing import FrameDecoder, encode_frame
from cardshoe.drivers.link import LinkTiming
from cardshoe.drivers.messages import (
    Capability,
    DeviceKind,
    GetInfo,
    Hello,
    Message,
    decode_message,
    encode_message,
)

WAIT_S = 3.0
FIRMWARE_HASH = bytes(range(32))
QUIET = LinkTiming(poll_interval_s=60.0, link_down_after_s=120.0)
"""No keepalive traffic or silence timeout to disturb a scripted exchange."""


def hello(request_id: int, **changes: Any) -> Hello:
    fields: dict[str, Any] = {
        "request_id": request_id,
        "protocol_minor": 0,
        "device_kind": DeviceKind.MANUAL_SHOE,
        "capabilities": Capability.GATE | Capability.DOUBLE_FEED_DETECTION,
        "last_acked_seq": 0,
        "next_seq": 1,
        "firmware_hash": FIRMWARE_HASH,
        "model": "SCRIPTED",
        "serial_number": "PEER1",
        "firmware_version": "0.0.1",
    }
    return Hello(**(fields | changes))


class ScriptedPeer:
    def __init__(self) -> None:
        self._master, self._slave = os.openpty()
        self.path = os.ttyname(self._slave)
        self._decoder = FrameDecoder()
        self._received: queue.Queue[Message] = queue.Queue()
        self._stop = threading.Event()
        self._reader = threading.Thread(target=self._read, name="scripted-peer", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while not self._stop.is_set():
            if not select.select([self._master], [], [], 0.02)[0]:
                continue
            try:
                data = os.read(self._master, 4096)
            except OSError:
                return
            for payload in self._decoder.feed(data):
                self._received.put(decode_message(payload))

    def expect(self, kind: type, timeout: float = WAIT_S) -> Any:
        """The next message of this type from the host; others before it are skipped."""
        while True:
            message = self._received.get(timeout=timeout)
            if isinstance(message, kind):
                return message

    def received_now(self) -> list[Message]:
        """Everything the host has sent that no expect() consumed yet."""
        messages = []
        with contextlib.suppress(queue.Empty):
            while True:
                messages.append(self._received.get_nowait())
        return messages

    def send(self, *messages: Message) -> None:
        self.send_raw(b"".join(encode_frame(encode_message(message)) for message in messages))

    def send_raw(self, data: bytes) -> None:
        os.write(self._master, data)

    @contextlib.contextmanager
    def opening(
        self, timing: LinkTiming = QUIET, reconnect: bool = False
    ) -> Iterator[Future[ShoeDevice | DealerDevice]]:
        """open_device on the pty in the background, while the test answers it."""
        with ThreadPoolExecutor(1, thread_name_prefix="test-open") as pool:
            yield pool.submit(
                open_device, self.path, timeout=WAIT_S, reconnect=reconnect, timing=timing
            )

    def connect(
        self, timing: LinkTiming = QUIET, reconnect: bool = False, **hello_changes: Any
    ) -> ShoeDevice | DealerDevice:
        """open_device on the pty, answering its GET_INFO with a HELLO."""
        with self.opening(timing, reconnect) as opening:
            request = self.expect(GetInfo)
            self.send(hello(request.request_id, **hello_changes))
            return opening.result(timeout=WAIT_S)

    def unplug(self) -> None:
        """Close both ends we hold: the host's next read of the slave fails."""
        self._stop.set()
        self._reader.join()
        for fd in (self._slave, self._master):
            with contextlib.suppress(OSError):
                os.close(fd)


def assert_no_driver_threads_left(before: set[threading.Thread], grace_s: float = 2.0) -> None:
    """Fail if a test left a driver thread running: every device must be closed."""
    deadline = time.monotonic() + grace_s
    while True:
        left = [
            thread.name
            for thread in threading.enumerate()
            if thread not in before and thread.name.startswith("cardshoe-")
        ]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    assert not left, f"threads left running: {left}"


class ThreadedCall:
    """Run a blocking device call on a thread while the test plays the device."""

    def __init__(self, function: Callable[[], Any]) -> None:
        self._function = function
        self.result: Any = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="test-call")

    def _run(self) -> None:
        try:
            self.result = self._function()
        except BaseException as exc:
            self.error = exc

    def __enter__(self) -> ThreadedCall:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._thread.join(WAIT_S * 3)
