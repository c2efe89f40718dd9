"""Start-up and the journal's readers on a table's 500-shoe journal against a 1-shoe one.

A table's journal grows by some 1,150 records a shoe and is kept for months,
so what a start or a technician's command reads must not grow with it. One
real shoe is dealt by `shoectl demo` (the simulator, the real session); a
journal of SHOES shoes is then built by appending that shoe's records again
and again through the journal's own writer (a correct hash chain, a new shoe
id and later device sequence numbers for each copy), one transaction a shoe.
Each command runs as a whole process, as a technician or systemd runs it,
RUNS times against each journal in turn; the figures are medians, and each
row lists its runs at 500 shoes: the first start after the build walks every
record the build wrote (no check has run since), as a start after a service
that never ended a shoe would.

Targets (issue 22): `shoectl run` to READY=1, `shoectl odds --journal` and
`shoectl roads` at 500 shoes within 1.3x, 1.5x and 1.3x of 1 shoe, and
`shoectl journal verify` at least 200,000 records/s. A measurement, not a
test: it asserts nothing.

    .venv/bin/python bench/bench_journal_growth.py [--shoes 500]
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_service import WAIT_S, NotifyListener, memory_on_journal, spawn_service
from results import Measurement, Target, print_measurements

from cardshoe.controller.cli.demo_wiring import continue_from_journal
from cardshoe.controller.config import load_config
from cardshoe.controller.journal.records import Record
from cardshoe.controller.journal.store import Journal
from cardshoe.firmware_sim.attach_pty import serve_pty
from cardshoe.firmware_sim.devices import create_device

SHOES = 500
RUNS = 3
SEED = 7
DECKS = 8
SHOECTL = [sys.executable, "-m", "cardshoe.controller.cli"]


def deal_demo_shoe(folder: Path) -> list[Record]:
    """The records of one whole 8-deck Punto Banco shoe dealt by `shoectl demo`."""
    path = folder / "demo.sqlite"
    subprocess.run(
        [*SHOECTL, "demo", "--journal", str(path), "--seed", str(SEED), "--transport", "inproc"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    with Journal.open_readonly(path) as journal:
        return list(journal.records())


def build_journal(path: Path, shoe: list[Record], shoes: int) -> int:
    """A journal of `shoes` copies of `shoe`, written by Journal itself; its record count."""
    table_id = shoe[0].table_id
    shoe_ids = {record.shoe_id for record in shoe if record.shoe_id is not None}
    (shoe_id,) = shoe_ids
    seq_span = max(record.device_seq or 0 for record in shoe)
    Journal.init(path, table_id=table_id)
    with Journal.open(path, table_id=table_id) as journal:
        for copy in range(shoes):
            new_id = f"{shoe_id}-{copy:04d}"
            with journal.transaction() as transaction:
                for record in shoe:
                    payload = json.loads(json.dumps(record.payload).replace(shoe_id, new_id))
                    transaction.append(
                        record.kind,
                        payload,
                        shoe_id=None if record.shoe_id is None else new_id,
                        round_no=record.round_no,
                        device_serial=record.device_serial,
                        device_seq=None
                        if record.device_seq is None
                        else record.device_seq + copy * seq_span,
                    )
    return len(shoe) * shoes


def seconds_to_ready(folder: Path, journal: Path) -> float:
    """`shoectl run` on `journal` with a simulated shoe going on from it: spawn to READY=1."""
    config_path = folder / "table.toml"
    with Journal.open_readonly(journal) as reader:
        table_id = reader.table_id
    core = create_device("cs-1", seed=SEED, decks=DECKS)
    core.dealer.auto = True
    notify = folder / "notify.sock"
    notify.unlink(missing_ok=True)
    with serve_pty(core) as pty:
        config_path.write_text(
            f'table_id = "{table_id}"\n[game]\nname = "punto-banco"\ndecks = {DECKS}\n'
            f'[device]\nkind = "shoe"\nurl = "{pty.link}"\n'
            f'[service]\njournal_path = "{journal}"\ncontrol_socket = "control.sock"\n'
        )
        with Journal.open(journal, table_id=table_id) as writer:
            continue_from_journal(core, writer, load_config(config_path))
        listener = NotifyListener(notify)
        started = time.perf_counter()
        service = spawn_service(config_path, notify)
        try:
            if not listener.ready.wait(WAIT_S):
                raise RuntimeError(f"no READY=1 from the service (exit {service.poll()})")
            return listener.ready_at - started
        finally:
            service.send_signal(signal.SIGTERM)
            service.wait(WAIT_S)
            listener.close()


def seconds_of(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def in_turn(small: Path, large: Path, action) -> tuple[list[float], list[float]]:
    """Seconds of action(journal) on each journal, RUNS times, taken in turn."""
    timings: dict[Path, list[float]] = {small: [], large: []}
    for _ in range(RUNS):
        for journal in (small, large):
            timings[journal].append(action(journal))
    return timings[small], timings[large]


def ratio_row(
    name: str, timings: tuple[list[float], list[float]], limit: float, shoes: int
) -> Measurement:
    small, large = (statistics.median(runs) for runs in timings)
    return Measurement(
        f"{name}, {shoes} shoes over 1 shoe",
        large / small,
        "×",
        Target(limit, at_least=False, text=f"≤ {limit:g}×"),
        f"medians of {RUNS} whole processes each, in turn: {large:.3f} s against {small:.3f} s; "
        f"runs at {shoes} shoes: {', '.join(f'{run:.2f}' for run in timings[1])} s",
    )


def measure(shoes: int = SHOES) -> list[Measurement]:
    with tempfile.TemporaryDirectory(prefix="cardshoe-bench-") as name:
        folder = Path(name)
        shoe = deal_demo_shoe(folder)
        small, large = folder / "one-shoe.sqlite", folder / f"{shoes}-shoes.sqlite"
        build_journal(small, shoe, 1)
        started = time.perf_counter()
        records = build_journal(large, shoe, shoes)
        built = time.perf_counter() - started
        ready = in_turn(small, large, lambda journal: seconds_to_ready(folder, journal))
        odds = in_turn(
            small, large, lambda journal: seconds_of([*SHOECTL, "odds", "--journal", str(journal)])
        )
        roads = in_turn(small, large, lambda journal: seconds_of([*SHOECTL, "roads", str(journal)]))
        verify = statistics.median(
            seconds_of([*SHOECTL, "journal", "verify", str(large)]) for _ in range(RUNS)
        )
        memory = memory_on_journal(large)
    return [
        ratio_row("shoectl run to READY=1", ready, 1.3, shoes),
        ratio_row("shoectl odds --journal", odds, 1.5, shoes),
        ratio_row("shoectl roads", roads, 1.3, shoes),
        Measurement(
            f"shoectl journal verify, {shoes} shoes",
            records / verify,
            "records/s",
            Target(200_000, at_least=True, text="≥ 200,000 records/s"),
            f"{records:,} records, median of {RUNS} whole processes ({verify:.2f} s); "
            f"the journal built through Journal's writer in {built:.1f} s",
        ),
        *memory,
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shoes", type=int, default=SHOES, help="shoes in the large journal")
    print_measurements(measure(parser.parse_args().shoes))


if __name__ == "__main__":
    main()
