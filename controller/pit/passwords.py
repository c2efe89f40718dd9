"""Password hashes for the pit's users: the stdlib's memory-hard scrypt, self-describing.

A hash is stored as scrypt$N$r$p$salt$key (salt and key in hex), so the cost
can be raised later without breaking the hashes already stored.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from functools import cache

SCRYPT_N = 2**14
SCRYPT_R = 8
SCRYPT_P = 1
"""16 MiB of memory a guess (128 * N * r bytes): OWASP's minimum for scrypt."""
KEY_BYTES = 32
MIN_PASSWORD_CHARS = 10


def hash_password(password: str) -> str:
    salt = secrets.token_bytes(16)
    key = _derive(password, salt, SCRYPT_N, SCRYPT_R, SCRYPT_P)
    return f"scrypt${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${salt.hex()}${key.hex()}"


def password_matches(password: str, stored: str) -> bool:
    """Whether the password gives the stored hash; a malformed hash matches nothing."""
    try:
        scheme, n, r, p, salt, key = stored.split("$")
        if scheme != "scrypt":
            return False
        derived = _derive(password, bytes.fromhex(salt), int(n), int(r), int(p))
    except ValueError:
        return False
    return hmac.compare_digest(derived, bytes.fromhex(key))


@cache
def decoy_hash() -> str:
    """A hash no password is known for, checked when a login names no user: the answer then
    takes as long as a wrong password's, so timing does not tell which user names exist."""
    return hash_password(secrets.token_urlsafe(32))


def password_problem(password: str) -> str | None:
    """Why a new password is refused, or None."""
    if len(password) < MIN_PASSWORD_CHARS:
        return f"the password has {len(password)} characters: give at least {MIN_PASSWORD_CHARS}"
    return None


def _derive(password: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(
        password.encode("utf-8"), salt=salt, n=n, r=r, p=p, maxmem=256 * n * r, dklen=KEY_BYTES
    )
