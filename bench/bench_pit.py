"""The pit (issue #24, item 6): the floor page's first render with 1,000 tables, the API's
p99 at 200 tables, and a table's journal commit to its tile in the browser.

Everything real: a throwaway mosquitto and PostgreSQL, records through the
broker and `shoectl floor ingest`, `shoectl floor web` as a child process,
Debian's headless Chromium through Playwright. The commit-to-tile rows time
a record from the table's journal writer through `shoectl uplink`, the
broker, ingest, PostgreSQL's notification and the event stream to the tile.

    .venv/bin/python bench/bench_pit.py
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import replace
from pathlib import Path
from urllib.request import Request, urlopen

from bench_floor import (
    fresh_database,
    ingest_command,
    shoectl,
    start,
    stop,
    verified_total,
    wait_for,
    watch,
)
from floor_servers import FloorServers, floor_servers
from playwright.sync_api import Page, sync_playwright
from results import Measurement, Target, percentile, print_measurements

from cardshoe.controller.floor.broker import BrokerSettings, new_client
from cardshoe.controller.floor.local_servers import Mosquitto
from cardshoe.controller.floor.messages import EventMessage
from cardshoe.controller.journal.chain import GENESIS_HASH, record_hash
from cardshoe.controller.journal.store import Journal

CHROMIUM = "/usr/lib/chromium/chromium-headless-shell"
USER, PASSWORD = "bench", "bench-password"
ROUNDS = 10
"""Rounds a table has dealt before the page opens: a shoe.started and six records a round."""
API_REQUESTS = 300
COMMITS = 30
INGEST_ID = "bench-pit"
"""One ingest client id throughout: a stopped ingest's session keeps its share of the shared
subscription, so a second id would leave half the live records waiting for the resend."""


def table_records(table_id: str) -> list[bytes]:
    """A short shoe as a table's uplink sends it: hashed by the journal's recipe."""
    kinds: list[tuple[str, int | None, dict[str, object]]] = [
        ("shoe.started", None, {"shoe_id": "S1", "game": "punto-banco"})
    ]
    for number in range(1, ROUNDS + 1):
        kinds.append(("round.opened", number, {"demo": False}))
        kinds += [("card.assigned", number, {"card": "9H", "to": "player"})] * 4
        kinds.append(("round.result", number, {"winner": "banker", "player": [], "banker": []}))
    previous, bodies = GENESIS_HASH, []
    for record_id, (kind, round_no, payload) in enumerate(kinds, start=1):
        unhashed = EventMessage(
            table_id,
            record_id,
            time.time_ns(),
            "S1",
            round_no,
            None,
            None,
            kind,
            payload,
            previous,
            "",
        )
        previous = record_hash(previous, unhashed.hashed_values())
        bodies.append(replace(unhashed, hash=previous).encode())
    return bodies


def fill_floor(broker: Mosquitto, dsn: str, tables: int, folder: Path) -> None:
    ingest = start(ingest_command(broker, dsn, INGEST_ID), folder / "ingest-fill.log")
    wait_for("ingest", lambda: "ingest subscribed" in (folder / "ingest-fill.log").read_text())
    settings = BrokerSettings(broker.url)
    client = new_client(settings, "bench-pit-publisher")
    client.max_inflight_messages_set(1000)
    client.connect(settings.host, settings.port)
    client.loop_start()
    last = None
    for number in range(tables):
        table_id = f"P{number:04d}"
        for body in table_records(table_id):
            last = client.publish(f"cardshoe/v1/bench/{table_id}/events", body, qos=1)
    assert last is not None
    last.wait_for_publish(300)
    client.disconnect()
    client.loop_stop()
    per_table = 1 + ROUNDS * 6
    with watch(dsn) as connection:
        wait_for("the floor", lambda: verified_total(connection) >= tables * per_table)
    stop(ingest)


def serve_pit(dsn: str, broker: Mosquitto, folder: Path) -> tuple[subprocess.Popen[str], str]:
    secret = folder / "password"
    secret.write_text(PASSWORD + "\n")
    add = shoectl("floor", "user", "add", USER, "--role", "supervisor", "--dsn", dsn)
    subprocess.run([*add, "--password-file", str(secret)], check=True, capture_output=True)
    command = shoectl(
        "floor", "web", "--dsn", dsn, "--broker", broker.url, "--listen", "127.0.0.1:0"
    )
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    line = process.stderr.readline()
    return process, line.split("serving ", 1)[1].strip()


def log_in(page: Page, url: str) -> None:
    page.goto(url)
    page.fill("#login-user", USER)
    page.fill("#login-password", PASSWORD)
    page.click("#login button[type=submit]")
    page.wait_for_selector("#tiles")


def first_render(page: Page, url: str, tables: int) -> float:
    """From navigation to every tile drawn, the session already open (at least `tables`:
    the broker still holds the retained status of the commit pass's table)."""
    started = time.perf_counter()
    page.goto(url)
    page.wait_for_function(f"document.querySelectorAll('#tiles .tile').length >= {tables}")
    return time.perf_counter() - started


def api_latencies(url: str, cookie: str) -> list[float]:
    samples = []
    for _ in range(API_REQUESTS):
        request = Request(url + "api/tables", headers={"Cookie": cookie})
        started = time.perf_counter()
        with urlopen(request, timeout=30) as response:
            response.read()
        samples.append(time.perf_counter() - started)
    return samples


def commit_to_tile(page: Page, folder: Path, broker: Mosquitto, dsn: str) -> list[float]:
    """A journal of table L0001 with its uplink running; each commit of a round.result is
    timed until the tile's round count shows it."""
    journal_path = folder / "L0001.sqlite"
    with (
        Journal.open(journal_path, table_id="L0001", create=True) as journal,
        journal.transaction() as transaction,
    ):
        transaction.append(
            "shoe.started",
            {"shoe_id": "S1", "game": "macau-1"},
            shoe_id="S1",
            round_no=None,
            device_serial=None,
        )
    ingest = start(ingest_command(broker, dsn, INGEST_ID), folder / "ingest-live.log")
    uplink = start(
        shoectl(
            "uplink",
            "--journal",
            str(journal_path),
            "--broker",
            broker.url,
            "--site",
            "bench",
            "--state-dir",
            str(folder),
        ),
        folder / "uplink.log",
    )
    samples = []
    try:
        page.wait_for_selector("[data-table=L0001]", timeout=60_000)
        with Journal.open(journal_path, table_id="L0001") as journal:
            for number in range(1, COMMITS + 1):
                with journal.transaction() as transaction:
                    transaction.append(
                        "round.result",
                        {"winner": "player"},
                        shoe_id="S1",
                        round_no=number,
                        device_serial=None,
                    )
                committed = time.perf_counter()
                page.wait_for_function(
                    f"document.querySelector('[data-table=L0001]')?.dataset.rounds === '{number}'",
                    polling="raf",
                    timeout=30_000,
                )
                samples.append(time.perf_counter() - committed)
                time.sleep(0.2)
    finally:
        stop(uplink)
        stop(ingest)
    return samples


def measure(tables: int = 1000, api_tables: int = 200) -> list[Measurement]:
    with floor_servers("bench_pit") as servers, sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM)
        rows = []
        for count, name in ((api_tables, "api"), (tables, "render")):
            dsn = fresh_database(servers.postgres, f"pit_{name}")
            fill_floor(servers.broker, dsn, count, servers.folder)
            process, url = serve_pit(dsn, servers.broker, servers.folder)
            try:
                page = browser.new_page(viewport={"width": 1920, "height": 1080})
                log_in(page, url)
                if name == "api":
                    rows += api_rows(page, url, count, dsn, servers)
                else:
                    rows.append(render_row(page, url, count))
                page.close()
            finally:
                process.terminate()
                process.wait()
        browser.close()
    return rows


