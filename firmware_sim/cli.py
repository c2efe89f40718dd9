"""`shoectl sim` and `python -m cardshoe.firmware_sim`: run a simulated device until stopped.

One click command serves both front ends. firmware_sim may not import the
controller, so instead of the controller's UserError it raises click's own
one-line errors: a bad setting is a UsageError (exit 2), a port it cannot
take is exit 3, and shoectl's main prints either on one line.

The first line on stdout is what a host opens (the /dev/pts path, or the
socket:// URL); `--json` prints one JSON object instead. Then the device
runs until Ctrl-C or SIGTERM, which stop it cleanly with exit 0.
"""

from __future__ import annotations

import json
import signal
import threading
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import click

from cardshoe.drivers.line.profile import LineProfileError, load_profile_file
from cardshoe.firmware_sim.attach_pty import serve_pty
from cardshoe.firmware_sim.attach_tcp import serve_tcp
from cardshoe.firmware_sim.devices import configure_device
from cardshoe.firmware_sim.errors import SimConfigError
from cardshoe.firmware_sim.faults import (
    LINE_ONLY_KINDS,
    LINE_READER_KINDS,
    InjectionKind,
    parse_injection,
)
from cardshoe.firmware_sim.line_reader import LineReader, ReaderIdentity, format_for
from cardshoe.firmware_sim.profiles import checked_serial_number
from cardshoe.firmware_sim.shoe import DEFAULT_DECKS
from cardshoe.firmware_sim.timing import INSTANT, Timing

if TYPE_CHECKING:
    from cardshoe.firmware_sim.attach_pty import PtyAttachment
    from cardshoe.firmware_sim.attach_tcp import TcpAttachment
    from cardshoe.firmware_sim.core import FirmwareCore

PROTOCOLS = ("cardshoe", "line")
DEFAULT_PACE_S = 0.5
CARDSHOE_ONLY = ("--scenario", "--auto-dealer", "--pairing-mode")


class PortUnavailable(click.ClickException):
    """The pty or TCP port could not be set up (in use, not permitted)."""

    exit_code = 3


SIM_HELP = f"""Run a simulated dealing shoe or shuffler-dealer on a pty or a TCP port.

Open the printed path (or URL) with any serial tool, for example `shoectl info PATH` or
pyserial's miniterm. Fault kinds: {", ".join(k for k in InjectionKind if k not in LINE_ONLY_KINDS)}
(docs/simulator.md).

With --protocol line it is a card reader without a gate that writes one line per card as
--profile FILE reads them, a card every --pace seconds (`shoectl monitor PATH --raw` shows
them). Its fault kinds: {", ".join(k for k in InjectionKind if k in LINE_READER_KINDS)}.
"""
"""The command's help, its fault kinds listed from the simulator's own tables."""


@click.command(help=SIM_HELP)
@click.option("--pty", "use_pty", is_flag=True, help="Serve on a new pseudo-terminal (default).")
@click.option(
    "--tcp",
    "tcp_port",
    type=click.IntRange(0, 65535),
    default=None,
    help="Serve on 127.0.0.1:PORT instead (0 picks a free port); open socket://127.0.0.1:PORT.",
)
@click.option(
    "--link",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="With --pty: keep a stable symlink to the pty here (it follows re-plugs).",
)
@click.option(
    "--protocol",
    type=click.Choice(PROTOCOLS),
    default="cardshoe",
    show_default=True,
    help="What the device speaks: the cardshoe protocol, or one ASCII line per card (a reader).",
)
@click.option(
    "--profile",
    default=None,
    help="cardshoe: the device profile, cs-1 (default), cs-1-basic or cs-auto. line: a TOML "
    "file whose [device.line] table the reader's lines must match (docs/examples/line-shoe.toml).",
)
@click.option(
    "--pace",
    type=click.FloatRange(min=0.01),
    default=DEFAULT_PACE_S,
    show_default=True,
    help="line: seconds between two cards the reader's dealer draws.",
)
@click.option("--serial", "serial_number", default=None, help="Serial number to report.")
@click.option("--seed", type=int, default=None, help="Seed the shuffle (default: secure random).")
@click.option(
    "--decks", type=click.IntRange(1, 255), default=None, help="Decks loaded (default 8)."
)
@click.option(
    "--inject",
    multiple=True,
    metavar="KIND@round=N",
    help="Inject a fault (repeatable): KIND@round=N or KIND@card=N, optionally ,for=SECONDS.",
)
@click.option(
    "--scenario",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="TOML file with profile, seed, decks and inject = [...].",
)
@click.option(
    "--shuffle",
    default="fair",
    show_default=True,
    help="How each new shoe is shuffled: fair, riffle:N (N riffles of the last shoe) "
    "or carry:LEN (a fair shoe keeping LEN cards of the last one in order).",
)
@click.option("--realistic", is_flag=True, help="Real-world timing: wire time, pulls, shuffles.")
@click.option(
    "--auto-dealer", is_flag=True, help="Manual shoe: the virtual dealer pulls when the gate opens."
)
@click.option(
    "--pairing-mode",
    is_flag=True,
    help="Start with the pairing switch on: the device takes one key from `shoectl pair`.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object describing the port.")
