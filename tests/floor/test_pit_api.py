"""The pit's JSON API through a real `shoectl floor web`, on a floor fed by real uplinks and ingest.

Each answer is checked against what PostgreSQL and the table's own journal
hold; each refusal is a JSON error with its status, never a 500.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import psycopg
import pytest
from support.dealt_journals import deal_shoes
from support.floor_support import Floor, wait_for_floor
from support.pit_support import PitClient, PitService, add_user, raise_alarm
from support.shoectl import ShoectlRunner

from cardshoe.controller.journal.store import Journal

ROLES = {"sam": "supervisor", "vic": "viewer", "eve": "surveillance"}
FLOOR_ZONE = "Asia/Kolkata"
"""The pit's clock in these tests: UTC+05:30, so its hours of day are not UTC's."""


@pytest.fixture
def dealt_floor(floor: Floor, tmp_path: Path) -> tuple[Floor, Path]:
    """A table that dealt a short shoe, its journal in the floor, verified; uplink still running."""
    journal = tmp_path / "table.sqlite"
    deal_shoes(journal, 1, rounds=3)
    floor.ingest()
    floor.uplink(journal)
    wait_for_floor(floor, [journal])
    return floor, journal


@pytest.fixture
def pit(dealt_floor: tuple[Floor, Path], tmp_path: Path) -> Iterator[PitService]:
    floor, _ = dealt_floor
    for name, role in ROLES.items():
        assert add_user(floor.dsn, tmp_path, name, role).returncode == 0
    with PitService(floor.dsn, "--broker", floor.broker.url, "--time-zone", FLOOR_ZONE) as service:
        yield service


@pytest.fixture
def empty_pit(dsn: str, tmp_path: Path) -> Iterator[PitService]:
    """The pit on a floor no table has sent anything to yet: enough for refusals."""
    assert add_user(dsn, tmp_path, "sam", "supervisor").returncode == 0
    with PitService(dsn) as service:
        yield service


def table_id_of(journal: Path) -> str:
    with Journal.open_readonly(journal) as opened:
        return opened.table_id


def test_every_api_path_needs_a_session(empty_pit: PitService) -> None:
    client = PitClient(empty_pit.url)
    for path in (
        "/api/tables",
        "/api/tables/T1",
        "/api/tables/T1/rounds/S/1",
        "/api/alarms",
        "/api/pace",
        "/api/session",
    ):
        status, answer = client.get(path)
        assert status == 401, path
        assert "log" in answer["error"]
    status, answer = client.request("POST", "/api/alarms/x:1/ack", {"note": "seen"})
    assert status == 401


def test_login_answers_a_csrf_token_and_a_wrong_password_is_audited(pit: PitService) -> None:
    client = PitClient(pit.url)
    assert client.login("sam", "wrong password")[0] == 401
    assert client.login("nobody")[0] == 401
    status, answer = client.login("sam")
    assert status == 200
    assert answer["user"] == "sam" and answer["role"] == "supervisor"
    assert len(answer["csrf_token"]) >= 32
    assert client.get("/api/session")[1]["user"] == "sam"
    assert client.request("POST", "/api/logout", {}, csrf=False)[0] == 403
    assert client.request("POST", "/api/logout", {})[0] == 200
    assert client.get("/api/tables")[0] == 401
    with psycopg.connect(pit.dsn) as db:
        audit = db.execute("SELECT user_name, action FROM pit_audit ORDER BY id").fetchall()
    assert [row for row in audit if row[0] in ("sam", "nobody")][-4:] == [
        ("sam", "login_failed"),
        ("nobody", "login_failed"),
        ("sam", "login"),
        ("sam", "logout"),
    ]


def test_repeated_wrong_passwords_lock_the_user_then_the_client_and_are_audited(
    empty_pit: PitService,
) -> None:
    """docs/pit.md: 5 wrong passwords for a user, or 20 failed logins from a client, within
    15 minutes lock it out for 5 minutes: 429 with Retry-After, the password unchecked."""
    client = PitClient(empty_pit.url)
    for _ in range(5):
        assert client.login("sam", "not the password")[0] == 401
    status, answer = client.login("sam")
    assert status == 429 and list(answer) == ["error"]
    assert "too many failed logins for user 'sam'" in answer["error"]
    assert 1 <= int(client.headers["retry-after"]) <= 300
    assert client.get("/api/session")[0] == 401, "the right password opened no session"
    for number in range(15):
        assert client.login(f"guess{number}")[0] == 401
    status, answer = client.login("kim")
    assert status == 429 and "for client '127.0.0.1'" in answer["error"]
    assert int(client.headers["retry-after"]) >= 1
    with psycopg.connect(empty_pit.dsn) as db:
        locked = db.execute(
            "SELECT user_name, detail FROM pit_audit WHERE action = 'login_locked' ORDER BY id"
        ).fetchall()
        failed = db.execute(
            "SELECT count(*) FROM pit_audit WHERE action = 'login_failed' AND detail LIKE %s",
            ("%from 127.0.0.1",),
        ).fetchone()
    assert locked == [
        ("sam", "user sam locked for 300 s after 5 failed logins in 900 s (last from 127.0.0.1)"),
        (
            "guess14",
            "client 127.0.0.1 locked for 300 s after 20 failed logins in 900 s "
            "(last from 127.0.0.1)",
        ),
    ]
    assert failed == (20,), "the refused logins checked no password and wrote no failure"


def test_behind_a_trusted_proxy_each_client_counts_its_own_failed_logins(dsn: str) -> None:
    """A reverse proxy on this machine (trusted by default) names each client: 20 failures
    from one lock that client only. A proxy the pit was not told of names nobody: its
    header is ignored, and every client behind it is the proxy's address."""
    with PitService(dsn) as pit:
        guesser = PitClient(pit.url, forwarded_for="203.0.113.7")
        for number in range(20):
            assert guesser.login(f"guess{number}", "not the password")[0] == 401
        status, answer = guesser.login("kim", "not the password")
        assert status == 429 and "for client '203.0.113.7'" in answer["error"]
        other = PitClient(pit.url, forwarded_for="203.0.113.8")
        assert other.login("kim", "not the password")[0] == 401, "another client may still try"
    with PitService(dsn, "--proxy", "192.0.2.0/24") as pit:
        spoofer = PitClient(pit.url, forwarded_for="203.0.113.9")
        assert spoofer.login("kim", "not the password")[0] == 401
    with psycopg.connect(dsn) as db:
        (last,) = db.execute(
            "SELECT detail FROM pit_audit WHERE action = 'login_failed' ORDER BY id DESC LIMIT 1"
        ).fetchone()
    assert last.endswith("from 127.0.0.1"), "the untrusted proxy's header named nobody"


