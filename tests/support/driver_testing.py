"""Helpers for the driver tests: the simulator on every transport, a scripted pty
peer, and a thread-leak check.

attach_simulator() serves one firmware_sim device over a pty, TCP, sim:// or
the pyusb backend, so the contract suite and the reconnection tests run the
same cases over each.

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
import tomllib
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from cardshoe.drivers.api.device_link import DeviceLink
from cardshoe.drivers.api.events import DeviceEvent as NeutralDeviceEvent
from cardshoe.drivers.api.protocols import find_family
from cardshoe.drivers.api.protocols import open_device as open_neutral_device
from cardshoe.drivers.device import DealerDevice, Device, ShoeDevice, open_device
from cardshoe.drivers.hid.family import SERIAL_LINE_KEYS
from cardshoe.drivers.link import LinkTiming
from cardshoe.drivers.protocol.framing import FrameDecoder, encode_frame
from cardshoe.drivers.protocol.message_codec import decode_message, encode_message
from cardshoe.drivers.protocol.messages import (
    Capability,
    DeviceKind,
    Event,
    GetInfo,
    Hello,
    Message,
)
from cardshoe.drivers.transports.usb_bulk import UsbAddress
from cardshoe.firmware_sim.attach_pty import serve_pty
from cardshoe.firmware_sim.attach_tcp import serve_tcp
from cardshoe.firmware_sim.core import FirmwareCore
from cardshoe.firmware_sim.devices import create_device
from cardshoe.firmware_sim.hid_reader import HID_READER_PID, HidReader
from cardshoe.firmware_sim.line_reader import LineReader, format_for
from cardshoe.firmware_sim.sim_url import publish, register_sim_url_handler, release
from cardshoe.firmware_sim.usb_backend import SimUsbBackend

T = TypeVar("T")

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
                self._take(payload)

    def _take(self, payload: bytes) -> None:
        """One frame's payload from the host; a peer that speaks more overrides this."""
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


TRANSPORTS = ("pty", "tcp", "sim", "usb")
"""Every way the simulator reaches the host driver; the contract suite runs over each."""


@dataclass
class Attached:
    """A simulated device on one transport, and how the host driver opens it."""

    core: FirmwareCore
    url: str
    usb_backend: Any = None

    def open(self, **options: Any) -> ShoeDevice | DealerDevice:
        return open_device(self.url, usb_backend=self.usb_backend, timeout=WAIT_S, **options)


@contextlib.contextmanager
def attach_simulator(transport: str, core: FirmwareCore) -> Iterator[Attached]:
    """Serve core over one transport; the URL survives an unplug and re-plug."""
    if transport == "pty":
        with serve_pty(core) as pty:
            yield Attached(core, str(pty.link))
    elif transport == "tcp":
        with serve_tcp(core) as tcp:
            yield Attached(core, tcp.url)
    elif transport == "sim":
        register_sim_url_handler()
        name = f"driver-test-{core.serial_number}-{id(core)}"
        url = publish(core, name)
        try:
            yield Attached(core, url)
        finally:
            release(name)
    elif transport == "usb":
        with SimUsbBackend(core) as backend:
            address = UsbAddress(core.profile.usb_vid, core.profile.usb_pid, core.serial_number)
            yield Attached(core, address.url, backend)
    else:
        raise ValueError(f"no transport {transport!r}; choose from {TRANSPORTS}")


def next_of(device: Device | DeviceLink, kind: type[T], timeout: float = WAIT_S) -> T:
    """The next event of this type, acking it and every event before it, as a journaling
    controller would."""
    deadline = time.monotonic() + timeout
    while True:
        event = device.next_event(max(0.0, deadline - time.monotonic()))
        if event is None:
            raise AssertionError(f"no {kind.__name__} within {timeout} s")
        if isinstance(event, Event | NeutralDeviceEvent):
            device.ack(event.seq)
        if isinstance(event, kind):
            return event


# --- the device contract over protocol families ------------------------------------------


