"""The floor's software authentication round trip through real mosquitto and PostgreSQL:
a fresh seed to the table's real uplink, its answer checked against the approved release."""

from __future__ import annotations

import json
import queue
from pathlib import Path

import psycopg
import pytest
from support.floor_support import FLOOR_WAIT_S, Floor, floor_alarms, wait_for_floor
from support.installed_package import (
    installed_tree,
    lab_digest,
    lab_manifest,
    release_wheel,
    tree_files,
)
from support.shoectl import ShoectlRunner

from cardshoe.controller.floor.broker import BrokerSettings, new_client
from cardshoe.controller.floor.messages import AuthenticateRequest, AuthenticationAnswer
from cardshoe.controller.floor.topics import Leaf, table_topic
from cardshoe.controller.journal.store import Journal

TABLE = "T5"


def table_journal(folder: Path) -> Path:
    """A table's journal holding one record, so the floor knows the table."""
    path = folder / f"{TABLE}.sqlite"
    with (
        Journal.open(path, table_id=TABLE, create=True) as journal,
        journal.transaction() as transaction,
    ):
        transaction.append("test.tick", {"n": 1}, shoe_id=None, round_no=None, device_serial=None)
    return path


def checks(dsn: str) -> list[tuple[str, str, str | None]]:
    with psycopg.connect(dsn) as connection:
        rows = connection.execute(
            "SELECT table_id, verdict, digest FROM software_checks ORDER BY id"
        ).fetchall()
    return [tuple(row) for row in rows]


@pytest.fixture
def table_on_the_floor(tmp_path: Path, floor: Floor) -> Floor:
    journal = table_journal(tmp_path)
    floor.ingest()
    floor.uplink(journal)
    wait_for_floor(floor, [journal])
    return floor


def test_a_fresh_seed_is_answered_and_verified_and_a_changed_release_is_an_alarm(
    tmp_path: Path, table_on_the_floor: Floor, shoectl: ShoectlRunner
) -> None:
    floor = table_on_the_floor
    files = tree_files(installed_tree())
    manifest = lab_manifest(files)
    genuine = release_wheel(tmp_path / "cardshoe-0.1.0-py3-none-any.whl", files)
    approved = shoectl(
        "floor", "approve", "--version", "0.1.0", "--wheel", str(genuine), "--dsn", floor.dsn
    )
    assert approved.returncode == 0, approved.stderr
    assert approved.stdout.startswith(f"approved cardshoe 0.1.0: {len(files)} files")
    reference = shoectl(
        "floor", "approve", "--version", "0.1.0", "--wheel", str(genuine), "--seed", "00ff"
    )
    assert reference.stdout.strip() == f"seed 00ff digest {lab_digest('00ff', manifest)}"

    asked = shoectl(
        "floor", "authenticate", TABLE, "--broker", floor.broker.url, "--dsn", floor.dsn, "--json"
    )
    assert asked.returncode == 0, asked.stderr + floor.logs()
    [check] = json.loads(asked.stdout)
    assert check["verdict"] == "verified" and check["version"] == "0.1.0"
    assert len(check["seed"]) == 64
    assert check["digest"] == check["expected"] == lab_digest(check["seed"], manifest)
    status = shoectl("floor", "status", "--dsn", floor.dsn)
    assert status.returncode == 0, status.stdout
    assert f"software verified {check['answered_at']}" in status.stdout

    changed = dict(files)
    changed["controller/rules/drawing.py"] += b"# a change\n"
    tampered = release_wheel(tmp_path / "other.whl", changed)
    replaced = shoectl(
        "floor", "approve", "--version", "0.1.0", "--wheel", str(tampered), "--dsn", floor.dsn
    )
    assert replaced.returncode == 0, replaced.stderr
    again = shoectl(
        "floor", "authenticate", "--all", "--broker", floor.broker.url, "--dsn", floor.dsn
    )
    assert again.returncode == 1
    assert again.stdout.startswith(f"{TABLE}: software mismatch: cardshoe 0.1.0's files differ")
    verdicts = checks(floor.dsn)
    assert [verdict for _, verdict, _ in verdicts] == ["verified", "mismatch"]
    assert verdicts[0][2] != verdicts[1][2], "each check sends its own seed"
    assert (TABLE, "software", None) in floor_alarms(floor.dsn, TABLE)
    report = shoectl("floor", "status", "--dsn", floor.dsn, "--json")
    assert report.returncode == 1
    [table] = json.loads(report.stdout)
    assert table["software"].startswith("software MISMATCH") and not table["software_verified"]


