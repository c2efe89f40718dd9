"""The pace page's hours of day are the floor's clock, summer time changes included."""

from __future__ import annotations

from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import pytest

from cardshoe.controller.pit.pace import LocalDay


def hours_of(day: date, zone: str) -> list[int]:
    local = LocalDay.of(day, ZoneInfo(zone))
    length = (local.end_ns - local.start_ns) // 3_600_000_000_000
    return [local.clock_hour(elapsed) for elapsed in range(length)]


@pytest.mark.parametrize(
    ("day", "zone", "hours"),
    [
        (date(2026, 12, 2), "Asia/Macau", list(range(24))),
        # Europe/London springs forward at 01:00 (no 01:00 hour) and falls back at 02:00
        # (01:00 twice): 23 and 25 real hours on the clock's 24.
        (date(2026, 3, 29), "Europe/London", [0, *range(2, 24)]),
        (date(2026, 10, 25), "Europe/London", [0, 1, 1, *range(2, 24)]),
    ],
)
def test_each_real_hour_of_the_day_lands_on_its_clock_hour(
    day: date, zone: str, hours: list[int]
) -> None:
    assert hours_of(day, zone) == hours


def test_the_day_starts_at_the_floor_s_midnight() -> None:
    """UTC+05:30: the floor's 2 December starts at 18:30 UTC on the 1st."""
    local = LocalDay.of(date(2026, 12, 2), ZoneInfo("Asia/Kolkata"))
    assert datetime.fromtimestamp(local.start_ns / 1e9, UTC) == datetime(
        2026, 12, 1, 18, 30, tzinfo=UTC
    )
    assert local.end_ns - local.start_ns == 24 * 3_600_000_000_000
