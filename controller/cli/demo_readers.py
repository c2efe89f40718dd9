"""shoectl demo --protocol line|hid: the table dealt through a simulated card reader.

A reader has no gate, so nothing the controller does lets a card go: the
demo's dealer watches the table, as a dealer at such a shoe watches its
display, and draws the next card when one is due and the last one is on the
table (its line journaled), no faster than the demo's pace. A line reader sits
on a real pty (or TCP); a HID keyboard reader on pyusb's real core over the
simulator's backend. The profile is the table configuration's when it names
this family, else the documented example's.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from cardshoe.controller.config import DeviceMode, TableConfig
from cardshoe.controller.errors import UserError
from cardshoe.controller.service.session import TableSession
from cardshoe.drivers.api.device_link import DeviceLink
from cardshoe.drivers.api.protocols import find_family
from cardshoe.drivers.hid.family import SERIAL_LINE_KEYS
from cardshoe.drivers.line.profile import EXAMPLE_TABLE, LineProfile
from cardshoe.drivers.transports.usb_bulk import UsbAddress
from cardshoe.firmware_sim.attach_pty import serve_pty
from cardshoe.firmware_sim.attach_tcp import serve_tcp
from cardshoe.firmware_sim.errors import SimConfigError
from cardshoe.firmware_sim.faults import parse_injection
from cardshoe.firmware_sim.hid_reader import HidReader
from cardshoe.firmware_sim.line_reader import LineReader, format_for
from cardshoe.firmware_sim.usb_backend import SimUsbBackend


class DemoProtocol(StrEnum):
    """What the simulated device speaks."""

    CARDSHOE = "cardshoe"
    LINE = "line"
    """A reader writing one line per card on a serial line."""
    HID = "hid"
    """A barcode reader in USB keyboard mode."""


READER_TRANSPORTS = {DemoProtocol.LINE: ("pty", "tcp"), DemoProtocol.HID: ("usb",)}
"""How the controller can reach each reader: a serial line, or USB for a keyboard."""


def reader_profile(config: TableConfig, protocol: DemoProtocol) -> LineProfile:
    """The configuration's profile for this family, or the documented example."""
    if config.device.protocol == protocol.value and config.device.protocol_options is not None:
        profile: LineProfile = config.device.protocol_options
        return profile
    table = dict(EXAMPLE_TABLE)
    if protocol is DemoProtocol.HID:
        table = {key: value for key, value in table.items() if key not in SERIAL_LINE_KEYS}
    example: LineProfile = find_family(protocol.value).parse_options(table, Path.cwd())
    return example


def check_reader_settings(
    config: TableConfig, protocol: DemoProtocol, transport: str, shuffle: str
) -> None:
    if config.device.kind is not DeviceMode.SHOE:
        raise UserError(
            f"--protocol {protocol}: a card reader sits on a manual shoe; use --device shoe"
        )
    if transport not in READER_TRANSPORTS[protocol]:
        choices = " or ".join(READER_TRANSPORTS[protocol])
        raise UserError(f"--protocol {protocol} is reached over --transport {choices}")
    if shuffle != "fair":
        raise UserError(f"--shuffle {shuffle}: a reader's shoe is shuffled fair by the demo")


def simulated_reader(
    protocol: DemoProtocol,
    profile: LineProfile,
    config: TableConfig,
    seed: int | None,
    inject: tuple[str, ...],
) -> LineReader:
    kind = HidReader if protocol is DemoProtocol.HID else LineReader
    try:
        return kind(
            format=format_for(profile),
            seed=seed,
            decks=config.game.decks,
            cut_card_depth=config.shoe.cut_card_depth,
            injections=[parse_injection(text) for text in inject],
            ack=profile.ack,
        )
    except SimConfigError as exc:
        raise UserError(f"--inject: {exc}") from None


@contextmanager
def attached_reader(reader: LineReader, transport: str) -> Iterator[tuple[str, Any]]:
    """Serve the reader; the URL to open and the pyusb backend, if any."""
    if isinstance(reader, HidReader):
        with SimUsbBackend(reader) as backend:
            identity = reader.identity
            url = UsbAddress(identity.usb_vid, identity.usb_pid, reader.serial_number).url
            yield url, backend
    elif transport == "tcp":
        with serve_tcp(reader) as tcp:
            yield tcp.url, None
    else:
        with serve_pty(reader) as pty:
            yield str(pty.link), None


@dataclass
class ReaderHand:
    """The dealer's hand at a gateless shoe: one card when the table shows one is due."""

    reader: LineReader
    device: DeviceLink
    session: TableSession
    pace_s: float
    clock: Callable[[], float] = time.monotonic
    _last_pull: float | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self._lines_before = self.reader.counts.lines
        """Lines written before the device was opened: never the table's to read."""

    def draw_if_due(self) -> None:
        counters = self.device.counters()
        if counters["lines"] < self.reader.counts.lines - self._lines_before:
            return  # the table has not read every line yet
        if counters["acked_seq"] < counters["delivered_seq"]:
            return
        now = self.clock()
        if self._last_pull is not None and now - self._last_pull < self.pace_s:
            return
        if self.session.model.card_due() is not None and self.reader.pull_card():
            self._last_pull = now
