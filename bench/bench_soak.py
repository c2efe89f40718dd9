"""The automatic machine's table over a long run: does the service's memory stay flat?

An automatic shuffler-dealer takes every round's cards back (Macau Art. 7.2), so
its shoe ends only when the house ends it (Art. 3.2, shoe.machine_rounds). Issue 28
found the service's memory growing with the shoe's length. This soak runs `shoectl run
--auto-shoe --betting-time 0` as systemd does, its device the simulated shuffler-dealer
(cs-auto) on a real pty dealing as fast as the service takes its cards (machine pace),
and samples every SAMPLE_S the service's VmRSS plus its pricing child's private memory
(bench_service.service_memory_mb) beside the journal's record count.

Twice: with the policy off (machine_rounds = 0, one shoe for the whole run), reporting
the slope of memory against records after a warm-up, by least squares; and with the
policy on (the default 80 rounds, shoe after shoe), reporting how far memory moves
after the warm-up. Targets (issue 28): under 1 MB per 100,000 records, and within 5 MB.
A measurement, not a test: it asserts nothing.

    .venv/bin/python bench/bench_soak.py [--minutes-off 10] [--minutes-on 5]
"""

from __future__ import annotations

import argparse
import signal
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench_service import WAIT_S, NotifyListener, service_memory_mb, spawn_service
from results import Measurement, Target, print_measurements

from cardshoe.controller.config import DEFAULT_MACHINE_ROUNDS
from cardshoe.controller.journal.store import Journal
from cardshoe.firmware_sim.attach_pty import serve_pty
from cardshoe.firmware_sim.devices import create_device

DECKS = 8
SEED = 28
SAMPLE_S = 5.0
WARM_UP_SHARE = 0.2
"""The first part of each run is left out: imports, caches and SQLite's page cache filling."""
MINUTES_OFF = 10.0
"""Issue 28: at least ten minutes with the policy off."""
MINUTES_ON = 5.0
SLOPE_TARGET = Target(1.0, at_least=False, text="< 1 MB per 100,000 records")
SPREAD_TARGET = Target(5.0, at_least=False, text="< 5 MB")


@dataclass(frozen=True)
class Sample:
    records: int
    rss_mb: float


@dataclass(frozen=True)
class Soak:
    samples: list[Sample]
    shoes: int
    """Shoes the journal saw end."""

    @property
    def steady(self) -> list[Sample]:
        return self.samples[int(len(self.samples) * WARM_UP_SHARE) :]

    def slope_mb_per_100k(self) -> float:
        """Least-squares slope of resident memory against records, after the warm-up."""
        steady = self.steady
        mean_x = sum(s.records for s in steady) / len(steady)
        mean_y = sum(s.rss_mb for s in steady) / len(steady)
        across = sum((s.records - mean_x) ** 2 for s in steady)
        if across == 0:
            return 0.0
        together = sum((s.records - mean_x) * (s.rss_mb - mean_y) for s in steady)
        return together / across * 100_000

    def spread_mb(self) -> float:
        memory = [sample.rss_mb for sample in self.steady]
        return max(memory) - min(memory)


class RecordCounter:
    """Counts the journal's records as the service appends them, reading only the new ones."""

    def __init__(self, path: Path) -> None:
        self._journal = Journal.open_readonly(path)
        self.last_id = 0
        self.shoes = 0

    def catch_up(self) -> int:
        for record in self._journal.records(after_id=self.last_id):
            self.last_id = record.id
            self.shoes += record.kind == "shoe.ended"
        return self.last_id

    def close(self) -> None:
        self._journal.close()


def soak(folder: Path, machine_rounds: int, minutes: float) -> Soak:
    """Run the machine table for `minutes` with this policy; its memory and record samples."""
    core = create_device("cs-auto", seed=SEED, decks=DECKS)
    core.dealer.auto = True
    with serve_pty(core) as pty:
        config = folder / "table.toml"
        config.write_text(
            f'table_id = "SOAK"\n[game]\nname = "macau-1"\ndecks = {DECKS}\n'
            f'[device]\nkind = "auto"\nurl = "{pty.link}"\n'
            '[service]\njournal_path = "journal.sqlite"\ncontrol_socket = "control.sock"\n'
            f"[shoe]\nmachine_rounds = {machine_rounds}\n"
        )
        Journal.init(folder / "journal.sqlite", table_id="SOAK")
        listener = NotifyListener(folder / "notify.sock")
        service = spawn_service(config, folder / "notify.sock")
        counter = RecordCounter(folder / "journal.sqlite")
        samples = []
        try:
            if not listener.ready.wait(WAIT_S):
                raise RuntimeError(f"no READY=1 from the service (exit {service.poll()})")
            until = time.monotonic() + minutes * 60
            while time.monotonic() < until and service.poll() is None:
                time.sleep(SAMPLE_S)
                records = counter.catch_up()
                samples.append(Sample(records, service_memory_mb(service.pid, "VmRSS")))
            if service.poll() is not None:
                raise RuntimeError(f"the service stopped during the soak (exit {service.poll()})")
        finally:
            service.send_signal(signal.SIGTERM)
            service.wait(WAIT_S)
            listener.close()
            counter.close()
    return Soak(samples, counter.shoes)


def measure(minutes_off: float = MINUTES_OFF, minutes_on: float = MINUTES_ON) -> list[Measurement]:
    with tempfile.TemporaryDirectory(prefix="cardshoe-soak-") as folder:
        (Path(folder) / "off").mkdir()
        (Path(folder) / "on").mkdir()
        off = soak(Path(folder) / "off", 0, minutes_off)
        on = soak(Path(folder) / "on", DEFAULT_MACHINE_ROUNDS, minutes_on)
    records_off = off.samples[-1].records if off.samples else 0
    records_on = on.samples[-1].records if on.samples else 0
    return [
        Measurement(
            "machine soak, policy off: resident memory slope",
            off.slope_mb_per_100k(),
            "MB/100k records",
            SLOPE_TARGET,
            f"shoectl run --auto-shoe on cs-auto at machine pace, machine_rounds = 0, "
            f"{minutes_off:g} min, {records_off:,} records in {off.shoes} shoe(s); "
            f"least squares after the first {WARM_UP_SHARE:.0%}",
        ),
        Measurement(
            "machine soak, policy on: resident memory spread",
            on.spread_mb(),
            "MB",
            SPREAD_TARGET,
            f"the same with machine_rounds = {DEFAULT_MACHINE_ROUNDS}, {minutes_on:g} min, "
            f"{records_on:,} records in {on.shoes} shoes; max - min after the first "
            f"{WARM_UP_SHARE:.0%}",
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes-off", type=float, default=MINUTES_OFF)
    parser.add_argument("--minutes-on", type=float, default=MINUTES_ON)
    arguments = parser.parse_args()
    print_measurements(measure(arguments.minutes_off, arguments.minutes_on))


if __name__ == "__main__":
    main()
