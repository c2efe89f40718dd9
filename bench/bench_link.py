"""The host driver's share of a card: ACK to the next card's event, over a pty, no journal.

The simulated manual shoe (firmware_sim, instant timing) sits on a real
pty with its virtual dealer pulling whenever the gate is open; the host
opens it with open_device and draws a whole 8-deck shoe, acknowledging
each card at once. Per card: from the ack of card n to next_event()
returning card n+1, which spans the ACK frame, the device's next send, the
reader thread's decode and the host's sequence rules. Between this and
bench_pty_echo lies what the driver costs; above it, what the controller
adds. A measurement, not a test: it asserts nothing.

    .venv/bin/python bench/bench_link.py
"""

from __future__ import annotations

import time

from results import Measurement, percentile, print_measurements

from cardshoe.drivers.device import ShoeDevice, open_device
from cardshoe.drivers.protocol.messages import CardRead, Event
from cardshoe.firmware_sim.attach_pty import serve_pty
from cardshoe.firmware_sim.devices import create_device

DECKS = 8
WAIT_S = 5.0


def draw_shoe() -> tuple[list[float], float]:
    """Seconds from each ack to the next card, and seconds for the whole shoe."""
    core = create_device("cs-1", seed=1, decks=DECKS, cut_card_depth=None)
    core.dealer.auto = True
    gaps: list[float] = []
    with serve_pty(core) as pty, open_device(str(pty.link)) as device:
        assert isinstance(device, ShoeDevice)
        started = time.perf_counter()
        device.set_gate(False)
        acked_at = None
        cards = 0
        while cards < DECKS * 52:
            event = device.next_event(WAIT_S)
            if event is None:
                raise RuntimeError(f"the shoe stalled after {cards} cards")
            if isinstance(event, CardRead):
                cards += 1
                if acked_at is not None:
                    gaps.append(time.perf_counter() - acked_at)
            if isinstance(event, Event):
                device.ack(event.seq)
                acked_at = time.perf_counter()
        whole_shoe = time.perf_counter() - started
    return gaps, whole_shoe


def measure() -> list[Measurement]:
    gaps, whole_shoe = draw_shoe()
    detail = f"{len(gaps)} cards, simulator on a pty, instant timing"
    return [
        Measurement(
            "driver ack to next card p50 (pty)", percentile(gaps, 50) * 1000, "ms", None, detail
        ),
        Measurement(
            "driver ack to next card p99 (pty)", percentile(gaps, 99) * 1000, "ms", None, detail
        ),
        Measurement("whole 8-deck shoe through the driver (pty, no journal)", whole_shoe, "s"),
    ]


if __name__ == "__main__":
    print_measurements(measure())
