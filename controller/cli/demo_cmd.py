"""shoectl demo: deal a whole shoe on a simulated device through the table's production code."""

from __future__ import annotations

import json
import logging
import secrets
import socket
import sys
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from cardshoe.controller.cli.completion import complete_game
from cardshoe.controller.cli.demo_readers import DemoProtocol
from cardshoe.controller.cli.demo_wiring import DemoSettings, DemoTransport, run_demo
from cardshoe.controller.config import DeviceMode, TableConfig, load_config
from cardshoe.controller.display.plain import PlainLines
from cardshoe.controller.protection import watcher
from cardshoe.controller.scoreboard.board import TableBoard
from cardshoe.controller.scoreboard.demo_events import DemoEventStream
from cardshoe.controller.service.device_access import device_user_error
from cardshoe.controller.service.logging_setup import configure_logging
from cardshoe.controller.web.server import ListenAddress, served_in_thread, socket_url
from cardshoe.drivers.errors import DriverError

if TYPE_CHECKING:
    from cardshoe.controller.cli.demo_wiring import DemoResult
    from cardshoe.controller.journal.records import Record
    from cardshoe.controller.procedure.facts import Alarm, Observer
    from cardshoe.controller.service.session import TableSession

TRANSPORTS = ("pty", "tcp", "usb", "inproc")
PROTOCOLS = ("cardshoe", "line", "hid")
DEVICE_KINDS = ("shoe", "auto")
TERMINAL_CARD_INTERVAL_S = 0.12
"""On a terminal a card leaves every 0.12 s (about five a second with the betting pauses),
so a person can follow it."""


