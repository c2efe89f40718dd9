"""shoectl monitor: a device's or the running service's events live, one line each."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from cardshoe.controller.cli.status_cmd import CONFIG_OPTION, SOCKET_OPTION

DEFAULT_TIMEOUT_S = 2.0
POLL_S = 0.2


@click.command()
@click.argument("url", required=False)
@click.option(
    "--service",
    "from_service",
    is_flag=True,
    help="Table events from the running `shoectl run`, over its socket.",
)
@SOCKET_OPTION
@CONFIG_OPTION
@click.option(
    "--count", type=click.IntRange(min=1), default=None, help="Stop after this many events."
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1),
    default=DEFAULT_TIMEOUT_S,
    show_default=True,
    help="Seconds to wait for the device to answer (with URL).",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per event.")
def monitor(
    url: str | None,
    from_service: bool,
    socket_path: Path | None,
    config_path: Path | None,
    count: int | None,
    timeout: float,
    as_json: bool,
) -> None:
    """Print each event as it happens, one timestamped line each, until Ctrl-C.

    With URL, open a device that is not in service (exclusively) and show
    its decoded events; each is acknowledged once shown, so the device goes
    on sending. Never point it at the table's own shoe while `shoectl run`
    has it (the port is busy anyway): use --service, which shows the
    service's table events (cards, results, holds, alarms) without touching
    the device. Ctrl-C ends with exit 0; exit 3 when the device or the
    service is absent or goes away.
    """
    from cardshoe.controller.errors import UserError

    if (url is None) == (not from_service):
        raise UserError("give either URL or --service (see 'shoectl monitor --help')")
    try:
        if url is not None:
            _monitor_device(url, timeout, count, as_json)
        else:
            _monitor_service(socket_path, config_path, count, as_json)
    except KeyboardInterrupt:
        return


def _monitor_device(url: str, timeout: float, count: int | None, as_json: bool) -> None:
    from cardshoe.controller.cli.device_access import EXIT_DEVICE_UNAVAILABLE, opened_device
    from cardshoe.controller.errors import UserError
    from cardshoe.controller.event_lines import device_event_record
    from cardshoe.drivers.errors import DeviceGone
    from cardshoe.drivers.messages import Event

    shown = 0
    with opened_device(url, timeout=timeout) as device:
        while count is None or shown < count:
            try:
                event = device.next_event(POLL_S)
            except DeviceGone as gone:
                raise UserError(str(gone), EXIT_DEVICE_UNAVAILABLE) from None
            if event is None:
                continue
            _show(device_event_record(event), as_json)
            shown += 1
            if isinstance(event, Event):
                device.ack(event.seq)


def _monitor_service(
    socket_path: Path | None, config_path: Path | None, count: int | None, as_json: bool
) -> None:
    from cardshoe.controller.cli.service_access import service_socket
    from cardshoe.controller.control_socket import EXIT_NO_SERVICE, subscription
    from cardshoe.controller.errors import UserError

    path = service_socket(socket_path, config_path)
    with subscription(path) as (status, events):
        shoe = status["shoe_id"] or "no shoe open"
        click.echo(
            f"following table {status['table_id']} on {path}: {status['state']}, {shoe}", err=True
        )
        for shown, record in enumerate(events, start=1):
            _show(record, as_json)
            if count is not None and shown >= count:
                return
    raise UserError(f"the service on {path} stopped", EXIT_NO_SERVICE)


def _show(record: dict[str, Any], as_json: bool) -> None:
    from cardshoe.controller.event_lines import event_line

    click.echo(json.dumps(record) if as_json else event_line(record))
