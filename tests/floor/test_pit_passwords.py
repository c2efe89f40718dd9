"""The pit's password hashes, and the decoy a login for an unknown name is checked against."""

from __future__ import annotations

from cardshoe.controller.pit.passwords import decoy_hash, hash_password, password_matches


def cost(stored: str) -> tuple[str, ...]:
    """The scheme and scrypt parameters of a stored hash: what a check of it costs."""
    return tuple(stored.split("$")[:4])


def test_a_stored_hash_matches_its_password_only() -> None:
    stored = hash_password("correct horse battery")
    assert password_matches("correct horse battery", stored)
    assert not password_matches("correct horse batterY", stored)
    assert not password_matches("correct horse battery", "scrypt$nonsense")


def test_the_decoy_costs_what_a_real_hash_costs_and_matches_no_password() -> None:
    """An unknown user name is checked against the decoy, so it answers as slowly as a wrong
    password and timing does not tell which names exist."""
    decoy = decoy_hash()
    assert decoy == decoy_hash(), "made once per process"
    assert cost(decoy) == cost(hash_password("any password at all"))
    assert not any(password_matches(guess, decoy) for guess in ("", "password", decoy))
