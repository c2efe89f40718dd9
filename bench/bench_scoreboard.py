"""The scoreboard's three speed figures (issue 13): the board, the page's latency, its memory.

- Board: board_json() of a 90-round shoe (all five roads, statistics, ask
  roads), the CPU time of repeated builds (the wall clock beside it: other
  work on the two cores stretches it). Target: under 5 ms.
- Latency: the real `shoectl web` serves a journal this script appends a
  the dealt shoe's records to, a round every 100 ms; Debian's headless Chromium shows the page,
  and a MutationObserver notes when each round's bead cell reaches the DOM.
  Commit to DOM, on the same wall clock. Target: p99 under 250 ms.
- Memory: 200 clients hold /events open and read every event while the
  whole shoe is appended; the web service's peak resident memory (VmHWM). Target:
  under 80 MB.
- Bytes: one client reads /events while an 80-round shoe is appended at a
  table's pace (each record on its own, never two in one of the page's
  polls), so every record is an event with what changed in the board.
  Target: at most 0.5 MB a client a shoe.

The shoe is dealt by `shoectl demo` on the simulated shuffler-dealer into a
journal of its own; its records are then written again, one transaction
each, into the journal the web service reads, so the page draws a real shoe.
A measurement, not a test: it asserts nothing.

    .venv/bin/python bench/bench_scoreboard.py
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench_service import memory_mb
from results import Measurement, Target, percentile, print_measurements

from cardshoe.controller.journal.records import Record
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.scoreboard.board import TableBoard
from cardshoe.controller.scoreboard.board_json import board_json

DECKS = 8
ROUNDS = 90
BOARD_REPEATS = 300
LATENCY_PACE_S = 0.1
"""Seconds between two rounds' results: the page settles between them, as at a table."""
MEMORY_PACE_S = 0.002
BYTES_ROUNDS = 80
TABLE_PACE_S = 0.05
"""Seconds between two records in the bytes run: past the page's poll (feed.POLL_S), so each
record is an event with its own change, as at a table, where records come seconds apart."""
CLIENTS = 200
CHROMIUM = "/usr/lib/chromium/chromium-headless-shell"
WAIT_S = 60.0
URL_LINE = re.compile(r"serving http://127\.0\.0\.1:(\d+)/")

BOARD_TARGET = Target(5, at_least=False, text="< 5 ms")
LATENCY_TARGET = Target(250, at_least=False, text="< 250 ms")
MEMORY_TARGET = Target(80, at_least=False, text="< 80 MB")
BYTES_TARGET = Target(0.5, at_least=False, text="≤ 0.5 MB")

WATCH_BEAD = """() => {
  window.beadTimes = [];
  const road = document.getElementById("bead");
  new MutationObserver(() => {
    window.beadTimes.push([Date.now(), road.querySelectorAll(".cell").length]);
  }).observe(road, {childList: true});
}"""


def dealt_shoe(folder: Path, seed: int, rounds: int = ROUNDS) -> list[Record]:
    """The records of a shoe of `rounds` rounds as the table writes them: `shoectl demo` deals
    it on the simulated automatic machine (which never runs out) into a journal of its own."""
    path = folder / f"dealt-{seed}.sqlite"
    command = [sys.executable, "-m", "cardshoe.controller.cli", "demo", "--json", "--device"]
    command += ["auto", "--decks", str(DECKS), "--rounds", str(rounds), "--seed", str(seed)]
    subprocess.run([*command, "--journal", str(path)], check=True, capture_output=True)
    with Journal.open_readonly(path) as journal:
        return list(journal.records())


def append(journal: Journal, record: Record) -> None:
    """Write a dealt record again, as its own transaction (the table commits each event)."""
    with journal.transaction() as transaction:
        transaction.append(
            record.kind,
            record.payload,
            shoe_id=record.shoe_id,
            round_no=record.round_no,
            device_serial=record.device_serial,
            device_seq=record.device_seq,
        )


def measure_board(records: list[Record]) -> Measurement:
    board = TableBoard(table_id="T1")
    for record in records:
        board.apply(record.kind, record.payload)
    cpu, wall = [], []
    for _ in range(BOARD_REPEATS):
        started_cpu, started_wall = time.thread_time(), time.perf_counter()
        board_json(board)
        cpu.append((time.thread_time() - started_cpu) * 1000)
        wall.append((time.perf_counter() - started_wall) * 1000)
    return Measurement(
        f"scoreboard of a {ROUNDS}-round shoe, p99",
        percentile(cpu, 99),
        "ms",
        BOARD_TARGET,
        f"board_json(): five roads, statistics and ask roads; CPU time of {BOARD_REPEATS} "
        f"builds (wall clock median {percentile(wall, 50):.2f} ms, p99 "
        f"{percentile(wall, 99):.2f} ms with the cores shared)",
    )


