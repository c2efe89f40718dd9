"""The real `shoectl floor web` in a child process, its users, and a client of its JSON API.

PitService starts the installed CLI as the systemd unit does (on port 0, so
parallel tests never collide) and reads the URL from its start-up line.
PitClient speaks HTTP to it with a cookie jar, as a browser or another
system would, and hands back the status and the JSON of every answer.
"""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psycopg
from psycopg.types.json import Jsonb

from cardshoe.controller.journal.store import Journal
from cardshoe.controller.record_kinds import SHOE_STARTED
from support.web_support import WebService

PASSWORD = "correct horse battery"
"""Every test user's password."""


def add_user(dsn: str, folder: Path, name: str, role: str) -> subprocess.CompletedProcess[str]:
    """`shoectl floor user add` with a password file, as an administrator would run it."""
    secret = folder / f"{name}.password"
    secret.write_text(PASSWORD + "\n", encoding="utf-8")
    command = [sys.executable, "-m", "cardshoe.controller.cli", "floor", "user", "add", name]
    command += ["--role", role, "--dsn", dsn, "--password-file", str(secret)]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


class PitService(WebService):
    """One `shoectl floor web` on a floor database (and its broker, when given): started,
    stopped and its URL read as the scoreboard's WebService does."""

    def __init__(self, dsn: str, *extra: str) -> None:
        super().__init__(Path(), *extra)
        self.dsn = dsn

    def command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "cardshoe.controller.cli",
            "floor",
            "web",
            "--dsn",
            self.dsn,
            "--listen",
            f"127.0.0.1:{self.port}",
            *self.extra,
        ]


class PitClient:
    """HTTP to the pit with a session cookie, the way the page's script talks to it."""

    def __init__(self, url: str, *, forwarded_for: str | None = None) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.forwarded_for = forwarded_for
        """The client a reverse proxy would name in X-Forwarded-For, if this is one."""
        self.cookie: str | None = None
        self.csrf_token: str | None = None
        self.headers: dict[str, str] = {}
        """The last answer's headers (lower-case names)."""

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        csrf: bool = True,
        raw: bytes | None = None,
        content_type: str = "application/json",
    ) -> tuple[int, Any]:
        headers = {}
        if self.forwarded_for is not None:
            headers["X-Forwarded-For"] = self.forwarded_for
        if self.cookie is not None:
            headers["Cookie"] = self.cookie
        if csrf and self.csrf_token is not None:
            headers["X-CSRF-Token"] = self.csrf_token
        data = raw if raw is not None else None if body is None else json.dumps(body).encode()
        if data is not None:
            headers["Content-Type"] = content_type
        connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
        try:
            connection.request(method, path, body=data, headers=headers)
            response = connection.getresponse()
            text = response.read()
            self.headers = {name.lower(): value for name, value in response.getheaders()}
            cookie = response.getheader("set-cookie")
            if cookie is not None:
                self.cookie = cookie.split(";")[0]
            assert response.getheader("content-type", "").startswith("application/json"), text
            return response.status, json.loads(text)
        finally:
            connection.close()

    def get(self, path: str) -> tuple[int, Any]:
        return self.request("GET", path)

    def login(self, user: str, password: str = PASSWORD) -> tuple[int, Any]:
        status, answer = self.request("POST", "/api/login", {"user": user, "password": password})
        if status == 200:
            self.csrf_token = answer["csrf_token"]
        return status, answer


def deal_table(
    folder: Path, table_id: str, game: str, rounds: int, *, tie_bets: str = "", seed: int = 0
) -> Path:
    """A table's journal with one short shoe dealt by the real table software (the shuffle
    of seed, the game's first tie option unless tie_bets names one); its path."""
    journal = folder / f"{table_id}.sqlite"
    config = folder / f"{table_id}.toml"
    tie_option = f'tie_bets = "{tie_bets}"\n' if tie_bets else ""
    config.write_text(
        f'table_id = "{table_id}"\n[game]\nname = "{game}"\n{tie_option}[device]\n'
        f'kind = "shoe"\n[service]\njournal_path = "{journal}"\n',
        encoding="utf-8",
    )
    command = [sys.executable, "-m", "cardshoe.controller.cli", "demo", "--config", str(config)]
    command += ["--transport", "inproc", "--rounds", str(rounds), "--journal", str(journal)]
    command += ["--seed", str(seed)]
    subprocess.run(command, check=True, capture_output=True, timeout=120)
    return journal


def raise_alarm(journal: Path, kind: str, detail: str) -> int:
    """An alarm record appended by the journal's real writer, as the table service does."""
    with Journal.open_readonly(journal) as opened:
        table_id = opened.table_id
    with Journal.open(journal, table_id=table_id) as opened, opened.transaction() as transaction:
        return transaction.append(
            "alarm",
            {"kind": kind, "detail": detail},
            shoe_id=None,
            round_no=None,
            device_serial=None,
        )


def many_shoes(dsn: str, table_id: str, shoes: int, folder: Path) -> dict[str, int]:
    """`shoes` shoes of ten records each straight into the floor, verified, as a table of a
    long history: each a shoe.started as a dealt journal writes it and nine session records,
    which a board passes over. The record id of each shoe's start, by shoe id."""
    journal = deal_table(folder, f"{table_id}-template", "punto-banco", rounds=1)
    with Journal.open_readonly(journal) as opened:
        started = next(opened.records(kinds=[SHOE_STARTED])).payload
    with psycopg.connect(dsn, autocommit=True) as connection:
        connection.execute(
            "INSERT INTO journal_records (table_id, record_id, time_ns, kind, shoe_id, round_no, "
            "payload, hash, prev_hash) SELECT %(table)s, n, n, "
            "CASE WHEN n %% 10 = 1 THEN 'shoe.started' ELSE 'session.started' END, "
            "'S' || ((n - 1) / 10 + 1), NULL, "
            "jsonb_set(%(started)s, '{shoe_id}', to_jsonb('S' || ((n - 1) / 10 + 1))), "
            "'h', 'p' FROM generate_series(1, %(last)s) AS n",
            {"table": table_id, "last": 10 * shoes, "started": Jsonb(started)},
        )
        connection.execute(
            "INSERT INTO floor_tables (table_id, site, contiguous_id, last_record_id) "
            "VALUES (%(table)s, 'casino-1', %(last)s, %(last)s)",
            {"table": table_id, "last": 10 * shoes},
        )
    return {f"S{shoe}": 10 * (shoe - 1) + 1 for shoe in range(1, shoes + 1)}
