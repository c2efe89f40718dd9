"""The type of the `shoectl` fixture (tests/conftest.py), importable by any test module."""

from __future__ import annotations

import subprocess
from collections.abc import Callable

ShoectlRunner = Callable[..., subprocess.CompletedProcess[str]]


def one_error_line(stderr: str) -> str:
    """The one line a refused shoectl prints: its error, never a traceback."""
    (line,) = stderr.splitlines()
    assert line.startswith("shoectl: error: ") and "Traceback" not in line
    return line
