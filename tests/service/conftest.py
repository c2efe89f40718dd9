"""Fixtures the service tests share."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def shared_folder() -> Iterator[Path]:
    """A folder other users can reach (pytest's tmp_path is 0700), for clients run as them."""
    folder = Path(tempfile.mkdtemp(prefix="cardshoe-shared-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)
