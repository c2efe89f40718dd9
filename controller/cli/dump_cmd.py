"""shoectl dump: every frame on a device's link, both ways, in hex beside its decoding."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from cardshoe.controller.cli.completion import complete_device_url
from cardshoe.controller.cli.options import (
    DEVICE_TIMEOUT_OPTION,
    KEY_DIR_OPTION,
    PAIRING_CONFIG_OPTION,
)
from cardshoe.controller.cli.service_access import pairing_keys
from cardshoe.controller.errors import UserError
from cardshoe.controller.service.device_access import (
    device_user_error,
    quiet_device_logs,
    refuse_paired_without_key,
)
from cardshoe.controller.timestamps import utc_timestamp
from cardshoe.drivers.errors import DeviceGone, DriverError
from cardshoe.drivers.frame_opener import NO_KEY
from cardshoe.drivers.frame_tap import FrameTap, TappedTransport
from cardshoe.drivers.link import Link, LinkTiming
from cardshoe.drivers.protocol.messages import Event
from cardshoe.drivers.transports.registry import open_transport

if TYPE_CHECKING:
    from cardshoe.drivers.protocol.auth import KeyLookup, LinkKey

POLL_S = 0.2


@click.command()
@click.argument("url", shell_complete=complete_device_url)
@click.option(
    "--count", type=click.IntRange(min=1), default=None, help="Stop after this many frames."
)
@DEVICE_TIMEOUT_OPTION
@PAIRING_CONFIG_OPTION
@KEY_DIR_OPTION
@click.option("--json", "as_json", is_flag=True, help="One JSON object per frame.")
def dump(
    url: str,
    count: int | None,
    timeout: float,
    config_path: Path | None,
    key_dir: Path | None,
    as_json: bool,
) -> None:
    """Show each frame as it crosses the link, until Ctrl-C, like pyserial's spy://.

    One line per frame: time, direction (tx host to device, rx device to
    host), the bytes in hex with the 0x00 delimiter, and the decoded message.
    A frame the link rejects says why: bad_crc, bad_cobs, oversize or
    undecodable. On a paired device's authenticated link the pairing key
    (--config or --key-dir) opens each sealed frame: its message is shown
    with its counter, and one that fails authentication (forged, altered,
    replayed) says so and is not decoded. dump is a host like any other: it
    does the handshake, acknowledges each event and polls the device when it
    falls silent, so use it on a device that is not in service. Ctrl-C ends
    with exit 0.
    """

    keys = pairing_keys(config_path, key_dir)
    printer = FramePrinter(as_json)
    tap = FrameTap(printer.show, _tap_keys(keys))
    link = Link(
        lambda: TappedTransport(open_transport(url), tap),
        url=url,
        timing=LinkTiming(),
        reconnect=False,
        keys=keys,
    )
    # The dump shows every rejected frame itself; the drivers' log lines would repeat it.
    with quiet_device_logs():
        _dump(link, timeout, count, printer, keys is not None)


def _tap_keys(keys: KeyLookup | None) -> KeyLookup | None:
    """The pairing keys as the tap looks them up: an unusable key file (KeyFileError) is the
    link's handshake to report to the user, once, so to the tap it is no key."""
    if keys is None:
        return None

    def tolerant(serial_number: str) -> LinkKey | None:
        try:
            return keys(serial_number)
        except UserError:
            return None

    return tolerant


def _dump(
    link: Link, timeout: float, count: int | None, printer: FramePrinter, keyed: bool
) -> None:
    """Handshake, then acknowledge every event until count frames are shown or Ctrl-C.

    A paired device serves nothing but the handshake to a host without its
    key: say so once, naming the options that give the key, rather than
    showing its refusals frame after frame.
    """

    try:
        hello = link.open(timeout)
        refuse_paired_without_key(hello, link.url, keyed, "and open its sealed frames")
        while not printer.closed and (count is None or printer.shown < count):
            event = link.next_event(POLL_S)
            if isinstance(event, Event):
                link.ack(event.seq)
    except KeyboardInterrupt:
        return
    except DeviceGone as exc:
        if not printer.closed:
            raise device_user_error(exc) from None
    except DriverError as exc:
        raise device_user_error(exc) from None
    finally:
        link.close()


class FramePrinter:
    """Prints frame records; a closed stdout (dump | head) ends the dump quietly."""

    def __init__(self, as_json: bool) -> None:
        self._as_json = as_json
        self.shown = 0
        self.closed = False

    def show(self, frame: dict[str, Any]) -> None:
        """Stamp the frame's record with the moment it crossed (the drivers' tap keeps no
        clock of the controller's) and print it."""
        if self.closed:
            return
        record = {"time": utc_timestamp(), **frame}
        try:
            click.echo(json.dumps(record) if self._as_json else frame_line(record))
        except OSError:
            self.closed = True
            return
        self.shown += 1


def frame_line(record: dict[str, Any]) -> str:
    """TIME  DIR  HEX  |  MESSAGE field=value ... (or the reason the frame is rejected)."""
    # Late: heavy (rich, structlog, pyserial, pyusb, sqlite3 or transitions), which loading this
    # module for --help must not pull in (tests/cli/test_technician_cli.py).
    from cardshoe.controller.scoreboard.event_lines import event_line

    message, sealed = record["message"], record["sealed"]
    if message is not None:
        decoded = event_line({"time": "", "kind": message["type"], "payload": message["fields"]})
        if sealed is not None:
            decoded = f"{decoded.strip()}  [sealed #{sealed['counter']}, tag ok]"
    elif record["frame"] == "auth_failed":
        decoded = f"AUTH_FAILED not decoded, not the device's: {record['error']}"
    elif record["frame"] == "sealed" and record["error"] == NO_KEY:
        decoded = "SEALED"
    else:
        decoded = f"{record['frame'].upper()} {record['error'] or ''}"
    return f"{record['time']}  {record['direction']}  {record['hex']}  |  {decoded.strip()}"
