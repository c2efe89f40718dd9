"""The people who may sign in at the table's console, and their PINs as salted scrypt hashes.

A PIN is short, so a fast hash of it is guessed in moments by whoever copies the
file: each one is kept as scrypt (memory-hard, so guessing on graphics cards gains
little) of the PIN with its own random salt, never the PIN itself. The file is
JSON that `shoectl console pin set` writes whole and renames into place, so the
service, which reads it at each sign-in, never sees half a file.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from enum import StrEnum
from pathlib import Path

from cardshoe.controller.errors import UserError
from cardshoe.controller.journal.atomic_file import replace_file
from cardshoe.controller.safe_names import SAFE_NAME_PATTERN, SAFE_NAME_RULE
from cardshoe.controller.secret_hash import STANDARD_COST, ScryptCost, hash_secret, secret_matches
from cardshoe.drivers.text_input import json_value

PINS_FORMAT = 2
"""2: each hash in secret_hash's self-describing form (1 kept salt and cost apart)."""
PINS_FILE_MODE = 0o640
"""The service's group reads the hashes; nobody else."""
MIN_PIN = 4
MAX_PIN = 64


class PinRole(StrEnum):
    """The roles a person signs in at the console with."""

    DEALER = "dealer"
    SUPERVISOR = "supervisor"


@dataclass(frozen=True)
class PinEntry:
    """One person: their role, and their PIN's salted hash (secret_hash's stored form)."""

    role: PinRole
    hash: str

    def matches(self, pin: str) -> bool:
        return secret_matches(pin, self.hash)


def make_entry(role: PinRole, pin: str, cost: ScryptCost = STANDARD_COST) -> PinEntry:
    """A new entry for pin, with a fresh salt."""
    check_pin(pin)
    return PinEntry(role, hash_secret(pin, cost))


def check_pin(pin: str) -> None:
    """A PIN is 4-64 characters a keypad or a badge reader types: no spaces or controls."""
    if not MIN_PIN <= len(pin) <= MAX_PIN or not pin.isprintable() or any(c.isspace() for c in pin):
        raise UserError(
            f"a PIN is {MIN_PIN}-{MAX_PIN} characters without spaces (digits, or the code "
            "a badge reader types): choose another"
        )


def check_name(name: str) -> None:
    if not SAFE_NAME_PATTERN.match(name):
        raise UserError(f"the name {name!r} is not usable at the console: use {SAFE_NAME_RULE}")


def read_pins(path: Path) -> dict[str, PinEntry]:
    """The people in the pins file; a missing file holds nobody. UserError names a bad one."""
    try:
        data = json_value(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except PermissionError:
        raise UserError(
            f"{path}: not permitted to read the PINs file: give the service's group read "
            "access (chgrp cardshoe, chmod 640)"
        ) from None
    except (OSError, ValueError) as exc:
        raise UserError(
            f"{path}: not a PINs file ({exc}): write it again with shoectl console pin set"
        ) from None
    try:
        if data["format"] != PINS_FORMAT:
            raise ValueError(f"format {data['format']!r}, this version reads {PINS_FORMAT}")
        return {
            name: PinEntry(PinRole(entry["role"]), str(entry["hash"]))
            for name, entry in data["people"].items()
        }
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise UserError(
            f"{path}: not a PINs file (bad entry: {exc}): write it again with "
            "shoectl console pin set"
        ) from None


def write_pins(path: Path, people: dict[str, PinEntry]) -> None:
    """Write the whole file, replacing the old one at once (never half-written)."""
    data = {
        "format": PINS_FORMAT,
        "people": {name: asdict(entry) for name, entry in sorted(people.items())},
    }
    try:
        replace_file(path, (json.dumps(data, indent=1) + "\n").encode("utf-8"), PINS_FILE_MODE)
    except FileNotFoundError:
        raise UserError(f"{path}: no folder {path.parent}: create it first") from None
    except PermissionError:
        raise UserError(
            f"{path}: not permitted to write in {path.parent}: run as the table's technician"
        ) from None
