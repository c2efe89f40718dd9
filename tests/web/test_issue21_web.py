"""Issue 21 case 10, the web unit: bad event ids are 400, and /events streams are bounded.

The journal is a real SQLite file dealt by `shoectl demo`; the service is the
real `shoectl web` in a child process, asked over real HTTP.
"""

from __future__ import annotations

import http.client
from pathlib import Path

import pytest
from support.service_support import wait_until
from support.web_support import WebService

from cardshoe.controller.journal.store import Journal


@pytest.fixture(scope="module")
def journal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("web") / "journal.sqlite"
    Journal.init(path, table_id="T1")
    return path


def get_events(port: int, headers: dict[str, str], query: str = "") -> tuple[int, str, str]:
    """Status, body (for an error) and the service's Retry-After, of one GET /events."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", "/events" + query, headers=headers)
        response = connection.getresponse()
        body = response.read().decode() if response.status != 200 else ""
        return response.status, body, response.getheader("Retry-After") or ""
    finally:
        connection.close()


@pytest.mark.parametrize(
    ("headers", "query", "named"),
    [
        ({"Last-Event-ID": "9" + "0" * 5000}, "", "Last-Event-ID"),
        ({"Last-Event-ID": "9" * 20}, "", "Last-Event-ID"),
        ({"Last-Event-ID": "12x"}, "", "Last-Event-ID"),
        ({}, "?after=%C2%B2", "?after="),
        ({}, "?after=-1", "?after="),
        ({}, "?after=%D9%A3", "?after="),
    ],
    ids=["5001-digits", "20-digits", "not-digits", "superscript-two", "negative", "arabic-three"],
)
def test_issue21_case_10_a_bad_last_event_id_or_after_is_400_not_500(
    journal: Path, headers: dict[str, str], query: str, named: str
) -> None:
    with WebService(journal) as web:
        status, body, _ = get_events(web.port, headers, query)
        (good,) = web.events(1, last_event_id=None)
    assert status == 400
    assert body == f"{named} must be a record id (1 to 19 digits 0-9): reload the page\n"
    assert good["data"]["kind"] == "snapshot"


def test_issue21_case_10_sse_clients_past_the_maximum_get_503(journal: Path) -> None:
    with WebService(journal, "--max-clients", "3") as web:
        held = []
        try:
            for _ in range(3):
                connection = http.client.HTTPConnection("127.0.0.1", web.port, timeout=10)
                connection.request("GET", "/events")
                assert connection.getresponse().status == 200
                held.append(connection)
            status, body, retry_after = get_events(web.port, {})
        finally:
            for connection in held:
                connection.close()
        assert (status, retry_after) == (503, "5")
        assert body == "this scoreboard already serves 3 screens: try again later\n"
        assert web.board()["record_id"] == 0
        # The three that left give their places back once the service sees them go.
        wait_until(lambda: get_events(web.port, {})[0] == 200, "a place given back")
        (snapshot,) = web.events(1)
    assert snapshot["data"]["kind"] == "snapshot"
