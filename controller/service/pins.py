"""The people who may sign in at the table's console, and their PINs as salted scrypt hashes.

A PIN is short, so a fast hash of it is guessed in moments by whoever copies the
file: each one is kept as scrypt (memory-hard, so guessing on graphics cards gains
little) of the PIN with its own random salt, never the PIN itself. The file is
JSON that `shoectl console pin set` writes whole and renames into place, so the
service, which reads it at each sign-in, never sees half a file.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import tempfile
from dataclasses import asdict, dataclass
from enum import StrEnum
from pathlib import Path

from cardshoe.controller.config import SAFE_NAME_PATTERN, SAFE_NAME_RULE
from cardshoe.controller.errors import UserError

PINS_FORMAT = 1
PINS_FILE_MODE = 0o640
"""The service's group reads the hashes; nobody else."""
MIN_PIN = 4
MAX_PIN = 64
SALT_BYTES = 16
HASH_BYTES = 32


@dataclass(frozen=True)
class ScryptCost:
    """scrypt's work factors: n=2**14, r=8 takes 16 MiB and about 50 ms per PIN tried."""

    n: int = 2**14
    r: int = 8
    p: int = 1

    @property
    def memory(self) -> int:
        return 128 * self.r * self.n * self.p + 1024 * 1024


class PinRole(StrEnum):
    """The roles a person signs in at the console with."""

    DEALER = "dealer"
    SUPERVISOR = "supervisor"


@dataclass(frozen=True)
class PinEntry:
    """One person: their role, and their PIN's salt and hash (hex) with the cost used."""

    role: PinRole
    salt: str
    hash: str
    n: int
    r: int
    p: int

    def matches(self, pin: str) -> bool:
        cost = ScryptCost(self.n, self.r, self.p)
        tried = _scrypt(pin, bytes.fromhex(self.salt), cost)
        return hmac.compare_digest(tried.hex(), self.hash)


def make_entry(role: PinRole, pin: str, cost: ScryptCost | None = None) -> PinEntry:
    """A new entry for pin, with a fresh salt."""
    check_pin(pin)
    cost = cost or ScryptCost()
    salt = secrets.token_bytes(SALT_BYTES)
    digest = _scrypt(pin, salt, cost)
    return PinEntry(role, salt.hex(), digest.hex(), cost.n, cost.r, cost.p)


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


def _scrypt(pin: str, salt: bytes, cost: ScryptCost) -> bytes:
    return hashlib.scrypt(
        pin.encode("utf-8"),
        salt=salt,
        n=cost.n,
        r=cost.r,
        p=cost.p,
        maxmem=cost.memory,
        dklen=HASH_BYTES,
    )


def read_pins(path: Path) -> dict[str, PinEntry]:
    """The people in the pins file; a missing file holds nobody. UserError names a bad one."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
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
            name: PinEntry(
                PinRole(entry["role"]),
                str(entry["salt"]),
                str(entry["hash"]),
                int(entry["n"]),
                int(entry["r"]),
                int(entry["p"]),
            )
            for name, entry in data["people"].items()
        }
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise UserError(
            f"{path}: not a PINs file (bad entry: {exc}): write it again with "
            "shoectl console pin set"
        ) from None


def write_pins(path: Path, people: dict[str, PinEntry]) -> None:
    """Write the whole file beside itself, then rename it into place (never half-written)."""
    data = {
        "format": PINS_FORMAT,
        "people": {name: asdict(entry) for name, entry in sorted(people.items())},
    }
    try:
        descriptor, temporary = tempfile.mkstemp(prefix=".pins-", dir=path.parent)
    except FileNotFoundError:
        raise UserError(f"{path}: no folder {path.parent}: create it first") from None
    except PermissionError:
        raise UserError(
            f"{path}: not permitted to write in {path.parent}: run as the table's technician"
        ) from None
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as output:
            json.dump(data, output, indent=1)
            output.write("\n")
            output.flush()
            os.fsync(output.fileno())
        os.chmod(temporary, PINS_FILE_MODE)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
