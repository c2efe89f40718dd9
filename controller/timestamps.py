"""The one way a moment is written for people and exports: ISO 8601 UTC to the microsecond."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_timestamp(moment: datetime | None = None) -> str:
    """E.g. 2025-01-31T20:15:02.123456Z: journal exports and service and monitor lines alike."""
    moment = moment or datetime.now(UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