@click.command()
@click.option(
    "--game",
    shell_complete=complete_game,
    help="punto-banco, seven-up, macau-1 or macau-2 [default: the config's]",
)
@click.option("--decks", type=int, help="Decks in the shoe [default: the config's]")
@click.option("--seed", type=int, help="Seed the simulator's shuffle to repeat a run exactly.")
@click.option(
    "--rounds",
    type=click.IntRange(min=1),
    help="End the shoe after K rounds [default: the cut card; 10 a deck on a machine]",
)
@click.option(
    "--device",
    "device_kind",
    type=click.Choice(DEVICE_KINDS),
    help="shoe: manual dealing shoe; auto: shuffler-dealer [default: the config's]",
)
@click.option(
    "--transport",
    type=click.Choice(TRANSPORTS),
    default=None,
    help="How the controller reaches the simulated device [default: pty; usb for --protocol hid]",
)
@click.option(
    "--protocol",
    type=click.Choice(PROTOCOLS),
    default="cardshoe",
    show_default=True,
    help="What the simulated device speaks: cardshoe, or a card reader without a gate writing "
    "one line per card (line) or typing it as a USB keyboard (hid).",
)
@click.option(
    "--inject",
    multiple=True,
    metavar="KIND@round=N",
    help="A simulator fault (repeatable): KIND@round=N or KIND@card=N[,for=SECONDS].",
)
@click.option(
    "--journal",
    "journal_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Keep the journal in this file [default: a temporary journal]",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Table configuration (TOML); --game, --decks and --device override it.",
)
@click.option(
    "--speed",
    type=click.FloatRange(min=0),
    help="Seconds between cards [default: 0.12 on a terminal, else 0]",
)
@click.option(
    "--web",
    "web_listen",
    metavar="HOST:PORT",
    help="Also serve the scoreboard page there (as shoectl web) while the shoe is dealt.",
)
@click.option(
    "--shuffle",
    default="fair",
    show_default=True,
    help="fair, riffle:N (N riffles of the journal's last shoe) or carry:LEN (a fair shoe "
    "keeping LEN cards of the last one in order); see docs/game-protection.md.",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line per event.")
def demo(
    game: str | None,
    decks: int | None,
    seed: int | None,
    rounds: int | None,
    device_kind: str | None,
    transport: str | None,
    protocol: str,
    inject: tuple[str, ...],
    journal_path: Path | None,
    config_path: Path | None,
    speed: float | None,
    web_listen: str | None,
    shuffle: str,
    as_json: bool,
) -> None:
    """Deal a whole shoe: the firmware simulator, and the real driver, journal and procedure.

    A virtual dealer pulls each card the controller lets go; at a card reader
    (--protocol line or hid), which has no gate, each card the table shows is due. On a terminal the
    table is drawn live; elsewhere it prints one line per event, or with --json
    one JSON object per line. --web serves the scoreboard page from the demo's
    journal beside it, until the shoe ends.
    """

    config = table_config(config_path, game, decks, device_kind, rounds)
    if seed is None:
        # A run worth seeing again must be repeatable: without --seed the demo draws one, and
        # reports it (shoe_started's seed, and its closing lines) for the next --seed.
        seed = secrets.randbelow(2**31)
    live = sys.stdout.isatty() and not as_json
    if speed is None:
        speed = TERMINAL_CARD_INTERVAL_S if live else 0.0
    settings = DemoSettings(
        config=config,
        seed=seed,
        rounds=rounds,
        transport=DemoTransport(transport or ("usb" if protocol == "hid" else "pty")),
        protocol=DemoProtocol(protocol),
        inject=inject,
        journal_path=journal_path,
        card_interval_s=speed,
        shuffle=shuffle,
    )
    web = _web_socket(web_listen)
    if as_json:
        _run_json(settings, web)
    elif live:
        _run_live(settings, web)
    else:
        _run_plain(settings, web)


def _web_socket(listen: str | None) -> socket.socket | None:
    """The scoreboard's socket, bound before the shoe starts so a bad address stops nothing."""
    if listen is None:
        return None

    sock = ListenAddress.parse(listen, "--web").bind()
    click.echo(f"shoectl demo: scoreboard on {socket_url(sock)}", err=True)
    return sock


def table_config(
    path: Path | None,
    game: str | None,
    decks: int | None,
    device_kind: str | None,
    rounds: int | None = None,
) -> TableConfig:
    """The configuration file's table (or the defaults) with the options given on top.

    --rounds on an automatic machine is its shoe.machine_rounds, so the house's policy
    (Art. 3.2) does not end the demo's shoe before the rounds asked for.
    """

    base = load_config(path) if path is not None else TableConfig()
    game_config = replace(
        base.game,
        name=base.game.name if game is None else game,
        decks=base.game.decks if decks is None else decks,
    )
    device = (
        base.device if device_kind is None else replace(base.device, kind=DeviceMode(device_kind))
    )
    shoe = base.shoe
    if rounds is not None and device.kind is DeviceMode.AUTO:
        shoe = replace(shoe, machine_rounds=rounds)
    return replace(base, game=game_config, device=device, shoe=shoe)


class _Lines:
    """Standard output, line by line; a reader that goes away (| head) ends the demo quietly."""

    closed = False

    def write(self, line: str) -> None:
        if self.closed:
            return
        try:
            click.echo(line)
        except BrokenPipeError:
            self.closed = True

    def stop_requested(self) -> bool:
        return self.closed


def _run(
    settings: DemoSettings,
    observers: list[Observer],
    lines: _Lines | None = None,
    on_session: Callable[[TableSession], None] | None = None,
    web: socket.socket | None = None,
) -> DemoResult:
    """Run the demo; a device that cannot be opened is the usual one-line error.

    With web, the scoreboard is served from the session's journal once it is open.
    """

    stop_requested = (lambda: False) if lines is None else lines.stop_requested
    with ExitStack() as serving:

        def starting(session: TableSession) -> None:
            if web is not None:
                journal = session.journal.path
                serving.enter_context(served_in_thread(journal, web, settings.config))
            if on_session is not None:
                on_session(session)

        try:
            result = run_demo(settings, observers, starting, stop_requested)
        except DriverError as exc:
            raise device_user_error(exc) from exc
    if lines is not None and lines.closed:
        raise BrokenPipeError
    return result


def _quiet_logging(**options: Any) -> None:
    """Warnings and errors only: the table's events are the demo's output."""

    configure_logging(level=logging.WARNING, **options)


def _report_surveillance(session: TableSession, write: Callable[[Alarm], None]) -> None:
    """The watcher's alarms as the demo's own lines (plain or JSON), in place of its log lines,
    which would be raw JSON on stderr among them."""

    logging.getLogger(watcher.__name__).setLevel(logging.ERROR)
    session.watch_surveillance(write)


def _resumed(session: TableSession) -> dict[str, Any] | None:
    """Where a shoe the journal held open stands, or None when the session starts afresh."""
    snapshot = session.snapshot()
    if snapshot.shoe_id is None:
        return None
    return {
        "shoe_id": snapshot.shoe_id,
        "state": str(snapshot.held_state or snapshot.state),
        "round": snapshot.round_no,
        "rounds_finished": snapshot.rounds_finished,
        "dealt": snapshot.dealt,
        "burned": snapshot.burned,
    }


def _open_shoe_records(session: TableSession) -> list[Record]:
    shoe_id = session.snapshot().shoe_id
    return [] if shoe_id is None else list(session.journal.records(shoe_id=shoe_id))


def _run_json(settings: DemoSettings, web: socket.socket | None) -> None:

    lines = _Lines()

    def emit(line: dict[str, Any]) -> None:
        lines.write(json.dumps(line))

    def starting(session: TableSession) -> None:
        info = session.device.describe()
        del info["counters"]
        emit({"event": "device", "transport": str(settings.transport), **info})
        _report_surveillance(
            session,
            lambda alarm: emit({"event": "surveillance_alarm", **alarm.payload()}),
        )
        resumed = _resumed(session)
        if resumed is not None:
            emit({"event": "resumed", **resumed})
            stream.catch_up(_open_shoe_records(session))

    _quiet_logging()
    config = settings.config
    start = {"table_id": config.table_id, "seed": settings.seed}
    stream = DemoEventStream(config.game.build_game(), emit, start)
    result = _run(settings, [stream], lines, starting, web)
    emit({"event": "link", "counters": result.link_counters})


def _run_plain(settings: DemoSettings, web: socket.socket | None) -> None:

    lines = _Lines()

    def starting(session: TableSession) -> None:
        info = session.device.identity
        lines.write(
            f"{info.model} {info.serial_number} (firmware {info.firmware_version}) "
            f"on {session.device.url} over {settings.transport}"
        )
        _report_surveillance(
            session, lambda alarm: lines.write(f"surveillance alarm {alarm.kind}: {alarm.detail}")
        )
        resumed = _resumed(session)
        if resumed is not None:
            lines.write(
                f"shoe {resumed['shoe_id']} goes on from the journal: {resumed['state']}, "
                f"{resumed['rounds_finished']} rounds finished, "
                f"{resumed['dealt']} cards dealt, {resumed['burned']} burned"
            )

    _quiet_logging()
    result = _run(settings, [PlainLines(lines.write)], lines, starting, web)
    for line in _closing_lines(result, settings.seed):
        lines.write(line)


def _run_live(settings: DemoSettings, web: socket.socket | None) -> None:
    # Late: only the live view draws with rich (~100 ms of imports); --json and plain lines do not.
    from rich.console import Console
    from rich.live import Live

    from cardshoe.controller.display.rich_view import TableView

    def starting(session: TableSession) -> None:
        for record in _open_shoe_records(session):
            view.apply(record.kind, record.payload)

    console = Console()
    view = TableView(TableBoard(table_id=settings.config.table_id))
    with Live(view, console=console, refresh_per_second=10, redirect_stderr=True):
        _quiet_logging(stream=sys.stderr, json_lines=False)
        result = _run(settings, [view], on_session=starting, web=web)
    for line in _closing_lines(result, settings.seed):
        console.print(line, markup=False, highlight=False)


STREAM_POSITION = frozenset({"last_acked_seq", "next_seq", "delivered_seq", "frames_ok"})
"""Link counters that say where the stream stands, not what went wrong on it."""


def _closing_lines(result: DemoResult, seed: int | None) -> list[str]:
    lines = []
    if result.held_for is not None:
        lines.append(
            f"the table was held ({result.held_for}) and only a technician can clear it: "
            "the demo abandoned the shoe"
        )
    trouble = {
        name: count
        for name, count in result.link_counters.items()
        if count and name not in STREAM_POSITION
    }
    described = ", ".join(f"{name} {count}" for name, count in trouble.items())
    lines.append(f"link: {described or 'every frame arrived whole, once, in order'}")
    lines.append(f"seed {seed}: the same options with --seed {seed} deal this shoe again")
    return lines
