"""The uplink's two durable positions, in a small JSON file replaced atomically.

It lives beside the journal because both sides of the table PC read it: the
uplink (controller/floor/uplink.py) writes it, and pruning (prune.py, also
run by the service after each shoe) takes the floor's anchor from it.

acked is the last record the broker acknowledged (where publishing goes on);
anchor is the last record the floor verified (where a resend starts). The
file is written to a temporary name, flushed to disk and renamed over the old
one, so after a power cut it holds either the old positions or the new ones.
Losing it costs only duplicates: both positions start again at 0.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from cardshoe.controller.errors import UserError
from cardshoe.controller.journal.atomic_file import replace_file
from cardshoe.drivers.text_input import json_value


@dataclass(frozen=True)
class Position:
    record_id: int = 0
    hash: str | None = None


@dataclass(frozen=True)
class UplinkState:
    acked: Position = Position()
    anchor: Position = Position()


def state_path(state_dir: Path, table_id: str) -> Path:
    return state_dir / f"uplink-{table_id}.json"


def load_state(path: Path) -> UplinkState:
    """The positions written last, or both at 0 for a table never uplinked."""
    try:
        data = json_value(path.read_text(encoding="utf-8"))
        return UplinkState(Position(**data["acked"]), Position(**data["anchor"]))
    except FileNotFoundError:
        return UplinkState()
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UserError(
            f"{path}: the uplink state cannot be read ({exc}): delete it to resend the "
            "whole journal (the floor ignores what it already holds)"
        ) from None


def save_state(path: Path, state: UplinkState) -> None:
    body = json.dumps(
        {
            "acked": {"record_id": state.acked.record_id, "hash": state.acked.hash},
            "anchor": {"record_id": state.anchor.record_id, "hash": state.anchor.hash},
        }
    )
    replace_file(path, body.encode("utf-8"), 0o640)