def api_rows(
    page: Page, url: str, count: int, dsn: str, servers: FloorServers
) -> list[Measurement]:
    cookie = next(c for c in page.context.cookies() if c["name"] == "pit_session")
    samples = api_latencies(url, f"pit_session={cookie['value']}")
    latencies = commit_to_tile(page, servers.folder, servers.broker, dsn)
    return [
        Measurement(
            f"pit GET /api/tables p99 ({count} tables)",
            percentile(samples, 99) * 1000,
            "ms",
            Target(50, False, "< 50 ms"),
            f"{API_REQUESTS} requests in a row, idle floor (tiles read once a change), median "
            f"{percentile(samples, 50) * 1000:.1f} ms",
        ),
        Measurement(
            "pit journal commit → tile in the browser p99",
            percentile(latencies, 99) * 1000,
            "ms",
            Target(1000, False, "< 1,000 ms"),
            f"{COMMITS} commits through uplink, broker, ingest, NOTIFY, SSE; "
            f"median {percentile(latencies, 50) * 1000:.0f} ms",
        ),
    ]


def render_row(page: Page, url: str, count: int) -> Measurement:
    renders = [first_render(page, url, count) for _ in range(5)]
    return Measurement(
        f"pit floor page first render ({count} tables)",
        max(renders) * 1000,
        "ms",
        Target(1000, False, "< 1,000 ms"),
        "navigation to every tile drawn, worst of 5, logged in (tiles read once), Chromium",
    )


if __name__ == "__main__":
    print_measurements(measure())
