"""Throwaway mosquitto and PostgreSQL servers in a folder, on free 127.0.0.1 ports.

The floor's tests, `make floor-demo` and the benches (bench/floor_servers.py) run the real
Debian servers, never mocks: each instance lives in its own folder, listens
on 127.0.0.1 only and is gone when stopped. PostgreSQL refuses to run as
root, so as root it runs as the postgres user (runuser) in a folder that user
may enter.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from cardshoe.controller.errors import UserError
from cardshoe.controller.floor.schema import connect

MOSQUITTO = Path("/usr/sbin/mosquitto")
POSTGRES_BIN = Path("/usr/lib/postgresql/15/bin")
START_TIMEOUT_S = 30.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for_port(port: int, process: subprocess.Popen[bytes] | None, what: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise UserError(f"{what} exited at start with status {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise UserError(f"{what} did not listen on port {port} within {START_TIMEOUT_S:g} s")


def _require(path: Path) -> None:
    if not path.exists():
        raise UserError(f"{path} is missing: run .ci/install-floor.sh (make floor-demo does)")


@dataclass
class Mosquitto:
    """A mosquitto broker; persistence off unless asked, so a SIGKILL really loses messages."""

    folder: Path
    port: int = field(default_factory=free_port)
    persistence: bool = False
    listener_config: str | None = None
    """mosquitto.conf lines for the listener instead of a plain one on 127.0.0.1:port
    (docs/examples/floor/mosquitto.conf with its paths and port rewritten, for TLS)."""
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def start(self) -> None:
        _require(MOSQUITTO)
        self.folder.mkdir(parents=True, exist_ok=True)
        config = self.folder / "mosquitto.conf"
        listener = self.listener_config or f"listener {self.port} 127.0.0.1\nallow_anonymous true"
        lines = [
            listener,
            f"persistence {'true' if self.persistence else 'false'}",
            f"persistence_location {self.folder}/",
            "max_queued_messages 0",
            "max_inflight_messages 0",
            "log_dest stderr",
            "log_type error",
            "log_type warning",
        ]
        config.write_text("\n".join(lines) + "\n", encoding="utf-8")
        log = (self.folder / "mosquitto.log").open("ab")
        self.process = subprocess.Popen(
            [str(MOSQUITTO), "-c", str(config)], stdout=log, stderr=log, start_new_session=True
        )
        log.close()
        _wait_for_port(self.port, self.process, "mosquitto")

    def kill(self) -> None:
        """SIGKILL: whatever the broker held in memory is gone."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()

    def restart(self) -> None:
        self.kill()
        self.start()


@dataclass
class Postgres:
    """A PostgreSQL 15 cluster with one database, floor, trusted for local connections."""

    folder: Path
    port: int = field(default_factory=free_port)

    @property
    def dsn(self) -> str:
        return self.database_dsn("floor")

    def database_dsn(self, name: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def create_database(self, name: str) -> str:
        """Another empty database in this cluster (one per test); returns its DSN."""

        with connect(self.dsn, autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        return self.database_dsn(name)

    @property
    def _data(self) -> Path:
        return self.folder / "data"

    def server_pid(self) -> int:
        """The running server's process id (postmaster.pid's first line): its backends are its
        children, which is how a benchmark counts the CPU PostgreSQL spent."""
        return int((self._data / "postmaster.pid").read_text(encoding="ascii").split()[0])

    def _as_owner(self, *command: str) -> list[str]:
        if os.geteuid() == 0:
            return ["runuser", "-u", "postgres", "--", *command]
        return list(command)

    def start(self) -> None:
        _require(POSTGRES_BIN / "initdb")
        self.folder.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres", "postgres")
            _let_postgres_through(self.folder)
        if not (self._data / "PG_VERSION").exists():
            self._run(
                str(POSTGRES_BIN / "initdb"),
                "-D",
                str(self._data),
                "-U",
                "postgres",
                "--auth=trust",
                "--no-sync",
            )
            with (self._data / "postgresql.conf").open("a", encoding="utf-8") as conf:
                conf.write("fsync = on\nmax_connections = 100\nshared_buffers = 64MB\n")
            self._pg_ctl_start()
            self._run(
                str(POSTGRES_BIN / "createdb"),
                "-h",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-U",
                "postgres",
                "floor",
            )
            return
        self._pg_ctl_start()

    def _pg_ctl_start(self) -> None:
        options = f"-k {self.folder} -p {self.port} -h 127.0.0.1"
        self._run(
            str(POSTGRES_BIN / "pg_ctl"),
            "-D",
            str(self._data),
            "-o",
            options,
            "-l",
            str(self.folder / "postgres.log"),
            "-w",
            "start",
        )

    def stop(self, mode: str = "fast") -> None:
        if (self._data / "postmaster.pid").exists():
            self._run(str(POSTGRES_BIN / "pg_ctl"), "-D", str(self._data), "-m", mode, "-w", "stop")

    def restart(self) -> None:
        self.stop("immediate")
        self._pg_ctl_start()

    def _run(self, *command: str) -> None:
        done = subprocess.run(
            self._as_owner(*command), capture_output=True, text=True, timeout=120, check=False
        )
        if done.returncode != 0:
            raise UserError(
                f"{Path(command[0]).name} failed: {(done.stderr or done.stdout).strip()}"
            )


def _let_postgres_through(folder: Path) -> None:
    """The postgres user must be able to enter every folder above its own.

    Only folders under the system's temporary folder are opened up (pytest's
    are 0700); anywhere else the caller must choose a folder postgres can reach.
    """
    temporary = Path(tempfile.gettempdir()).resolve()
    for parent in folder.resolve().parents:
        mode = parent.stat().st_mode
        if mode & 0o001:
            continue
        if parent != temporary and temporary not in parent.parents:
            raise UserError(f"{parent}: the postgres user cannot enter it: use a folder in /tmp")
        parent.chmod(mode | 0o001)