def test_a_table_that_does_not_answer_and_a_version_not_approved(
    tmp_path: Path, table_on_the_floor: Floor, shoectl: ShoectlRunner
) -> None:
    floor = table_on_the_floor
    unapproved = shoectl(
        "floor", "authenticate", TABLE, "--broker", floor.broker.url, "--dsn", floor.dsn
    )
    assert unapproved.returncode == 1
    assert unapproved.stdout.strip() == (
        f"{TABLE}: software unapproved: cardshoe 0.1.0 is not an approved release (approved: none)"
    )
    for started in floor.processes:
        if started.args[0] == "uplink":
            started.stop()
    silent = shoectl(
        "floor",
        "authenticate",
        TABLE,
        "--broker",
        floor.broker.url,
        "--dsn",
        floor.dsn,
        "--wait",
        "1",
    )
    assert silent.returncode == 1
    assert silent.stdout.strip() == f"{TABLE}: software no_answer: the table did not answer"
    assert [verdict for _, verdict, _ in checks(floor.dsn)] == ["unapproved", "no_answer"]


def test_the_uplink_answers_a_seed_that_is_no_hex_with_one_line_and_no_digest(
    table_on_the_floor: Floor,
) -> None:
    floor = table_on_the_floor
    settings = BrokerSettings(floor.broker.url)
    answers: queue.Queue[bytes] = queue.Queue()
    client = new_client(settings, "probe-bad-seed")
    client.on_message = lambda client, userdata, message: answers.put(bytes(message.payload))
    client.connect(settings.host, settings.port)
    client.subscribe(table_topic(floor.site, TABLE, Leaf.AUTHENTICATION), qos=1)
    client.loop_start()
    try:
        wanted = table_topic(floor.site, TABLE, Leaf.AUTHENTICATE)
        client.publish(wanted, b"not json", qos=1)
        client.publish(wanted, AuthenticateRequest("zz").encode(), qos=1)
        answer = AuthenticationAnswer.decode(answers.get(timeout=FLOOR_WAIT_S))
    finally:
        client.disconnect()
        client.loop_stop()
    assert (answer.table_id, answer.seed, answer.digest, answer.version) == (
        TABLE,
        "zz",
        None,
        None,
    )
    assert answer.error is not None and answer.error.startswith("seed 'zz' is not hex bytes")
    uplink = next(started for started in floor.processes if started.args[0] == "uplink")
    assert "ignored a software authentication request: not JSON" in uplink.log
    assert answers.empty()


@pytest.mark.parametrize(
    ("arguments", "complaint"),
    [
        (("approve", "--version", "1", "--wheel", "WHEEL"), "give --dsn to store the release"),
        (("approve", "--version", "1", "--wheel", "WHEEL", "--seed", "zz"), "is not hex bytes"),
        (("approve", "--version", "1", "--wheel", "NOTAZIP", "--seed", "00"), "cannot read"),
        (("authenticate", "--broker", "mqtt://127.0.0.1:1", "--dsn", "DSN"), "name one TABLE_ID"),
        (("authenticate", "T404", "--broker", "mqtt://127.0.0.1:1", "--dsn", "DSN"), "T404"),
    ],
)
def test_bad_floor_requests_are_one_line_and_exit_2(
    tmp_path: Path, dsn: str, shoectl: ShoectlRunner, arguments: tuple[str, ...], complaint: str
) -> None:
    wheel = release_wheel(tmp_path / "r.whl", {"controller/x.py": b"x = 1\n"})
    not_a_zip = tmp_path / "not.whl"
    not_a_zip.write_text("text")
    given = {"WHEEL": str(wheel), "NOTAZIP": str(not_a_zip), "DSN": dsn}
    refused = shoectl("floor", *(given.get(word, word) for word in arguments))
    assert refused.returncode == 2, refused.stderr
    assert len(refused.stderr.splitlines()) == 1
    assert refused.stderr.startswith("shoectl: error: ") and complaint in refused.stderr