def test_a_restarted_pit_keeps_a_lockout_its_audit_recorded(dsn: str, tmp_path: Path) -> None:
    """Restarting the pit (a crash, an update, systemd) must not give a guesser fresh tries."""
    assert add_user(dsn, tmp_path, "sam", "supervisor").returncode == 0
    with PitService(dsn) as first:
        client = PitClient(first.url)
        for _ in range(5):
            assert client.login("sam", "not the password")[0] == 401
    with PitService(dsn) as second:
        client = PitClient(second.url)
        status, answer = client.login("sam")
        assert status == 429, answer
        assert "too many failed logins for user 'sam'" in answer["error"]
        assert 1 <= int(client.headers["retry-after"]) <= 300
        assert client.login("kim", "not the password")[0] == 401, "others still log in"


def test_the_tables_and_a_round_are_what_the_floor_and_the_journal_hold(
    pit: PitService, dealt_floor: tuple[Floor, Path], shoectl: ShoectlRunner
) -> None:
    floor, journal = dealt_floor
    table_id = table_id_of(journal)
    client = PitClient(pit.url)
    client.login("vic")
    status, tiles = client.get("/api/tables")
    assert status == 200
    (tile,) = tiles
    with psycopg.connect(floor.dsn) as db:
        rounds = db.execute(
            "SELECT count(*) FROM journal_records WHERE table_id = %s AND kind = 'round.result'",
            (table_id,),
        ).fetchone()
    assert rounds is not None and tile["rounds"] == rounds[0] == 3
    assert tile["table_id"] == table_id and tile["chain_verified"] and tile["online"] is True
    status, view = client.get(f"/api/tables/{table_id}")
    assert status == 200
    assert view["board"]["rounds"] == 3 and [r["round_no"] for r in view["rounds"]] == [1, 2, 3]
    shoe_id = view["shoe_id"]
    local = shoectl("journal", "round", str(journal), "--shoe", shoe_id, "--round", "2", "--json")
    assert local.returncode == 0, local.stderr
    expected = json.loads(local.stdout)
    status, recall = client.get(f"/api/tables/{table_id}/rounds/{shoe_id}/2")
    assert status == 200
    assert {name: recall[name] for name in expected} == expected
    assert all(len(card) == 2 for card in recall["player"] + recall["banker"])
    assert all(check["hash_ok"] and check["links"] for check in recall["record_checks"])
    assert set(recall["card_times"]) == {str(card["record"]) for card in recall["cards"]}
    with psycopg.connect(floor.dsn) as db:
        results = db.execute(
            "SELECT time_ns FROM journal_records WHERE table_id = %s AND kind = 'round.result'",
            (table_id,),
        ).fetchall()
    local_times = [
        datetime.fromtimestamp(time_ns / 1e9, UTC).astimezone(ZoneInfo(FLOOR_ZONE))
        for (time_ns,) in results
    ]
    dealt_on = local_times[0].date().isoformat()
    by_hour = [0] * 24
    for moment in local_times:
        by_hour[moment.hour] += moment.date().isoformat() == dealt_on
    status, pace = client.get(f"/api/pace?date={dealt_on}")
    assert status == 200 and (pace["date"], pace["time_zone"]) == (dealt_on, FLOOR_ZONE)
    (row,) = pace["tables"]
    assert (row["name"], row["rounds_by_hour"]) == (table_id, by_hour)
    assert row["rounds"] == sum(by_hour) >= 1
    assert sum(dealer["rounds"] for dealer in pace["dealers"]) == sum(by_hour)
    assert (pace["hold_s"], pace["shuffle_s"]) == (row["hold_s"], row["shuffle_s"])


