"""How long physical things take in a simulated device.

Off by default (everything instant) so tests run at full speed; `realistic()`
gives figures of the order real shoes and shuffler-dealers show, for demos
and for checking a host's timeouts.
"""

from __future__ import annotations

from dataclasses import dataclass

from cardshoe.drivers.protocol.link_constants import SERIAL_BAUDRATE


@dataclass(frozen=True)
class Timing:
    baudrate: int | None = None
    """Pace the byte stream as a serial line at this rate would; None: no wire time."""
    pull_interval_s: float = 0.0
    """The virtual dealer's least time between two automatic pulls."""
    deal_s: float = 0.0
    """An automatic machine's time from DEAL_NEXT to the card leaving."""
    shuffle_s: float = 0.0
    return_s: float = 0.0
    self_test_s: float = 0.0

    @classmethod
    def realistic(cls) -> Timing:
        return cls(
            baudrate=SERIAL_BAUDRATE,
            pull_interval_s=1.5,
            deal_s=0.8,
            shuffle_s=5.0,
            return_s=3.0,
            self_test_s=0.85,
        )

    def wire_time_s(self, byte_count: int) -> float:
        """8N1 puts 10 bits on the line per byte."""
        return 0.0 if self.baudrate is None else byte_count * 10 / self.baudrate


INSTANT = Timing()
"""The default: nothing takes time, so tests run at full speed."""