class WebProcess:
    """`shoectl web` on a journal, on a port the kernel chose."""

    def __init__(self, journal: Path) -> None:
        command = [sys.executable, "-m", "cardshoe.controller.cli", "web", "--journal"]
        command += [str(journal), "--listen", "127.0.0.1:0"]
        self.process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
        assert self.process.stderr is not None
        found = URL_LINE.search(self.process.stderr.readline())
        if found is None:
            self.stop()
            raise RuntimeError("shoectl web did not start")
        self.port = int(found.group(1))
        self.url = f"http://127.0.0.1:{self.port}/"

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=WAIT_S)


def measure_latency(folder: Path, records: list[Record]) -> list[Measurement]:
    from playwright.sync_api import sync_playwright

    path = folder / "latency.sqlite"
    start = next(index for index, record in enumerate(records) if record.kind == "shoe.started")
    with Journal.open(path, table_id=records[0].table_id, create=True) as journal:
        for record in records[: start + 1]:
            append(journal, record)
        web = WebProcess(path)
        try:
            with sync_playwright() as driver:
                browser = driver.chromium.launch(executable_path=CHROMIUM)
                page = browser.new_page(viewport={"width": 1920, "height": 1080})
                page.goto(web.url)
                page.wait_for_function("window.cardshoe.renders > 0")
                page.evaluate(WATCH_BEAD)
                committed = []
                for record in records[start + 1 :]:
                    append(journal, record)
                    if record.kind == "round.result":
                        committed.append(time.time() * 1000)
                        time.sleep(LATENCY_PACE_S)
                page.wait_for_function(
                    f"document.querySelectorAll('#bead .cell').length === {len(committed)}",
                    timeout=WAIT_S * 1000,
                )
                shown = page.evaluate("window.beadTimes")
                browser.close()
        finally:
            web.stop()
    latencies = []
    for index, commit_ms in enumerate(committed, start=1):
        dom_ms = next(moment for moment, cells in shown if cells >= index)
        latencies.append(dom_ms - commit_ms)
    how = (
        f"{len(latencies)} round results committed {LATENCY_PACE_S * 1000:.0f} ms apart, "
        "commit to bead cell in Chromium's DOM"
    )
    return [
        Measurement(
            "journal commit to the page's DOM p50", percentile(latencies, 50), "ms", None, how
        ),
        Measurement(
            "journal commit to the page's DOM p99",
            percentile(latencies, 99),
            "ms",
            LATENCY_TARGET,
            how,
        ),
    ]


async def _hold_clients(port: int, count: int, done: threading.Event) -> int:
    """count clients reading /events until done; the bytes they read, together."""
    received = [0]

    async def client() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /events HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n\r\n")
        await writer.drain()
        while not done.is_set():
            try:
                chunk = await asyncio.wait_for(reader.read(65536), 0.2)
            except TimeoutError:
                continue
            if not chunk:
                break
            received[0] += len(chunk)
        writer.close()

    await asyncio.gather(*(client() for _ in range(count)))
    return received[0]


def watched_append(
    path: Path, records: list[Record], clients: int, pace_s: float
) -> tuple[int, float]:
    """Append records pace_s apart to a new journal that `shoectl web` serves to `clients`
    /events readers: the bytes they read together, and the service's peak memory (MB)."""
    with Journal.open(path, table_id=records[0].table_id, create=True) as journal:
        web = WebProcess(path)
        done = threading.Event()
        received: list[int] = []
        readers = threading.Thread(
            target=lambda: received.append(asyncio.run(_hold_clients(web.port, clients, done)))
        )
        try:
            readers.start()
            time.sleep(2)
            for record in records:
                append(journal, record)
                time.sleep(pace_s)
            time.sleep(2)
            peak = memory_mb(web.process.pid, "VmHWM")
        finally:
            done.set()
            readers.join()
            web.stop()
    return received[0], peak


def measure_memory(folder: Path, records: list[Record]) -> Measurement:
    received, peak = watched_append(folder / "memory.sqlite", records, CLIENTS, MEMORY_PACE_S)
    return Measurement(
        f"web service peak resident memory, {CLIENTS} /events clients",
        peak,
        "MB",
        MEMORY_TARGET,
        f"VmHWM of shoectl web while {CLIENTS} clients read a {ROUNDS}-round shoe's events "
        f"({received / 1e6:.0f} MB sent in all)",
    )


def measure_bytes(folder: Path) -> Measurement:
    records = dealt_shoe(folder, seed=2, rounds=BYTES_ROUNDS)
    received, _ = watched_append(folder / "bytes.sqlite", records, 1, TABLE_PACE_S)
    return Measurement(
        f"page bytes per client, an {BYTES_ROUNDS}-round shoe at a table's pace",
        received / 1e6,
        "MB",
        BYTES_TARGET,
        f"one /events client from the shoe's start while its {len(records)} records are "
        f"appended {TABLE_PACE_S * 1000:.0f} ms apart, each its own event: the board whole "
        "once, then what changed in it",
    )


def measure() -> list[Measurement]:
    with tempfile.TemporaryDirectory(prefix="bench-scoreboard-") as name:
        folder = Path(name)
        records = dealt_shoe(folder, seed=1)
        return [
            measure_board(records),
            *measure_latency(folder, records),
            measure_memory(folder, records),
            measure_bytes(folder),
        ]


if __name__ == "__main__":
    print_measurements(measure())