def test_an_alarm_is_acknowledged_by_a_supervisor_with_a_note_and_audited(
    pit: PitService, dealt_floor: tuple[Floor, Path]
) -> None:
    floor, journal = dealt_floor
    table_id = table_id_of(journal)
    record_id = raise_alarm(journal, "foreign_card", "a card of deck set 0x00BC614F")
    watcher_id = raise_alarm(journal, "advantage", "player pair favours the player")
    wait_for_floor(floor, [journal])
    viewer, supervisor = PitClient(pit.url), PitClient(pit.url)
    viewer.login("vic")
    supervisor.login("sam")
    alarm_id = f"{table_id}:{record_id}"
    open_ids = [alarm["id"] for alarm in viewer.get("/api/alarms?state=open")[1]]
    assert alarm_id in open_ids and f"{table_id}:{watcher_id}" not in open_ids
    surveillance = PitClient(pit.url)
    surveillance.login("eve")
    assert f"{table_id}:{watcher_id}" in [a["id"] for a in surveillance.get("/api/alarms")[1]]

    status, refused = viewer.request("POST", f"/api/alarms/{alarm_id}/ack", {"note": "seen"})
    assert status == 403 and "viewer" in refused["error"]
    status, refused = supervisor.request(
        "POST", f"/api/alarms/{alarm_id}/ack", {"note": "seen"}, csrf=False
    )
    assert status == 403 and "X-CSRF-Token" in refused["error"]
    status, done = supervisor.request(
        "POST", f"/api/alarms/{alarm_id}/ack", {"note": "deck checked, card removed"}
    )
    assert status == 200
    assert done["acknowledged_by"] == "sam" and done["note"] == "deck checked, card removed"
    again = supervisor.request("POST", f"/api/alarms/{alarm_id}/ack", {"note": "twice"})
    assert again[0] == 409

    status, every = viewer.get("/api/alarms?state=all")
    shown = next(alarm for alarm in every if alarm["id"] == alarm_id)
    assert shown["table_id"] == table_id and shown["kind"] == "foreign_card"
    assert shown["detail"] == "a card of deck set 0x00BC614F" and shown["raised_at"]
    assert (shown["acknowledged_by"], shown["acknowledged_at"]) == ("sam", done["acknowledged_at"])
    assert alarm_id not in [alarm["id"] for alarm in viewer.get("/api/alarms")[1]]
    with psycopg.connect(floor.dsn) as db:
        audit = db.execute(
            "SELECT user_name, action, detail, at FROM pit_audit WHERE action = 'acknowledge'"
        ).fetchall()
    assert [(row[0], row[2]) for row in audit] == [
        ("sam", f"alarm {alarm_id}: deck checked, card removed")
    ]


