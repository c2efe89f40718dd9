"""The hand-over from paho's network thread to ingest's loop, bounded by the bytes it holds.

A broker resuming ingest's session sends what it queued meanwhile as fast as
the socket takes it. Mosquitto 2.0.11 keeps to its inflight limit (20 by
default) only until ingest's first acknowledgements: measured, 279 of 300 queued
messages were then waiting in ingest at once, and 156 with ingest's MQTT 5
Receive Maximum set to 40. The floor's broker queues up to 100,000 messages of
up to 128 KB for ingest (docs/examples/floor/mosquitto.conf), and live records
keep coming while PostgreSQL is away. Held in an unbounded queue, that grows
ingest's memory until the kernel kills it, and the broker hands the same
backlog to the restarted process.

So paho's thread waits while the inbox is full: it stops reading the socket,
TCP's window closes, and the broker keeps the rest. Nothing is lost: a message
is acknowledged only once stored, and one never taken is delivered again on
the next connection. A stop closes the inbox, so a waiting paho thread lets go
and the process can end.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Generic, TypeVar

_Item = TypeVar("_Item")


class Inbox(Generic[_Item]):
    """A first-in first-out queue holding at most budget_bytes of items.

    An item larger than the whole budget still goes in when the inbox is empty,
    so a single large message can never wait for ever.
    """

    def __init__(self, budget_bytes: int) -> None:
        self.budget_bytes = budget_bytes
        self._items: deque[tuple[_Item, int]] = deque()
        self._held = 0
        self._closed = False
        self._changed = threading.Condition()

    def __len__(self) -> int:
        return len(self._items)

    @property
    def held_bytes(self) -> int:
        """The sizes of the items waiting, as put() was told them."""
        return self._held

    def put(self, item: _Item, size: int) -> bool:
        """Queue item, waiting while it would not fit; False, item dropped, once closed."""
        with self._changed:
            while self._items and self._held + size > self.budget_bytes and not self._closed:
                self._changed.wait()
            if self._closed:
                return False
            self._items.append((item, size))
            self._held += size
            self._changed.notify_all()
            return True

    def get(self, timeout: float) -> _Item | None:
        """The oldest item, waiting up to timeout seconds for one; None if none came."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not self._items:
                left = deadline - time.monotonic()
                if left <= 0 or self._closed:
                    return None
                self._changed.wait(left)
            return self._take()

    def get_nowait(self) -> _Item | None:
        with self._changed:
            return self._take() if self._items else None

    def close(self) -> None:
        """No more items: a put waiting for room returns False at once, as does any later."""
        with self._changed:
            self._closed = True
            self._changed.notify_all()

    def _take(self) -> _Item:
        item, size = self._items.popleft()
        self._held -= size
        self._changed.notify_all()
        return item
