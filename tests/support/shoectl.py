"""The type of the `shoectl` fixture (tests/conftest.py), importable by any test module."""

from __future__ import annotations

import subprocess
from collections.abc import Callable

ShoectlRunner = Callable[..., subprocess.CompletedProcess[str]]