@pytest.mark.parametrize(
    ("method", "path", "raw", "content_type", "status", "says"),
    [
        ("GET", "/api/alarms?state=some", None, "", 400, "open or all"),
        ("GET", "/api/pace?date=2026-13-01", None, "", 400, "YYYY-MM-DD"),
        ("GET", "/api/tables/nope", None, "", 404, "no table"),
        ("GET", "/api/tables/T1/rounds/S1/x", None, "", 400, "not a round number"),
        ("GET", "/api/tables/T1/rounds/S1/%C2%B2", None, "", 400, "not a round number"),
        ("GET", "/api/tables/T1/rounds/S1/" + "1" * 5000, None, "", 400, "not a round number"),
        ("GET", "/api/tables/T1?before=%C2%B2", None, "", 400, "not a record id"),
        ("GET", "/api/tables/T1?before=0", None, "", 400, "not a record id"),
        ("GET", "/api/tables/T1?before=-5", None, "", 400, "not a record id"),
        ("GET", "/api/tables/T1/rounds/S1/7", None, "", 404, "no round"),
        ("GET", "/api/tables/T%00/rounds/S1/1", None, "", 400, "NUL"),
        ("GET", "/api/nothing", None, "", 404, "nothing at"),
        ("DELETE", "/api/alarms", None, "", 405, "not allowed"),
        ("POST", "/api/alarms/x:1/ack", b"{", "application/json", 400, "not JSON"),
        ("POST", "/api/alarms/x:1/ack", b"[]", "application/json", 400, "JSON object"),
        ("POST", "/api/alarms/x:1/ack", b'{"note": 3}', "application/json", 400, "note"),
        ("POST", "/api/alarms/x:1/ack", b'{"note": "a"}', "text/plain", 415, "Content-Type"),
        ("POST", "/api/alarms/x:1/ack", b'{"note": "a"}', "application/json", 404, "no alarm"),
        ("POST", "/api/alarms/floor:99/ack", b'{"note": " "}', "application/json", 400, "note"),
    ],
)
def test_bad_requests_get_one_json_error_with_their_status(
    empty_pit: PitService,
    method: str,
    path: str,
    raw: bytes | None,
    content_type: str,
    status: int,
    says: str,
) -> None:
    client = PitClient(empty_pit.url)
    client.login("sam")
    got, answer = client.request(method, path, raw=raw, content_type=content_type)
    assert (got, list(answer)) == (status, ["error"])
    assert says in answer["error"]


def test_bad_logins_are_json_errors(empty_pit: PitService) -> None:
    client = PitClient(empty_pit.url)
    nested, long_number = b"[" * 5000 + b"]" * 5000, b'{"user": ' + b"9" * 5000 + b"}"
    for raw in (
        b"not json",
        b'{"user": "sam"}',
        b'{"user": 1, "password": "x"}',
        nested,
        long_number,
        b"\xff\xfe",
    ):
        status, answer = client.request("POST", "/api/login", raw=raw)
        assert status == 400 and answer["error"]
    status, answer = client.request(
        "POST", "/api/login", raw=b'{"user": "a\\u0000", "password": "p"}'
    )
    assert status in (400, 401) and answer["error"]
    assert client.login("sam")[0] == 200, "the pit answers on after the bad logins"
