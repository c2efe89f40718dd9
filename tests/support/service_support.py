"""`shoectl run` as systemd runs it: a child process, a fake NOTIFY_SOCKET, a simulated shoe.

The simulator runs in the test process on a real pty, so it outlives every
service process the test starts, kills and restarts, as a real shoe outlives
a crash of the table PC's software. The notify socket is a real AF_UNIX
datagram socket standing in for systemd; the control socket is the
service's own, reached with the real client.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cardshoe.controller.config import TableConfig, load_config
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.service.control_client import request
from cardshoe.firmware_sim.attach_pty import PtyAttachment, serve_pty
from cardshoe.firmware_sim.core import FirmwareCore
from cardshoe.firmware_sim.devices import create_device
from cardshoe.firmware_sim.faults import parse_injection
from cardshoe.firmware_sim.line_reader import LineReader
from cardshoe.firmware_sim.timing import INSTANT, Timing
from support.process_support import ended
from support.session_support import (
    assert_every_event_journaled_once,
    journaled,
    rounds_as_the_rules_engine_plays_them,
)
from support.shoectl import ShoectlRunner

WAIT_S = 30.0
"""The longest any step of a service test waits; reached only when something is broken."""
WATCHDOG_USEC = 400_000
PULL_INTERVAL_S = 0.01
"""The virtual dealer's pace: an eight-deck shoe takes seconds, so a stop lands mid-shoe."""


@dataclass
class Table:
    """One table's files and its simulated shoe."""

    folder: Path
    core: FirmwareCore | LineReader
    """The simulated device: a cardshoe shoe or machine, or a line card reader."""
    pty: PtyAttachment
    journal_dir: Path | None = None
    """Where the journal lives when not beside the configuration (a small filesystem)."""

    @property
    def config_path(self) -> Path:
        return self.folder / "table.toml"

    @property
    def socket_path(self) -> Path:
        return self.folder / "control.sock"

    @property
    def journal_path(self) -> Path:
        return (self.journal_dir or self.folder) / "journal.sqlite"

    def config(self) -> TableConfig:
        return load_config(self.config_path)

    def status(self) -> dict[str, Any]:
        return request(self.socket_path, "status")


@contextmanager
def simulated_table(
    folder: Path,
    *,
    seed: int = 7,
    kind: str = "shoe",
    game: str | None = None,
    decks: int = 8,
    pull_interval_s: float = PULL_INTERVAL_S,
    timing: Timing = INSTANT,
    pairing_mode: bool = False,
    device_lines: str = "",
    service_lines: str = "",
    shoe_lines: str = "",
    journal: bool = True,
    journal_dir: Path | None = None,
    inject: tuple[str, ...] = (),
) -> Iterator[Table]:
    """A configuration in folder naming a simulated device on a pty, dealer pulling by itself.

    game defaults to Punto Banco on a manual shoe and Macau method 1 on the machine.
    device_lines, service_lines: more [device] and [service] keys, as TOML lines;
    shoe_lines: a [shoe] section's keys (none: no section).
    journal_dir: keep the journal there instead of in folder.
    inject: simulator faults, KIND@round=N or KIND@card=N (docs/simulator.md).
    Pairing keys live in folder/keys. journal: make the table's journal, as
    `shoectl journal init` does at installation (the service never makes one).
    """
    profile = "cs-1" if kind == "shoe" else "cs-auto"
    core = create_device(
        profile,
        seed=seed,
        decks=decks,
        timing=timing,
        pairing_mode=pairing_mode,
        injections=[parse_injection(text) for text in inject],
    )
    core.dealer.auto = True
    core.dealer.pull_interval_s = pull_interval_s
    with serve_pty(core) as pty:
        table = Table(folder, core, pty, journal_dir)
        game = game or ("punto-banco" if kind == "shoe" else "macau-1")
        write_table_files(table, game, kind, decks, device_lines, service_lines, shoe_lines)
        if journal:
            Journal.init(table.journal_path, table_id="T1")
        yield table


def write_table_files(
    table: Table,
    game: str,
    kind: str,
    decks: int,
    device_lines: str = "",
    service_lines: str = "",
    shoe_lines: str = "",
) -> None:
    """The table's configuration, naming its device on the pty (simulated_table's keys)."""
    journal_file = "journal.sqlite" if table.journal_dir is None else table.journal_path
    table.config_path.write_text(
        f'table_id = "T1"\n[game]\nname = "{game}"\ndecks = {decks}\n'
        f'[device]\nkind = "{kind}"\nurl = "{table.pty.link}"\n{device_lines}'
        f'[service]\njournal_path = "{journal_file}"\ncontrol_socket = "control.sock"\n'
        f'key_dir = "keys"\n{service_lines}' + (f"[shoe]\n{shoe_lines}" if shoe_lines else "")
    )


class FakeSystemd:
    """A notify socket read all the time, as systemd reads it: a full one would block sends."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.messages: list[str] = []
        self._changed = threading.Condition()
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._socket.bind(str(path))
        self._socket.settimeout(0.05)
        self._stop = threading.Event()
        self._idle_reads = 0
        self._reader = threading.Thread(target=self._read, name="fake-systemd")
        self._reader.start()

    def _read(self) -> None:
        while not self._stop.is_set():
            try:
                message = self._socket.recv(4096).decode()
            except TimeoutError:
                with self._changed:
                    self._idle_reads += 1
                    self._changed.notify_all()
                continue
            with self._changed:
                self.messages.append(message)
                self._changed.notify_all()

    def wait_for(self, wanted: str, alive: Callable[[], bool], timeout: float) -> bool:
        """True once wanted has arrived; False on timeout or when alive() turns false."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while wanted not in self.messages:
                if time.monotonic() > deadline or not alive():
                    return False
                self._changed.wait(0.05)
        return True

    def drain(self) -> None:
        """Return once everything already sent has been read: a read found the socket empty."""
        with self._changed:
            seen = self._idle_reads
            self._changed.wait_for(lambda: self._idle_reads > seen, WAIT_S)

    def close(self) -> None:
        self._stop.set()
        self._reader.join()
        self._socket.close()


