"""shoectl floor user add and shoectl floor web's refusals: the real CLI, a real PostgreSQL."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from support.pit_support import PASSWORD, add_user
from support.shoectl import ShoectlRunner


def test_a_user_is_stored_with_a_scrypt_hash_only(dsn: str, tmp_path: Path) -> None:
    result = add_user(dsn, tmp_path, "sam", "supervisor")
    assert (result.returncode, result.stdout) == (0, "pit user sam added as supervisor\n")
    with psycopg.connect(dsn) as db:
        row = db.execute("SELECT role, password_hash FROM pit_users WHERE name = 'sam'").fetchone()
        audit = db.execute("SELECT user_name, action, detail FROM pit_audit").fetchall()
    assert row is not None and row[0] == "supervisor"
    assert row[1].startswith("scrypt$16384$8$1$") and PASSWORD not in row[1]
    assert audit == [("sam", "user_added", "role supervisor")]


def test_without_a_password_file_it_prompts_twice(dsn: str) -> None:
    command = [sys.executable, "-m", "cardshoe.controller.cli", "floor", "user", "add", "vic"]
    command += ["--role", "viewer", "--dsn", dsn]
    typed = f"{PASSWORD}\n{PASSWORD}\n"
    result = subprocess.run(command, input=typed, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert PASSWORD not in result.stdout + result.stderr


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--role", "boss"), "Invalid value for '--role'"),
        (("--role", "viewer", "--password-file", "/nonexistent/pw"), "cannot read it"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(
    dsn: str, shoectl: ShoectlRunner, args: tuple[str, ...], says: str
) -> None:
    result = shoectl("floor", "user", "add", "sam", "--dsn", dsn, *args)
    assert result.returncode == 2
    assert says in result.stderr and "Traceback" not in result.stderr


def test_a_database_init_db_has_not_prepared_is_refused(empty_dsn: str, tmp_path: Path) -> None:
    unprepared = add_user(empty_dsn, tmp_path, "sam", "viewer")
    assert unprepared.returncode == 2
    assert unprepared.stderr.strip().endswith("run 'shoectl floor init-db --dsn ...' first")


def test_refusals_name_the_problem(dsn: str, tmp_path: Path) -> None:
    assert add_user(dsn, tmp_path, "sam", "viewer").returncode == 0
    again = add_user(dsn, tmp_path, "sam", "supervisor")
    assert again.returncode == 2 and "exists already" in again.stderr
    bad_name = add_user(dsn, tmp_path, "sam smith", "viewer")
    assert bad_name.returncode == 2 and "is not 1-64 letters" in bad_name.stderr
    short = tmp_path / "short"
    short.write_text("abc\n", encoding="utf-8")
    command = [sys.executable, "-m", "cardshoe.controller.cli", "floor", "user", "add", "kim"]
    command += ["--role", "viewer", "--dsn", dsn, "--password-file", str(short)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "at least 10" in result.stderr
    away = add_user("postgresql://nobody@127.0.0.1:1/floor", tmp_path, "sam", "viewer")
    assert away.returncode == 3 and "cannot reach the floor database" in away.stderr
    for result in (again, bad_name, away):
        assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--listen", "localhost"), "is not HOST:PORT"),
        (("--tls-cert", "/nonexistent.crt"), "give --tls-cert and --tls-key together"),
        (("--tls-cert", "/nonexistent.crt", "--tls-key", "/nonexistent.key"), "no such file"),
        (("--broker", "http://floor:80"), "give mqtt://HOST:PORT"),
        (("--time-zone", "Mars/Olympus_Mons"), "is not a time zone"),
    ],
)
def test_floor_web_refuses_bad_options_before_serving(
    dsn: str, shoectl: ShoectlRunner, args: tuple[str, ...], says: str
) -> None:
    result = shoectl("floor", "web", "--dsn", dsn, *args)
    assert result.returncode == 2
    assert says in result.stderr and "Traceback" not in result.stderr
