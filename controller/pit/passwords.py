"""What the pit accepts as a new password; the hashing is controller/secret_hash.py's."""

from __future__ import annotations

MIN_PASSWORD_CHARS = 10


def password_problem(password: str) -> str | None:
    """Why a new password is refused, or None."""
    if len(password) < MIN_PASSWORD_CHARS:
        return f"the password has {len(password)} characters: give at least {MIN_PASSWORD_CHARS}"
    return None
