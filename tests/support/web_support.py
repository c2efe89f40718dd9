"""The real `shoectl web` in a child process, and readers of what it serves.

WebService starts the installed CLI exactly as the systemd unit does (with
--listen 127.0.0.1:0 the first time, so parallel tests never collide; a
restart reuses the port it got, as a restarted unit would), and reads the
URL from its one start-up line on stderr.
"""

from __future__ import annotations

import http.client
import json
import re
import subprocess
import sys
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any
from urllib.request import urlopen

START_TIMEOUT_S = 30.0
EVENTS_TIMEOUT_S = 30.0
URL_LINE = re.compile(r"serving (http://127\.0\.0\.1:(\d+)/)")


class WebService:
    """One `shoectl web` serving a journal; start() and stop() may repeat (a restart)."""

    def __init__(self, journal: Path, *extra: str) -> None:
        self.journal = journal
        self.extra = extra
        self.port = 0
        self.url = ""
        self._process: subprocess.Popen[str] | None = None

    def command(self) -> list[str]:
        """The command line, on the port of the last start (0 the first time)."""
        return [
            sys.executable,
            "-m",
            "cardshoe.controller.cli",
            "web",
            "--journal",
            str(self.journal),
            "--listen",
            f"127.0.0.1:{self.port}",
            *self.extra,
        ]

    def start(self) -> str:
        process = subprocess.Popen(self.command(), stderr=subprocess.PIPE, text=True)
        self._process = process
        assert process.stderr is not None
        deadline = time.monotonic() + START_TIMEOUT_S
        line = ""
        while time.monotonic() < deadline:
            line = process.stderr.readline()
            found = URL_LINE.search(line)
            if found:
                self.url, self.port = found.group(1), int(found.group(2))
                return self.url
            if not line and process.poll() is not None:
                break
        self.stop()
        raise AssertionError(f"{' '.join(self.command()[3:5])} did not start: {line!r}")

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr is not None:
            process.stderr.close()

    def __enter__(self) -> WebService:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def board(self) -> dict[str, Any]:
        with urlopen(self.url + "board.json", timeout=10) as response:
            return json.loads(response.read())

    def events(
        self, count: int, *, last_event_id: str | None = None, query: str = ""
    ) -> list[dict[str, Any]]:
        """The first `count` record events of /events, as {"id", "event", "data"}."""
        events: list[dict[str, Any]] = []
        deadline = time.monotonic() + EVENTS_TIMEOUT_S
        stream = self.event_stream(last_event_id=last_event_id, query=query)
        try:
            for event in stream:
                events.append(event)
                if len(events) == count:
                    break
                if time.monotonic() > deadline:
                    raise AssertionError(f"{len(events)} of {count} events came: {events[-1:]}")
        finally:
            stream.close()
        return events

    def event_stream(
        self, *, last_event_id: str | None = None, query: str = ""
    ) -> Generator[dict[str, Any], None, None]:
        """The record events of one /events connection as they come, as {"id", "event",
        "data"}; closing the generator closes the connection."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        headers = {"Accept": "text/event-stream"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        connection.request("GET", "/events" + query, headers=headers)
        response = connection.getresponse()
        assert response.status == 200
        current: dict[str, Any] = {}
        try:
            while True:
                line = response.readline().decode("utf-8").rstrip("\r\n")
                if line == "":
                    if "data" in current:
                        current["data"] = json.loads(current["data"])
                        yield current
                    current = {}
                    continue
                field, _, value = line.partition(": ")
                if field in ("id", "event", "data"):
                    current[field] = value
        finally:
            connection.close()


def apply_delta(old: Any, delta: dict[str, Any]) -> Any:
    """What board.js's applyDelta makes of old with a change's delta, written again from
    controller/web/board_delta.py's description, as a second reader of the format."""
    if "v" in delta:
        return delta["v"]
    if "k" in delta:
        return old[: delta["k"]] + delta["a"]
    value = {key: item for key, item in old.items() if key not in delta.get("x", [])}
    value.update({key: apply_delta(old.get(key), change) for key, change in delta["o"].items()})
    return value
