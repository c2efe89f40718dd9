"""Every bench script still imports: `make bench` is not part of `make test`, so a name that a
carve moved would otherwise surface only when the next bench run stops half-way (it did once)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


@pytest.mark.parametrize("name", sorted(path.stem for path in BENCH.glob("*.py")))
def test_the_bench_script_imports(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(BENCH))
    module = importlib.import_module(name)
    assert module.__file__ is not None and Path(module.__file__).parent == BENCH
    sys.modules.pop(name, None)
