"""The throwaway mosquitto and PostgreSQL a floor benchmark runs against (bench_floor, bench_pit).

Both servers start in a fresh temporary folder (controller/floor/local_servers.py)
and stop on the way out, whatever happened; the folder is removed after a
run that succeeded and kept, with its servers' and processes' logs, after
one that failed, and the bench says where.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from cardshoe.controller.floor.local_servers import Mosquitto, Postgres


@dataclass(frozen=True)
class FloorServers:
    folder: Path
    """The run's folder: the servers' data, and whatever logs the bench writes there."""
    broker: Mosquitto
    postgres: Postgres


@contextmanager
def floor_servers(bench: str) -> Iterator[FloorServers]:
    folder = Path(tempfile.mkdtemp(prefix=f"cardshoe-{bench.replace('_', '-')}-"))
    servers = FloorServers(folder, Mosquitto(folder / "mosquitto"), Postgres(folder / "postgres"))
    try:
        with ExitStack() as stack:
            servers.broker.start()
            stack.callback(servers.broker.stop)
            servers.postgres.start()
            stack.callback(servers.postgres.stop)
            yield servers
    except BaseException:
        print(f"{bench} failed: the servers' and processes' logs are kept in {folder}")
        raise
    shutil.rmtree(folder, ignore_errors=True)
