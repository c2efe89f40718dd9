"""Reading `shoectl demo --json`: one JSON object per line, picked out by event."""

from __future__ import annotations

import json
from typing import Any

from support.shoectl import ShoectlRunner

Lines = list[dict[str, Any]]


def demo_json(shoectl: ShoectlRunner, *options: str) -> Lines:
    done = shoectl("demo", "--json", *options)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def of(lines: Lines, event: str) -> Lines:
    return [line for line in lines if line["event"] == event]


def only(lines: Lines, event: str) -> dict[str, Any]:
    (line,) = of(lines, event)
    return line
