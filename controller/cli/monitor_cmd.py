"""shoectl monitor: a device's or the running service's events live, one line each."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from cardshoe.controller.cli.completion import complete_device_url
from cardshoe.controller.cli.options import (
    CONFIG_OPTION,
    DEVICE_TIMEOUT_OPTION,
    KEY_DIR_OPTION,
    SOCKET_OPTION,
)
from cardshoe.controller.cli.service_access import pairing_keys, service_socket
from cardshoe.controller.errors import EXIT_DEVICE_UNAVAILABLE, UserError
from cardshoe.controller.scoreboard.board import TableBoard
from cardshoe.controller.service.control_client import EventStream, subscription
from cardshoe.controller.service.device_access import opened_device
from cardshoe.controller.service.socket_claim import EXIT_NO_SERVICE
from cardshoe.controller.service.stop_signals import StopRequest, stop_on_signals
from cardshoe.drivers.api.events import DeviceEvent
from cardshoe.drivers.cardshoe_family import CardshoeLink
from cardshoe.drivers.errors import DeviceGone

if TYPE_CHECKING:
    from cardshoe.drivers.protocol.auth import KeyLookup

POLL_S = 0.2


@click.command()
@click.argument("url", required=False, shell_complete=complete_device_url)
@click.option(
    "--service",
    "from_service",
    is_flag=True,
    help="Table events from the running `shoectl run`, over its socket.",
)
@click.option(
    "--table",
    "as_table",
    is_flag=True,
    help="The running service's table as the live display, over its socket.",
)
@SOCKET_OPTION
@CONFIG_OPTION
@click.option(
    "--count", type=click.IntRange(min=1), default=None, help="Stop after this many events."
)
@DEVICE_TIMEOUT_OPTION
@KEY_DIR_OPTION
@click.option(
    "--raw",
    is_flag=True,
    help="URL is a line reader: print each line as it came and what --profile made of it.",
)
@click.option(
    "--profile",
    "profile_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="With --raw: a TOML file with the reader's [device.line] or [device.hid] table.",
)
@click.option(
    "--baud",
    type=click.IntRange(min=1),
    default=9600,
    show_default=True,
    help="With --raw and no --profile: the reader's baud rate.",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per event.")
def monitor(
    url: str | None,
    from_service: bool,
    as_table: bool,
    socket_path: Path | None,
    config_path: Path | None,
    count: int | None,
    timeout: float,
    key_dir: Path | None,
    raw: bool,
    profile_path: Path | None,
    baud: int,
    as_json: bool,
) -> None:
    """Print each event as it happens, one timestamped line each, until Ctrl-C.

    With URL, open a device that is not in service (exclusively) and show
    its decoded events; each is acknowledged once shown, so the device goes
    on sending. Never point it at the table's own shoe while `shoectl run`
    has it (the port is busy anyway): use --service, which shows the
    service's table events (cards, results, holds, alarms) without touching
    the device. --table draws the service's table as `shoectl demo` does
    (the whole open shoe, then live; plain lines when not on a terminal).
    --raw reads URL as a line reader (docs/drivers.md): each line exactly as
    it came, and what the --profile's patterns made of it; without a
    profile, lines are cut at LF so the terminator shows. Ctrl-C ends with
    exit 0; exit 3 when the device or the service is absent or goes away.
    """

    if [url is not None, from_service, as_table].count(True) != 1:
        raise UserError("give one of URL, --service or --table (see 'shoectl monitor --help')")
    if (profile_path is not None) and not raw:
        raise UserError("--profile goes with --raw (a line reader's lines)")
    try:
        if raw:
            # Late: heavy (rich, structlog, pyserial, pyusb, sqlite3 or transitions), which
            # loading this module for --help must not pull in (tests/cli/test_technician_cli.py).
            from cardshoe.controller.cli.line_tools import monitor_raw

            if url is None:
                raise UserError("--raw reads a line reader: give its URL")
            monitor_raw(url, profile_path, baud, count, as_json)
        elif url is not None:
            _monitor_device(url, timeout, count, as_json, pairing_keys(config_path, key_dir))
        elif from_service:
            _monitor_service(socket_path, config_path, count, as_json)
        else:
            _show_table(socket_path, config_path, count)
    except KeyboardInterrupt:
        return


def _monitor_device(
    url: str, timeout: float, count: int | None, as_json: bool, keys: KeyLookup | None
) -> None:
    # Late: heavy (rich, structlog, pyserial, pyusb, sqlite3 or transitions), which loading this
    # module for --help must not pull in (tests/cli/test_technician_cli.py).
    from cardshoe.controller.scoreboard.event_lines import device_event_record

    shown = 0
    # Ctrl-C as a flag read between polls, not KeyboardInterrupt: raised wherever the main
    # thread stood, it could leave a lock of the link held, and closing the link (which joins
    # its supervisor) would then wait for ever.
    stop = StopRequest()
    with (
        opened_device(url, timeout=timeout, keys=keys) as wire_device,
        stop_on_signals(stop.request),
    ):
        device = CardshoeLink(wire_device)
        while not stop.requested and (count is None or shown < count):
            try:
                event = device.next_event(POLL_S)
            except DeviceGone as gone:
                raise UserError(str(gone), EXIT_DEVICE_UNAVAILABLE) from None
            if event is None:
                continue
            _show(device_event_record(event), as_json)
            shown += 1
            if isinstance(event, DeviceEvent):
                device.ack(event.seq)


@dataclass
class _StreamStop(StopRequest):
    """Ctrl-C (or SIGTERM) while following the service: the flag, and the stream's end once
    a stream is open (EventStream.end only shuts its socket down, safe in a handler)."""

    events: EventStream | None = None

    def request(self) -> None:
        super().request()
        if self.events is not None:
            self.events.end()


@contextmanager
def _subscribed(path: Path) -> Iterator[tuple[dict[str, Any], EventStream, _StreamStop]]:
    """The service's answer and its event stream, with Ctrl-C heard from before the
    subscription to the end: no KeyboardInterrupt can be raised anywhere in between. One
    raised inside the live display's start left the display started and its refresh thread
    running with no stop to come (tests/cli/test_technician_cli.py, on a loaded machine)."""
    stop = _StreamStop()
    with stop_on_signals(stop.request), subscription(path) as (answer, events):
        stop.events = events
        if stop.requested:  # Ctrl-C before the stream was open
            events.end()
        yield answer, events, stop


def _monitor_service(
    socket_path: Path | None, config_path: Path | None, count: int | None, as_json: bool
) -> None:

    path = service_socket(socket_path, config_path)
    with _subscribed(path) as (answer, events, stop):
        _announce(path, answer["status"])
        _follow(path, events, count, lambda record: _show(record, as_json), stop)


def _show_table(socket_path: Path | None, config_path: Path | None, count: int | None) -> None:
    # Late: heavy (rich, structlog, pyserial, pyusb, sqlite3 or transitions), which loading this
    # module for --help must not pull in (tests/cli/test_technician_cli.py).
    from rich.console import Console
    from rich.live import Live

    from cardshoe.controller.display.plain import plain_line
    from cardshoe.controller.display.rich_view import TableView

    def print_line(record: dict[str, Any]) -> None:
        line = plain_line(record["kind"], record["payload"])
        if line is not None:
            click.echo(line)

    path = service_socket(socket_path, config_path)
    console = Console()
    with _subscribed(path) as (answer, events, stop):
        if not console.is_terminal:
            _announce(path, answer["status"])
            _follow(path, events, count, print_line, stop)
            return
        view = TableView(TableBoard.from_json(answer["board"]))
        with Live(view, console=console, refresh_per_second=10):
            _follow(
                path,
                events,
                count,
                lambda record: view.apply(record["kind"], record["payload"]),
                stop,
            )


def _announce(path: Path, status: dict[str, Any]) -> None:
    """On stderr, so stdout holds only events: which table is followed, and where it stands."""
    shoe = status["shoe_id"] or "no shoe open"
    click.echo(
        f"following table {status['table_id']} on {path}: {status['state']}, {shoe}", err=True
    )


def _follow(
    path: Path,
    events: EventStream,
    count: int | None,
    show: Callable[[dict[str, Any]], None],
    stop: StopRequest,
) -> None:
    """Show each event; return after count of them or on Ctrl-C, exit 3 if the service stops
    first.

    Ctrl-C ends the stream (_subscribed) rather than raising KeyboardInterrupt: raised
    wherever the main thread stood, inside rich's drawing of the table too, it could leave a
    lock held that the live display's refresh thread then waits on.
    """
    for shown, record in enumerate(events, start=1):
        show(record)
        if stop.requested or (count is not None and shown >= count):
            return
    if not stop.requested:
        raise UserError(f"the service on {path} stopped", EXIT_NO_SERVICE)


def _show(record: dict[str, Any], as_json: bool) -> None:
    # Late: heavy (rich, structlog, pyserial, pyusb, sqlite3 or transitions), which loading this
    # module for --help must not pull in (tests/cli/test_technician_cli.py).
    from cardshoe.controller.scoreboard.event_lines import event_line

    click.echo(json.dumps(record) if as_json else event_line(record))
