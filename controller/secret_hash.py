"""Salted scrypt hashes of the secrets people type: the pit's passwords and the console's PINs.

A copied database or PINs file must not give the secrets back: each is kept as
scrypt (memory-hard, so guessing on graphics cards gains little) with its own
random salt. A hash is stored as scrypt$N$r$p$salt$key (salt and key in hex),
so the cost can be raised later without breaking the hashes already stored.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from functools import cache

SALT_BYTES = 16
KEY_BYTES = 32


@dataclass(frozen=True)
class ScryptCost:
    """scrypt's work factors: n=2**14, r=8 takes 16 MiB (OWASP's minimum) and ~50 ms a try."""

    n: int = 2**14
    r: int = 8
    p: int = 1

    @property
    def memory(self) -> int:
        return 128 * self.r * self.n * self.p + 1024 * 1024


STANDARD_COST = ScryptCost()


def hash_secret(secret: str, cost: ScryptCost = STANDARD_COST) -> str:
    """The stored form of secret, with a fresh salt."""
    salt = secrets.token_bytes(SALT_BYTES)
    key = _derive(secret, salt, cost)
    return f"scrypt${cost.n}${cost.r}${cost.p}${salt.hex()}${key.hex()}"


def secret_matches(secret: str, stored: str) -> bool:
    """Whether secret gives the stored hash; a malformed hash matches nothing."""
    try:
        scheme, n, r, p, salt, key = stored.split("$")
        if scheme != "scrypt":
            return False
        derived = _derive(secret, bytes.fromhex(salt), ScryptCost(int(n), int(r), int(p)))
    except ValueError:
        return False
    return hmac.compare_digest(derived, bytes.fromhex(key))


@cache
def decoy_hash() -> str:
    """A hash no secret is known for, checked when a login names nobody: the answer then
    takes as long as a wrong secret's, so timing does not tell which names exist."""
    return hash_secret(secrets.token_urlsafe(32))


def _derive(secret: str, salt: bytes, cost: ScryptCost) -> bytes:
    return hashlib.scrypt(
        secret.encode("utf-8"),
        salt=salt,
        n=cost.n,
        r=cost.r,
        p=cost.p,
        maxmem=cost.memory,
        dklen=KEY_BYTES,
    )
