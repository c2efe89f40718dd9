"""The floor's servers: one PostgreSQL cluster per run, a database and a broker per test."""

from __future__ import annotations

import itertools
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.floor_support import Floor

from cardshoe.controller.floor.local_servers import Mosquitto, Postgres
from cardshoe.controller.floor.schema import connect, migrate

_databases = itertools.count(1)


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    """Outside pytest's own temporary tree, which pytest keeps closed (0700) to other users."""
    folder = Path(tempfile.mkdtemp(prefix="cardshoe-floor-pg-"))
    cluster = Postgres(folder)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def empty_dsn(postgres: Postgres) -> str:
    """A database of its own for this test, with no schema yet."""
    return postgres.create_database(f"floor_{next(_databases)}")


@pytest.fixture
def dsn(empty_dsn: str) -> str:
    with connect(empty_dsn) as connection:
        migrate(connection)
    return empty_dsn


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Mosquitto]:
    started = Mosquitto(tmp_path / "mosquitto")
    started.start()
    yield started
    started.stop()


@pytest.fixture
def floor(tmp_path: Path, broker: Mosquitto, dsn: str) -> Iterator[Floor]:
    rig = Floor(tmp_path, broker, dsn)
    yield rig
    rig.stop_all()