@dataclass
class ServiceProcess:
    """One `shoectl run` child and what it told its fake systemd."""

    process: subprocess.Popen[bytes]
    systemd: FakeSystemd
    log_path: Path

    @property
    def messages(self) -> list[str]:
        return self.systemd.messages

    def wait_for_notification(self, wanted: str, timeout: float = WAIT_S) -> None:
        """Wait for one notification (READY=1, STOPPING=1...) while the child lives."""
        alive = lambda: self.process.poll() is None  # noqa: E731
        if not self.systemd.wait_for(wanted, alive, timeout) and wanted not in self.messages:
            raise AssertionError(
                f"no {wanted} (exit {self.process.poll()}); got {self.messages}; "
                f"log: {self.log_tail()}"
            )

    def stop(self, number: int = signal.SIGTERM) -> int:
        """Send the signal and wait for the exit; notifications sent before it are in."""
        self.process.send_signal(number)
        code = ended(self.process, WAIT_S, self.log_tail)
        self.systemd.drain()
        return code

    def log_tail(self) -> str:
        return self.log_path.read_text()[-3000:]


@contextmanager
def running_service(
    table: Table,
    *extra: str,
    watchdog_usec: int | None = WATCHDOG_USEC,
    betting_time: str | None = "0",
) -> Iterator[ServiceProcess]:
    """`shoectl run --config table.toml --betting-time 0 EXTRA...` with NOTIFY_SOCKET set.

    betting_time None leaves closing bets to the no-more-bets command. The child
    is killed on the way out if the test did not stop it.
    """
    systemd = FakeSystemd(table.folder / f"notify-{time.monotonic_ns()}.sock")
    environment = {**os.environ, "NOTIFY_SOCKET": str(systemd.path)}
    if watchdog_usec is not None:
        environment["WATCHDOG_USEC"] = str(watchdog_usec)
    command = [
        sys.executable,
        "-m",
        "cardshoe.controller.cli",
        "run",
        "--config",
        str(table.config_path),
        *(() if betting_time is None else ("--betting-time", betting_time)),
        *extra,
    ]
    log_path = table.folder / f"service-{time.monotonic_ns()}.log"
    try:
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, env=environment
            )
        try:
            yield ServiceProcess(process, systemd, log_path)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(WAIT_S)
    finally:
        systemd.close()


def wait_until(condition: Callable[[], bool], what: str, timeout: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def assert_shoe_dealt_once(table: Table, shoe_id: str) -> None:
    """Reconciled, each device event journaled once, each physical card dealt once, in order."""
    assert_every_event_journaled_once(table.journal_path)
    (ended,) = [r.payload for r in journaled(table.journal_path, "shoe.ended")]
    assert (ended["shoe_id"], ended["reconciled"]) == (shoe_id, True)
    assert ended["dealt"] + ended["burned"] == ended["device_cards_dealt"]
    kinds = ("card.assigned", "card.burned", "card.set_aside")
    physical = [
        r.payload["physical_id"] for kind in kinds for r in journaled(table.journal_path, kind)
    ]
    assert len(physical) == ended["dealt"] + ended["burned"]
    assert [card for card, count in Counter(physical).items() if count > 1] == []
    opened = [r.payload["round_no"] for r in journaled(table.journal_path, "round.opened")]
    assert opened == list(range(1, len(opened) + 1))
    rounds_as_the_rules_engine_plays_them(table.journal_path, table.config())


def open_manual_shoe(table: Table, shoe_id: str) -> None:
    """What the dealer confirms at a manual shoe: opened, loaded, cut."""
    request(table.socket_path, "new-shoe", shoe_id=shoe_id)
    request(table.socket_path, "shoe-loaded")
    request(table.socket_path, "cut-done")


def control(shoectl: ShoectlRunner, socket: Path, *arguments: str) -> tuple[int, str]:
    """`shoectl control ARGUMENTS` against the service's socket: its exit code and stderr."""
    done = shoectl("control", *arguments, "--socket", str(socket))
    return done.returncode, done.stderr.strip()


RELIEF_ROLES = '[roles]\nsupervisor = ["root"]\ndealer = ["nobody", "daemon"]\n'
"""nobody and daemon deal, root supervises: two dealers, so one can relieve the other."""


def with_relief_burn(table: Table) -> None:
    """game.relief_burn = 1 at the table, with RELIEF_ROLES."""
    config = table.config_path.read_text().replace("]\nname", "]\nrelief_burn = 1\nname", 1)
    table.config_path.write_text(config + RELIEF_ROLES)


@contextmanager
def idle_connections(socket_path: Path, count: int) -> Iterator[list[socket.socket]]:
    """count connections to a control socket that send nothing, closed after the block."""
    held: list[socket.socket] = []
    try:
        for _ in range(count):
            connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            held.append(connection)
            connection.connect(str(socket_path))
        yield held
    finally:
        for connection in held:
            connection.close()