@dataclass
class FamilyDevice:
    """A simulated device of one protocol family, reached through the protocol registry.

    let_one_out makes exactly one card leave the device (draw control, or the simulator's
    dealer for a family without it); dealt is the text of every card the simulator has let
    go, in order.
    """

    protocol: str
    url: str
    let_one_out: Callable[[DeviceLink], None]
    dealt: Callable[[], list[str]]
    usb_backend: Any = None
    options: Any = None

    def open(self, **changes: Any) -> DeviceLink:
        arguments: dict[str, Any] = {"timeout": WAIT_S, "reconnect": False} | changes
        return open_neutral_device(
            self.url,
            protocol=self.protocol,
            options=self.options,
            usb_backend=self.usb_backend,
            **arguments,
        )


@contextlib.contextmanager
def cardshoe_family_device(transport: str) -> Iterator[FamilyDevice]:
    """A cardshoe manual shoe on one transport; the virtual dealer draws whatever is let go."""
    core = create_device("cs-1", seed=7)
    core.dealer.auto = True
    with attach_simulator(transport, core) as attached:
        yield FamilyDevice(
            "cardshoe",
            attached.url,
            lambda device: device.release_one(),
            lambda: [str(card) for card in core.shoe.dealt],
            attached.usb_backend,
        )


EXAMPLE_PROFILE = Path(__file__).parents[2] / "docs" / "examples" / "line-shoe.toml"
KEYBOARD_KEYS = tuple(SERIAL_LINE_KEYS)
"""The example profile's keys a keyboard reader has no use for."""


def example_line_table() -> dict[str, Any]:
    """The [device.line] table of docs/examples/line-shoe.toml, as the config reads it."""
    return tomllib.loads(EXAMPLE_PROFILE.read_text())["device"]["line"]


def reader_family_device(reader: LineReader, protocol: str, url: str, **extra: Any) -> FamilyDevice:
    """A simulated reader: it has no draw control, so its own dealer lets each card out."""
    table = example_line_table()
    if protocol == "hid":
        table = {key: value for key, value in table.items() if key not in KEYBOARD_KEYS}
    return FamilyDevice(
        protocol,
        url,
        lambda device: reader.pull_card(),
        lambda: [str(card) for card in reader.shoe.dealt],
        options=find_family(protocol).parse_options(table, EXAMPLE_PROFILE.parent),
        **extra,
    )


def line_reader(**options: Any) -> LineReader:
    profile = find_family("line").parse_options(example_line_table(), EXAMPLE_PROFILE.parent)
    return LineReader(format=format_for(profile), **options)


@contextlib.contextmanager
def line_family_device(transport: str) -> Iterator[FamilyDevice]:
    """A line reader with the example profile on a pty or behind a TCP port."""
    reader = line_reader(seed=7)
    if transport == "pty":
        with serve_pty(reader) as pty:
            yield reader_family_device(reader, "line", str(pty.link))
        return
    with serve_tcp(reader) as tcp:
        yield reader_family_device(reader, "line", tcp.url)


@contextlib.contextmanager
def hid_family_device() -> Iterator[FamilyDevice]:
    """A keyboard reader typing the example profile's lines, on pyusb's real core."""
    profile = find_family("line").parse_options(example_line_table(), EXAMPLE_PROFILE.parent)
    reader = HidReader(format=format_for(profile), seed=7)
    url = f"usb://1209:{HID_READER_PID:04x}/{reader.serial_number}"
    with SimUsbBackend(reader) as backend:
        yield reader_family_device(reader, "hid", url, usb_backend=backend)


FAMILY_CASES: dict[str, Callable[[], contextlib.AbstractContextManager[FamilyDevice]]] = {
    **{
        f"cardshoe-{transport}": partial(cardshoe_family_device, transport)
        for transport in TRANSPORTS
    },
    "line-pty": partial(line_family_device, "pty"),
    "line-tcp": partial(line_family_device, "tcp"),
    "hid-usb": hid_family_device,
}
"""Every protocol family on every transport it speaks over: the family contract suite
(tests/drivers/test_family_contract.py) runs its cases over each. A family adds its own
entry: a context manager yielding a FamilyDevice on its simulator."""


def next_events(device: DeviceLink, count: int, timeout: float = WAIT_S) -> list[object]:
    """The next count events of any kind, in order; each wait may take up to timeout."""
    found: list[object] = []
    while len(found) < count:
        event = device.next_event(timeout)
        assert event is not None, f"only {found} came"
        found.append(event)
    return found
