"""The table service as systemd runs it: start-up to READY=1, and its resident memory.

`shoectl run --auto-shoe --betting-time 0` starts as a child process with
NOTIFY_SOCKET pointing at a datagram socket this script reads, as systemd
does; its device is the simulated manual shoe on a real pty, the virtual
dealer pulling whenever the gate opens. Start-up is the time from spawning
the process to READY=1 (interpreter, imports, journal, device handshake,
recovery). Memory is VmRSS from /proc at READY and VmHWM, the peak, once the
service has dealt a whole 8-deck shoe and opened the next, each plus the
private memory (Private_Clean + Private_Dirty) of the service's remaining-
shoe pricing child (controller/protection/pricing_process.py): the table PC
must hold both, and the pages the child shares with the service (the
interpreter, the shared libraries) are counted once. Target (issue 7):
under 60 MB, on a new journal and on a long one (issue 22: a table's
journal after 500 shoes), given with --journal or by measure()'s caller:
the service must not hold what its journal holds. A measurement, not a
test: it asserts nothing.

    .venv/bin/python bench/bench_service.py [--journal LONG_JOURNAL]
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import closing
from pathlib import Path

from results import Measurement, Target, print_measurements

from cardshoe.controller.errors import UserError
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.service.control_client import request
from cardshoe.firmware_sim.attach_pty import serve_pty
from cardshoe.firmware_sim.devices import create_device

DECKS = 8
SEED = 3
WAIT_S = 60.0
"""The longest any step waits; reached only when the service is broken."""
RSS_TARGET = Target(60, at_least=False, text="< 60 MB")


class NotifyListener:
    """Reads the notify socket all the time, as systemd does, and notes when READY=1 came."""

    def __init__(self, path: Path) -> None:
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._socket.bind(str(path))
        self._socket.settimeout(0.05)
        self.ready = threading.Event()
        self.ready_at = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, name="bench-notify", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        while not self._stop.is_set():
            try:
                message = self._socket.recv(4096).decode()
            except TimeoutError:
                continue
            if "READY=1" in message.splitlines() and not self.ready.is_set():
                self.ready_at = time.perf_counter()
                self.ready.set()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self._socket.close()


def memory_mb(pid: int, field: str) -> float:
    """A VmRSS or VmHWM line of /proc/<pid>/status, in MB (10^6 bytes)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024 / 1e6
    raise RuntimeError(f"/proc/{pid}/status has no {field}")


def private_mb(pid: int) -> float:
    """The memory only this process holds: /proc/<pid>/smaps_rollup's Private_* lines, in MB."""
    kilobytes = 0
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith(("Private_Clean:", "Private_Dirty:")):
            kilobytes += int(line.split()[1])
    return kilobytes * 1024 / 1e6


