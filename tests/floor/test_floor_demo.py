"""shoectl floor demo (make floor-demo runs it with 12 tables): a small floor, end to end."""

from __future__ import annotations

import re

from support.shoectl import ShoectlRunner


def test_the_floor_demo_ends_with_every_table_reconciled(shoectl: ShoectlRunner) -> None:
    result = shoectl("floor", "demo", "--tables", "3", "--rounds", "3", timeout=180)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr
    assert "3 tables registered: the floor stores only records each one signs" in result.stdout
    assert re.search(r"(\d+) records journaled at 3 tables, \1 in PostgreSQL", result.stdout)
    assert "0 lost, 0 duplicated" in result.stdout
    finals = [line for line in result.stdout.splitlines() if re.match(r"│ T0[123] ", line)]
    assert len(finals) >= 3
    assert all("verified" in line and "NOT" not in line for line in finals[-3:])
