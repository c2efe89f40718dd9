"""The floor for wire-to-decision latency: a raw pyserial echo of a CARD frame over a pty.

The host side opens the pty's slave with pyserial (exclusive, as every
opener in the project must) and writes the wire frame of one CARD event; a
thread on the master side echoes every byte straight back; the round trip
ends when the host has read the whole frame again. No framing, no decoding,
no journal: whatever the real path costs above this is the controller's.
A pty has no baud rate, so beside it the time a CARD frame and its ACK take
on the protocol's serial line (115,200 baud, 8N1) is computed from their
real frame sizes. A measurement, not a test: it asserts nothing.

    .venv/bin/python bench/bench_pty_echo.py [--trips 2000]
"""

from __future__ import annotations

import argparse
import os
import threading
import time

import serial
from results import Measurement, percentile, print_measurements

from cardshoe.drivers.protocol.cardid import CardId, CardSuit
from cardshoe.drivers.protocol.framing import encode_frame
from cardshoe.drivers.protocol.link_constants import SERIAL_BAUDRATE
from cardshoe.drivers.protocol.message_codec import encode_message
from cardshoe.drivers.protocol.messages import Ack, CardRead, Orientation, SensorFlag
from cardshoe.firmware_sim.timing import Timing

CARD_FRAME = encode_frame(
    encode_message(
        CardRead(
            seq=1,
            device_time_ms=0,
            card_code=CardId(9, CardSuit.HEARTS, 0x00BC614E, 3).encode(),
            orientation=Orientation.FACE_DOWN,
            flags=SensorFlag(0),
            feed_group=0,
            feed_size=1,
        )
    )
)

ACK_FRAME = encode_frame(encode_message(Ack(acked_seq=1)))


def _echo(master: int) -> None:
    """Send back everything read, until the host closes its side (reading then fails)."""
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:
            return
        if not data:
            return
        os.write(master, data)


def round_trips(trips: int) -> list[float]:
    """Seconds per echo of CARD_FRAME, after a few untimed trips to warm up."""
    master, slave = os.openpty()
    port = serial.Serial(os.ttyname(slave), baudrate=115200, timeout=2, exclusive=True)
    echo = threading.Thread(target=_echo, args=(master,), daemon=True)
    echo.start()
    timings = []
    try:
        for trip in range(trips + 10):
            started = time.perf_counter()
            port.write(CARD_FRAME)
            echoed = port.read(len(CARD_FRAME))
            elapsed = time.perf_counter() - started
            if echoed != CARD_FRAME:
                raise RuntimeError(f"the pty echoed {echoed.hex()} instead of the frame")
            if trip >= 10:
                timings.append(elapsed)
    finally:
        port.close()
        os.close(slave)
        echo.join(timeout=2)
        os.close(master)
    return timings


def measure(trips: int = 2000) -> list[Measurement]:
    timings = round_trips(trips)
    detail = f"{len(CARD_FRAME)}-byte CARD frame, {trips} round trips; the floor, no target"
    return [
        Measurement(
            f"raw pyserial pty echo {name}", percentile(timings, p) * 1e6, "µs", None, detail
        )
        for name, p in (("p50", 50), ("p99", 99))
    ] + [
        Measurement(
            f"per-card wire time at {SERIAL_BAUDRATE:,} baud, CARD frame and its ACK",
            Timing(baudrate=SERIAL_BAUDRATE).wire_time_s(len(CARD_FRAME) + len(ACK_FRAME)) * 1e3,
            "ms",
            None,
            f"computed: {len(CARD_FRAME)}-byte CARD frame out, {len(ACK_FRAME)}-byte ACK back, "
            "8N1 (10 bits a byte); a serial shoe adds this to the pty's wire-to-decision "
            "figures, which carry no wire time",
        )
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trips", type=int, default=2000, help="timed round trips")
    print_measurements(measure(parser.parse_args().trips))


if __name__ == "__main__":
    main()