def sim(
    use_pty: bool,
    tcp_port: int | None,
    link: Path | None,
    protocol: str,
    profile: str | None,
    pace: float,
    serial_number: str | None,
    seed: int | None,
    decks: int | None,
    inject: tuple[str, ...],
    scenario: Path | None,
    shuffle: str,
    realistic: bool,
    auto_dealer: bool,
    pairing_mode: bool,
    as_json: bool,
) -> None:
    """Run the device the options describe until stopped (SIM_HELP is its --help)."""

    if use_pty and tcp_port is not None:
        raise click.UsageError("choose one of --pty and --tcp")
    if link is not None and tcp_port is not None:
        raise click.UsageError("--link goes with --pty, not --tcp")
    device: FirmwareCore | LineReader
    try:
        if protocol == "line":
            _refuse_cardshoe_only(scenario, auto_dealer, pairing_mode)
            device = _line_reader(profile, seed, decks, serial_number, inject, realistic, pace)
        else:
            device = configure_device(
                profile=profile,
                seed=seed,
                decks=decks,
                serial_number=serial_number,
                inject=inject,
                scenario=scenario,
                shuffle=shuffle,
                realistic=realistic,
                pairing_mode=pairing_mode,
            )
            device.dealer.auto = auto_dealer
    except SimConfigError as exc:
        raise click.UsageError(str(exc)) from None
    _serve_until_stopped(device, tcp_port, link, as_json)


def _refuse_cardshoe_only(scenario: Path | None, auto_dealer: bool, pairing_mode: bool) -> None:
    """A line reader has no scenario file, gate or pairing switch: say which flag is wrong."""
    given = dict(zip(CARDSHOE_ONLY, (scenario, auto_dealer, pairing_mode), strict=True))
    for flag, value in given.items():
        if value:
            raise click.UsageError(f"{flag} is for --protocol cardshoe, not line")


def _line_reader(
    profile: str | None,
    seed: int | None,
    decks: int | None,
    serial_number: str | None,
    inject: tuple[str, ...],
    realistic: bool,
    pace: float,
) -> LineReader:
    if profile is None:
        raise SimConfigError(
            "--protocol line needs --profile FILE with a [device.line] table "
            "(docs/examples/line-shoe.toml)"
        )
    try:
        line_profile = load_profile_file(Path(profile))
    except LineProfileError as exc:
        raise SimConfigError(str(exc)) from None
    identity = ReaderIdentity()
    if serial_number is not None:
        identity = replace(identity, serial_number=checked_serial_number(serial_number))
    return LineReader(
        format=format_for(line_profile),
        identity=identity,
        seed=seed,
        decks=decks or DEFAULT_DECKS,
        injections=[parse_injection(text) for text in inject],
        pull_interval_s=pace,
        timing=Timing(baudrate=line_profile.baud) if realistic else INSTANT,
        ack=line_profile.ack,
    )


def _serve_until_stopped(
    device: FirmwareCore | LineReader, tcp_port: int | None, link: Path | None, as_json: bool
) -> None:
    attachment: TcpAttachment | PtyAttachment
    try:
        if tcp_port is not None:
            attachment = serve_tcp(device, port=tcp_port)
            where = {"open": attachment.url, "url": attachment.url}
        else:
            attachment = serve_pty(device, link)
            where = {"open": attachment.path, "path": attachment.path, "link": str(attachment.link)}
    except OSError as exc:
        raise PortUnavailable(f"cannot open the simulator's port: {exc.strerror or exc}") from None
    stop = threading.Event()
    signals = (signal.SIGINT, signal.SIGTERM)
    previous = {number: signal.signal(number, lambda *_: stop.set()) for number in signals}
    try:
        record = {**where, **_identity(device)}
        click.echo(json.dumps(record) if as_json else record["open"])
        click.echo(
            f"simulated {record['model']} {record['serial_number']}"
            + (f" firmware {record['firmware_version']}" if record["firmware_version"] else "")
            + f" at {record['open']}; Ctrl-C stops it",
            err=True,
        )
        while not stop.wait(0.5):
            pass
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        attachment.close()


def _identity(device: FirmwareCore | LineReader) -> dict[str, str]:
    """What a host needs to recognise and trust the simulated device."""

    if isinstance(device, LineReader):
        return {
            "profile": "line",
            "model": device.identity.product,
            "kind": "LINE_READER",
            "serial_number": device.serial_number,
            "firmware_version": "",
            "firmware_hash": "",
        }
    return {
        "profile": device.profile.name,
        "model": device.profile.model,
        "kind": device.profile.kind.name,
        "serial_number": device.serial_number,
        "firmware_version": device.profile.firmware_version,
        "firmware_hash": device.firmware_hash.hex(),
    }
