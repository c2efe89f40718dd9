"""Commands on the link: one outstanding at a time, answered by request id, resent.

The reader thread completes (or fails) the PendingCommand its answer belongs to;
the caller's exchange() sends the command, waits one reply timeout, and sends it
again with the same request id, at most `attempts` times (docs/protocol.md).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from cardshoe.drivers.errors import DeviceTimeout, DriverError
from cardshoe.drivers.protocol.messages import Answer, Command

LAST_REQUEST_ID = 0xFFFF


def next_request_id(previous: int) -> int:
    """Request ids run 1..0xFFFF and wrap; 0 is the device's unsolicited answer."""
    return previous % LAST_REQUEST_ID + 1


class PendingCommand:
    """The one command waiting for its answer; the reader thread completes it."""

    def __init__(self, command: Command) -> None:
        self.command = command
        self._done = threading.Event()
        self._answer: Answer | None = None
        self._error: DriverError | None = None

    def complete(self, answer: Answer) -> None:
        self._answer = answer
        self._done.set()

    def fail(self, error: DriverError) -> None:
        self._error = error
        self._done.set()

    def wait(self, timeout: float) -> Answer | None:
        """The answer, None after timeout, or the error the link failed it with."""
        self._done.wait(timeout)
        if self._error is not None:
            raise self._error
        return self._answer


def exchange(
    pending: PendingCommand,
    send: Callable[[Command], None],
    *,
    attempts: int,
    reply_timeout_s: float,
    resending: Callable[[], None],
    url: str,
) -> Answer:
    """Send the pending command until it is answered; DeviceTimeout after every attempt.

    resending is told before each send after the first (the link counts and logs it).
    """
    for attempt in range(attempts):
        if attempt:
            resending()
        send(pending.command)
        answer = pending.wait(reply_timeout_s)
        if answer is not None:
            return answer
    name = type(pending.command).__name__
    raise DeviceTimeout(f"{url} did not answer {name} ({attempts} tries)")
