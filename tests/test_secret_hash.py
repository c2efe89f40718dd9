"""Salted scrypt hashes of passwords and PINs, and the decoy an unknown name is checked against."""

from __future__ import annotations

from cardshoe.controller.secret_hash import (
    ScryptCost,
    decoy_hash,
    hash_secret,
    secret_matches,
)


def cost(stored: str) -> tuple[str, ...]:
    """The scheme and scrypt parameters of a stored hash: what a check of it costs."""
    return tuple(stored.split("$")[:4])


def test_a_stored_hash_matches_its_secret_only_and_is_salted() -> None:
    stored = hash_secret("correct horse battery")
    assert secret_matches("correct horse battery", stored)
    assert not secret_matches("correct horse batterY", stored)
    assert not secret_matches("correct horse battery", "scrypt$nonsense")
    assert "correct horse battery" not in stored
    assert hash_secret("2468") != hash_secret("2468"), "each hash has its own salt"


def test_a_hash_keeps_its_cost_so_a_cheaper_or_dearer_one_still_checks() -> None:
    cheap = hash_secret("2468", ScryptCost(n=2**10))
    assert cost(cheap) == ("scrypt", str(2**10), "8", "1")
    assert secret_matches("2468", cheap)


def test_the_decoy_costs_what_a_real_hash_costs_and_matches_no_secret() -> None:
    """An unknown name is checked against the decoy, so it answers as slowly as a wrong
    password and timing does not tell which names exist."""
    decoy = decoy_hash()
    assert decoy == decoy_hash(), "made once per process"
    assert cost(decoy) == cost(hash_secret("any password at all"))
    assert not any(secret_matches(guess, decoy) for guess in ("", "password", decoy))
