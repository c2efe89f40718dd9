"""What changed between two boards, for the page: a new bead, some road cells, the stats.

The board of a shoe late in the game is tens of kB, and a card changes a few
of its fields; sending it whole after every record cost a screen some 5 MB
a shoe. A delta mirrors the board's shape, and each node says how to make
the new value from the old one:

- {"v": value}: the value whole (a new key, a changed number or text, a
  value that changed type);
- {"o": {key: delta, ...}, "x": [key, ...]}: an object, with the deltas of
  its changed keys and the keys it lost ("x" only when it lost some);
- {"k": n, "a": [items]}: a list, its first n items kept and the items
  after them appended (roads grow at their end: a new bead is one item).

Keys that did not change are left out, so an unchanged board is {"o": {}}.
board.js applies a delta to the board it drew (applyDelta) and checks the
result's record_id against the one the event names.
"""

from __future__ import annotations

from typing import Any


def board_delta(old: Any, new: Any) -> dict[str, Any]:
    """The delta that makes new from old (see the module docstring); a pure function."""
    if isinstance(old, dict) and isinstance(new, dict):
        changed = {
            key: board_delta(old.get(key), value)
            for key, value in new.items()
            if key not in old or old[key] != value
        }
        delta: dict[str, Any] = {"o": changed}
        lost = [key for key in old if key not in new]
        if lost:
            delta["x"] = lost
        return delta
    if isinstance(old, list) and isinstance(new, list):
        kept = 0
        for before, after in zip(old, new, strict=False):
            if before != after:
                break
            kept += 1
        return {"k": kept, "a": new[kept:]}
    return {"v": new}
