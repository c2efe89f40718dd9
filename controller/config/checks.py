"""How every section of the configuration refuses a value: ConfigError and its wording.

Separate so each section's module checks its values with the same helpers and the same words,
and a person reading two messages about two keys sees one style.
"""

from __future__ import annotations

import json
from typing import Any

from cardshoe.controller.errors import UserError
from cardshoe.controller.one_line import escape_line_breaks


class ConfigError(UserError):
    """A configuration value that cannot be used; the message names the key."""


def check_range(key: str, value: int, low: int, high: int, why: str = "") -> None:
    if not low <= value <= high:
        reason = f" ({why})" if why else ""
        raise ConfigError(f"{key} = {value} is out of range: use {low}-{high}{reason}")


def check_option(key: str, value: str | None, allowed: tuple[str, ...], game: str) -> None:
    if value is not None and value not in allowed:
        raise ConfigError(
            f"{key} = {show(value)} is not an option of {game}: use {one_of(allowed)}"
        )


def show(value: Any) -> str:
    """A value as TOML would spell it, on one line: control characters and line separators
    escaped, and any other character (a game name in Chinese) as typed."""
    if not isinstance(value, str | int | float | list):
        return repr(value)
    return escape_line_breaks(json.dumps(value, default=str, ensure_ascii=False))


def one_of(allowed: list[str] | tuple[str, ...]) -> str:
    return " | ".join(f'"{item}"' for item in allowed)
