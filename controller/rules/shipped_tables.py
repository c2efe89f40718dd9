"""The pricing tables of the games' dealings, built once here and shipped as package data.

Building a dealing's composition table (odds.build_composition_table) takes
about 0.3 s, which `shoectl odds --seen` and every pricing child paid on
their first pricing. The tables depend on nothing but the dealing, so each
game's ships beside this module as pricing-<game>.json.gz; reading one takes
a few milliseconds. tests/rules/test_shipped_tables.py builds every table
again and wants the shipped one equal, so a change to the drawing rules that
is not shipped fails there; this module's main writes them:

    .venv/bin/python -m cardshoe.controller.rules.shipped_tables
"""

from __future__ import annotations

import gzip
import json
import pkgutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from cardshoe.controller.rules.drawing import Dealing
from cardshoe.controller.rules.games import GAME_NAMES, get_game

TableData = tuple[
    int,
    tuple[tuple[int, ...], ...],
    tuple[tuple[tuple[int, int, int], tuple[int, ...], tuple[int, ...]], ...],
]
"""odds.PricingTable's fields: most, factors, leaves."""
Row = TypeVar("Row")


def file_name(game_name: str) -> str:
    return f"pricing-{game_name}.json.gz"


def game_of(dealing: Dealing) -> str | None:
    """The game whose dealing this is, so whose table ships; None for any other dealing."""
    return next((name for name in GAME_NAMES if get_game(name).dealing == dealing), None)


def read_table(dealing: Dealing) -> TableData | None:
    """The shipped table of `dealing`, or None when none ships for it."""
    name = game_of(dealing)
    if name is None:
        return None
    # pkgutil, not importlib.resources: the pricing child reads this table and nothing else
    # from the package's data, and importlib.resources (zipfile, tempfile, shutil...) cost it
    # ~1.5 MB of private memory (bench/bench_service.py); both read through the loader.
    try:
        shipped = pkgutil.get_data(__package__, file_name(name))
    except FileNotFoundError:
        return None
    if shipped is None:
        return None
    most, factors, leaves = json.loads(gzip.decompress(shipped))
    return (
        most,
        tuple(_drained(factors, tuple)),
        tuple(
            _drained(
                leaves,
                lambda leaf: ((leaf[0][0], leaf[0][1], leaf[0][2]), tuple(leaf[1]), tuple(leaf[2])),
            )
        ),
    )


def _drained(rows: list[Any], convert: Callable[[Any], Row]) -> Iterator[Row]:
    """convert(row) for each row in order, each list row freed once converted: the decoded
    lists and the tuples made of them are never all held at once. Reading the table peaked
    at 3.9 MB of Python objects, now 3.0 MB; a process keeps what it freed, so the pricing
    child holds ~0.5 MB less for its whole run (bench/bench_service.py)."""
    rows.reverse()
    while rows:
        yield convert(rows.pop())


def encode_table(data: TableData) -> bytes:
    """A table as shipped: gzip'd compact JSON, its bytes the same for the same table."""
    text = json.dumps(data, separators=(",", ":"))
    return gzip.compress(text.encode(), mtime=0)


def write_tables(folder: Path) -> list[Path]:
    """Build every game's table and write it into `folder` (this package's source)."""
    # Late: an import cycle (odds reads the shipped tables through read_table, here).
    from cardshoe.controller.rules.odds import build_composition_table

    written = []
    for name in GAME_NAMES:
        table = build_composition_table(get_game(name).dealing)
        path = folder / file_name(name)
        path.write_bytes(encode_table((table.most, table.factors, table.leaves)))
        written.append(path)
    return written


if __name__ == "__main__":
    for path in write_tables(Path(__file__).parent):
        print(path)