def service_memory_mb(pid: int, field: str) -> float:
    """memory_mb of the service plus the private memory of its children (the pricing child)."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return memory_mb(pid, field) + sum(private_mb(int(child)) for child in children)


def wait_for_next_shoe(control_socket: Path, service: subprocess.Popen[bytes]) -> int:
    """Poll the service until its first shoe has ended and another opened; its rounds."""
    deadline = time.monotonic() + WAIT_S
    first_shoe = None
    rounds = 0
    while time.monotonic() < deadline and service.poll() is None:
        try:
            status = request(control_socket, "status")
        except UserError:
            time.sleep(0.05)
            continue
        shoe = status["shoe_id"]
        if first_shoe is None:
            first_shoe = shoe
        elif shoe != first_shoe:
            return rounds
        rounds = status["rounds_finished"]
        time.sleep(0.05)
    raise RuntimeError(f"the service did not finish a shoe (exit {service.poll()})")


def spawn_service(config: Path, notify_socket: Path) -> subprocess.Popen[bytes]:
    """`shoectl run --auto-shoe --betting-time 0` as systemd starts it, NOTIFY_SOCKET set."""
    command = [sys.executable, "-m", "cardshoe.controller.cli", "run", "--config", str(config)]
    command += ["--auto-shoe", "--betting-time", "0"]
    environment = {**os.environ, "NOTIFY_SOCKET": str(notify_socket)}
    return subprocess.Popen(
        command, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def run_service(folder: Path, journal: Path | None = None) -> tuple[float, float, float, int]:
    """Seconds to READY=1, MB resident at READY, peak MB after a shoe, rounds dealt; on a
    copy of `journal` when one is given, else on a new one."""
    table_id = "BENCH"
    if journal is None:
        Journal.init(folder / "journal.sqlite", table_id=table_id)
    else:
        with Journal.open_readonly(journal) as given:
            table_id = given.table_id
        # SQLite's backup, not a file copy: it takes what the journal's WAL still holds.
        with (
            closing(sqlite3.connect(f"file:{journal}?mode=ro", uri=True)) as source,
            closing(sqlite3.connect(folder / "journal.sqlite")) as target,
        ):
            source.backup(target)
    # On a given journal, a device of its own serial number: the journal's devices counted
    # their sequences past where a fresh simulator starts, which the service holds on.
    serial = None if journal is None else "BENCH-LONG-JOURNAL"
    core = create_device("cs-1", serial_number=serial, seed=SEED, decks=DECKS)
    core.dealer.auto = True
    with serve_pty(core) as pty:
        config = folder / "table.toml"
        config.write_text(
            f'table_id = "{table_id}"\n[game]\nname = "punto-banco"\ndecks = {DECKS}\n'
            f'[device]\nkind = "shoe"\nurl = "{pty.link}"\n'
            '[service]\njournal_path = "journal.sqlite"\ncontrol_socket = "control.sock"\n'
        )
        listener = NotifyListener(folder / "notify.sock")
        started = time.perf_counter()
        service = spawn_service(config, folder / "notify.sock")
        try:
            if not listener.ready.wait(WAIT_S):
                raise RuntimeError(f"no READY=1 from the service (exit {service.poll()})")
            startup = listener.ready_at - started
            at_ready = service_memory_mb(service.pid, "VmRSS")
            rounds = wait_for_next_shoe(folder / "control.sock", service)
            peak = service_memory_mb(service.pid, "VmHWM")
        finally:
            service.send_signal(signal.SIGTERM)
            service.wait(WAIT_S)
            listener.close()
    return startup, at_ready, peak, rounds


def measure(long_journal: Path | None = None) -> list[Measurement]:
    """The rows on a new journal, and the memory rows again on long_journal when given."""
    with tempfile.TemporaryDirectory(prefix="cardshoe-bench-") as folder:
        startup, at_ready, peak, rounds = run_service(Path(folder))
    rows = [
        Measurement(
            "service start-up to READY=1",
            startup,
            "s",
            None,
            "spawn of shoectl run to READY=1: imports, journal, handshake, recovery",
        ),
        Measurement(
            "service resident memory at READY=1",
            at_ready,
            "MB",
            RSS_TARGET,
            "VmRSS of shoectl run plus its pricing child's private memory, simulated shoe on a pty",
        ),
        Measurement(
            "service peak resident memory over a whole shoe",
            peak,
            "MB",
            RSS_TARGET,
            f"VmHWM of shoectl run plus its pricing child's private memory, after an "
            f"{DECKS}-deck shoe of {rounds} rounds and the next shoe's start",
        ),
    ]
    if long_journal is not None:
        rows += memory_on_journal(long_journal)
    return rows


def memory_on_journal(journal: Path) -> list[Measurement]:
    """The memory rows with the service started on a copy of a long journal."""
    with tempfile.TemporaryDirectory(prefix="cardshoe-bench-") as folder:
        _, at_ready, peak, rounds = run_service(Path(folder), journal)
    size_mb = journal.stat().st_size / 1e6
    how = f"as above, the service started on a copy of a {size_mb:,.1f} MB journal ({journal.name})"
    return [
        Measurement(
            "service resident memory at READY=1, long journal", at_ready, "MB", RSS_TARGET, how
        ),
        Measurement(
            "service peak resident memory over a whole shoe, long journal",
            peak,
            "MB",
            RSS_TARGET,
            f"{how}; after a shoe of {rounds} rounds and the next shoe's start",
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--journal", type=Path, help="a long journal (500 shoes) to run on too")
    print_measurements(measure(parser.parse_args().journal))


if __name__ == "__main__":
    main()
