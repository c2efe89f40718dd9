"""The pit's reads on a real PostgreSQL as a floor's history grows: the round figures of the
tiles (the count ingest keeps, the last hour's rounds, the latest winners, through gaps,
resends and a database migrated from schema 4), and the blocks of journal_records that the
floor page, a table's page and a round's recall read, which must not grow with the history."""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import psycopg
from support.dealt_journals import deal_shoes
from support.pit_support import many_shoes
from support.service_support import wait_until

from cardshoe.controller.floor.ingest_store import Outcome, copy_records, store_batch
from cardshoe.controller.floor.messages import EventMessage
from cardshoe.controller.floor.schema import MIGRATIONS, connect, migrate
from cardshoe.controller.journal.chain import GENESIS_HASH, record_hash
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.pit.accounts import Role
from cardshoe.controller.pit.alarms import list_alarms
from cardshoe.controller.pit.pace import day_pace
from cardshoe.controller.pit.recall import round_recall
from cardshoe.controller.pit.table_view import SHOES_LISTED, table_view
from cardshoe.controller.pit.tiles import LAST_RESULTS, TableTile, floor_tiles
from cardshoe.controller.record_kinds import ROUND_OPENED, ROUND_RESULT

HOUR_NS = 3600 * 1_000_000_000
WINNERS = ("banker", "player", "banker", "tie", "player", "player", "banker")


def dealt(table_id: str, rounds: int, first_ns: int, step_ns: int) -> list[EventMessage]:
    """A table's journal of `rounds` rounds (an opening and a result each), a record every
    step_ns from first_ns, hashed by the journal's recipe."""
    messages, previous = [], GENESIS_HASH
    for index in range(2 * rounds):
        round_no = index // 2 + 1
        closing = index % 2 == 1
        unhashed = EventMessage(
            table_id=table_id,
            record_id=index + 1,
            time_ns=first_ns + index * step_ns,
            shoe_id="S1",
            round_no=round_no,
            device_serial=None,
            device_seq=None,
            kind=ROUND_RESULT if closing else ROUND_OPENED,
            payload={"winner": WINNERS[round_no % len(WINNERS)]} if closing else {},
            prev_hash=previous,
            hash="",
        )
        previous = record_hash(previous, unhashed.hashed_values())
        messages.append(replace(unhashed, hash=previous))
    return messages


def store(connection: psycopg.Connection, events: list[EventMessage]) -> None:
    with connection.transaction():
        store_batch(connection, [("casino-1", event) for event in events], {}, Outcome())


def tile(dsn: str, table_id: str) -> TableTile:
    with connect(dsn) as connection:
        [found] = floor_tiles(connection, Role.SUPERVISOR, table_id)
    return found


def test_rounds_are_counted_once_each_as_the_chain_verifies_them(dsn: str) -> None:
    """Out of order, across a gap and with a resend, as a table's uplink may deliver them."""
    now_ns = time.time_ns()
    minute_ns = 60 * 1_000_000_000
    records = dealt("T1", 40, now_ns - 2 * HOUR_NS - minute_ns // 2, minute_ns)
    with connect(dsn) as connection:
        store(connection, records[:20])
        assert tile(dsn, "T1").rounds == 10
        store(connection, records[30:])  # behind a gap: held, not yet verified
        waiting = tile(dsn, "T1")
        assert (waiting.rounds, waiting.records, waiting.last_results[-1]) == (
            10,
            20,
            WINNERS[10 % len(WINNERS)],
        )
        store(connection, records[15:31])  # the gap filled, with records already held
        store(connection, records[25:])  # the uplink resending from its anchor
    results = [event for event in records if event.kind == ROUND_RESULT]
    recent = [event for event in results if event.time_ns > now_ns - HOUR_NS]
    assert 0 < len(recent) < len(results)
    shown = tile(dsn, "T1")
    assert (shown.rounds, shown.records) == (40, 80)
    assert shown.rounds_last_hour == len(recent)
    assert shown.last_results == [event.payload["winner"] for event in results[-LAST_RESULTS:]]


def test_a_table_idle_for_an_hour_has_no_rounds_in_the_last_hour(dsn: str) -> None:
    with connect(dsn) as connection:
        store(connection, dealt("T2", 5, time.time_ns() - 3 * HOUR_NS, 1_000_000_000))
    shown = tile(dsn, "T2")
    assert (shown.rounds, shown.rounds_last_hour, len(shown.last_results)) == (5, 0, 5)


def test_migrating_from_schema_4_counts_the_rounds_each_table_has_verified(
    empty_dsn: str,
) -> None:
    """A floor that ran before ingest kept the count: init-db fills it from the records."""
    records = dealt("T3", 12, time.time_ns() - HOUR_NS // 2, 1_000_000_000)
    with connect(empty_dsn) as connection:
        with connection.transaction():
            for step in MIGRATIONS[:4]:
                for statement in step:
                    connection.execute(statement)
            connection.execute("INSERT INTO floor_schema (version) VALUES (4)")
            connection.execute(
                "INSERT INTO floor_tables (table_id, site, contiguous_id, contiguous_hash, "
                "last_record_id) VALUES ('T3', 'casino-1', 17, %s, 24)",
                (records[16].hash,),
            )
            copy_records(connection, "journal_records", records)  # 17 verified (8 results), 7 past
        assert migrate(connection) == (4, len(MIGRATIONS))
    assert tile(empty_dsn, "T3").rounds == 8


def journal_blocks(dsn: str) -> int:
    """Blocks of journal_records and its indexes read so far, from cache or disk, as
    PostgreSQL's statistics count them, once no other session is left in the database.

    A session's counts reach the statistics when it ends, and a client's close does not wait
    for its server process to end: read while the session that wrote the history was still
    ending, the count took in its writes. Autovacuum is off for the table (a worker's reads
    count too); the history's writers run VACUUM ANALYZE themselves.
    """
    with psycopg.connect(dsn, autocommit=True) as connection:
        connection.execute("ALTER TABLE journal_records SET (autovacuum_enabled = false)")
        wait_until(
            lambda: (
                connection.execute(
                    "SELECT count(*) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND pid <> pg_backend_pid()"
                ).fetchone()
                == (0,)
            ),
            "the database's other sessions to end",
        )
        row = connection.execute(
            "SELECT heap_blks_read + heap_blks_hit + idx_blks_read + idx_blks_hit "
            "FROM pg_statio_user_tables WHERE relname = 'journal_records'"
        ).fetchone()
    assert row is not None
    return int(row[0])


def grow_history(dsn: str, table_id: str, first_id: int, last_id: int, start_ns: int) -> None:
    """Records first_id..last_id of a table straight into the floor, verified: a card and a
    result in turn, an alarm every 500th while the table's first 20,000 are written."""
    with psycopg.connect(dsn, autocommit=True) as connection:
        connection.execute(
            "INSERT INTO journal_records (table_id, record_id, time_ns, kind, payload, hash, "
            "prev_hash) SELECT %(table)s, n, %(start)s + n, "
            "CASE WHEN n %% 500 = 0 AND n <= 20000 THEN 'alarm' "
            "WHEN n %% 2 = 0 THEN 'card.assigned' ELSE 'round.result' END, "
            '\'{"winner": "tie", "kind": "advantage"}\', \'h\', \'p\' '
            "FROM generate_series(%(first)s::bigint, %(last)s) AS n",
            {"table": table_id, "first": first_id, "last": last_id, "start": start_ns},
        )
        connection.execute(
            "INSERT INTO floor_tables (table_id, site, contiguous_id, last_record_id, rounds) "
            "VALUES (%(table)s, 'casino-1', %(last)s, %(last)s, %(last)s / 2) "
            "ON CONFLICT (table_id) DO UPDATE SET contiguous_id = excluded.contiguous_id, "
            "last_record_id = excluded.last_record_id, rounds = excluded.rounds",
            {"table": table_id, "last": last_id},
        )
        connection.execute("VACUUM ANALYZE journal_records")


def later_shoe(dsn: str, table_id: str, first_id: int, last_id: int) -> None:
    """Records first_id..last_id of the table straight into the floor, verified: a later shoe,
    its shoe.started and then cards (one shoe, so the table's list of shoes grows by one)."""
    shoe_id = f"LATER-{first_id}"
    with psycopg.connect(dsn, autocommit=True) as connection:
        connection.execute(
            "INSERT INTO journal_records (table_id, record_id, time_ns, kind, shoe_id, round_no, "
            "payload, hash, prev_hash) SELECT %(table)s, n, n, "
            "CASE WHEN n = %(first)s THEN 'shoe.started' ELSE 'card.assigned' END, %(shoe)s, "
            "(n - %(first)s) / 10, "
            "jsonb_build_object('shoe_id', %(shoe)s::text, 'game', 'punto-banco'), 'h', 'p' "
            "FROM generate_series(%(first)s::bigint, %(last)s) AS n",
            {"table": table_id, "first": first_id, "last": last_id, "shoe": shoe_id},
        )
        connection.execute(
            "UPDATE floor_tables SET contiguous_id = %s, last_record_id = %s WHERE table_id = %s",
            (last_id, last_id, table_id),
        )
        connection.execute("VACUUM ANALYZE journal_records")


def blocks_to_show_the_floor(dsn: str) -> tuple[int, list[tuple[str, int, int]], int]:
    """Blocks of the journals read to draw every tile and list every alarm, with what they
    showed: (table, rounds, unacknowledged alarms) per tile, and the alarms listed."""
    before = journal_blocks(dsn)
    with psycopg.connect(dsn, autocommit=True) as connection:
        tiles = floor_tiles(connection, Role.SURVEILLANCE)
        alarms = list_alarms(
            connection,
            Role.SURVEILLANCE,
            include_acknowledged=True,
            overdue_after_s=60,
            now=datetime.now(UTC),
        )
        connection.execute("SELECT pg_stat_force_next_flush()")
    shown = [(tile.table_id, tile.rounds, tile.unacknowledged_alarms) for tile in tiles]
    return journal_blocks(dsn) - before, shown, len(alarms)


def test_the_floor_page_reads_the_same_however_long_a_tables_history(dsn: str) -> None:
    """A year at a table is millions of records: the tiles and the alarm list must reach the
    few they show through indexes, never the whole history (before the alarm kinds had an
    index of their own, every tile refresh read every result the floor held)."""
    start_ns = time.time_ns() - 2 * HOUR_NS
    grow_history(dsn, "T5", 1, 20000, start_ns)
    short, shown, listed = blocks_to_show_the_floor(dsn)
    assert (shown, listed) == ([("T5", 10000, 40)], 40)
    grow_history(dsn, "T5", 20001, 100000, start_ns)
    long, shown, listed = blocks_to_show_the_floor(dsn)
    assert (shown, listed) == ([("T5", 50000, 40)], 40)
    assert long <= short * 1.25 + 10, f"{short} blocks at 20,000 records, {long} at 100,000"


def blocks_to_show_a_shoe(
    dsn: str, table_id: str, shoe_id: str
) -> tuple[int, dict[str, Any] | None, dict[str, Any] | None]:
    """Blocks of the journals read to show a table's page on one shoe and recall its second
    round, with the page's board and the recall."""
    before = journal_blocks(dsn)
    with psycopg.connect(dsn, autocommit=True) as connection:
        view = table_view(connection, Role.SUPERVISOR, table_id, shoe_id)
        recall = round_recall(connection, table_id, shoe_id, 2)
        connection.execute("SELECT pg_stat_force_next_flush()")
    return journal_blocks(dsn) - before, None if view is None else view["board"], recall


def test_a_shoe_and_its_rounds_read_the_same_however_long_the_tables_history(
    dsn: str, tmp_path: Path
) -> None:
    """A dispute is about a shoe dealt months ago: its page and its rounds are read from the
    shoe's own records, not through every record the table sent after it."""
    journal = tmp_path / "table.sqlite"
    deal_shoes(journal, 1, rounds=3)
    with Journal.open_readonly(journal) as opened:
        records = [EventMessage.from_record(record) for record in opened.records()]
    table_id, shoe_id = records[0].table_id, next(r.shoe_id for r in records if r.shoe_id)
    assert shoe_id is not None
    with connect(dsn) as connection:
        store(connection, records)
    first = len(records) + 1
    later_shoe(dsn, table_id, first, first + 20000)
    short, board, recall = blocks_to_show_a_shoe(dsn, table_id, shoe_id)
    assert board is not None and board["rounds"] == 3
    assert recall is not None and recall["round_no"] == 2
    assert all(check["hash_ok"] and check["links"] for check in recall["record_checks"])
    later_shoe(dsn, table_id, first + 20001, first + 100000)
    long, later_board, later_recall = blocks_to_show_a_shoe(dsn, table_id, shoe_id)
    assert (later_board, later_recall) == (board, recall)
    assert long <= short * 1.25 + 10, f"{short} blocks at 20,000 records after, {long} at 100,000"


def blocks_for_the_days_pace(dsn: str, day: date) -> tuple[int, dict[str, int]]:
    """Blocks of the journals read for the pit's report of one day, and its rounds per table."""
    before = journal_blocks(dsn)
    with psycopg.connect(dsn, autocommit=True) as connection:
        pace = day_pace(connection, day, ZoneInfo("UTC"))
        connection.execute("SELECT pg_stat_force_next_flush()")
    return journal_blocks(dsn) - before, {row.name: row.rounds for row in pace.tables}


def test_a_days_pace_reads_that_day_not_the_days_before(dsn: str) -> None:
    """The report for a day a supervisor asks about months later reads that day's rounds."""
    day = date(2026, 1, 15)
    day_ns = int(datetime(2026, 1, 15, 10, tzinfo=UTC).timestamp()) * 1_000_000_000
    with connect(dsn) as connection:
        store(connection, dealt("T6", 5, day_ns, 60 * 1_000_000_000))
    blocks_after: dict[int, int] = {}
    for records in (20000, 100000):
        with psycopg.connect(dsn, autocommit=True) as connection:
            connection.execute("DELETE FROM journal_records WHERE table_id = 'T7'")
            connection.execute(
                "INSERT INTO journal_records (table_id, record_id, time_ns, kind, payload, hash, "
                "prev_hash) SELECT 'T7', n, %(before)s - n * 10000000000::bigint, "
                "CASE WHEN n %% 2 = 0 THEN 'round.result' ELSE 'round.opened' END, '{}', "
                "'h', 'p' FROM generate_series(1, %(records)s) AS n",
                {"before": day_ns - 12 * HOUR_NS, "records": records},
            )
            connection.execute("VACUUM ANALYZE journal_records")
        blocks_after[records], rounds = blocks_for_the_days_pace(dsn, day)
        assert rounds == {"T6": 5}
    short, long = blocks_after[20000], blocks_after[100000]
    assert long <= short * 1.25 + 10, f"{short} blocks after 20,000 records, {long} after 100,000"


def shoes_listed(
    dsn: str, table_id: str, shoe_id: str | None = None, before: int | None = None
) -> dict[str, Any]:
    with psycopg.connect(dsn, autocommit=True) as connection:
        view = table_view(connection, Role.SUPERVISOR, table_id, shoe_id, before)
    assert view is not None
    return view


def test_a_tables_page_lists_its_latest_shoes_and_reaches_earlier_ones_a_page_at_a_time(
    dsn: str, tmp_path: Path
) -> None:
    """A table deals some 10,000 shoes a year: its page lists SHOES_LISTED at a time, the
    latest first, with the before= of the pages on either side."""
    starts = many_shoes(dsn, "T9", 2 * SHOES_LISTED + 20, tmp_path)
    names = list(starts)

    def listed(view: dict[str, Any]) -> list[str]:
        return [shoe["shoe_id"] for shoe in view["shoes"]]

    latest = shoes_listed(dsn, "T9")
    assert listed(latest) == names[-SHOES_LISTED:]
    assert (latest["shoe_id"], latest["latest"], latest["later_before"]) == (names[-1], True, None)
    assert [shoe["record_id"] for shoe in latest["shoes"]] == [starts[n] for n in listed(latest)]
    middle = shoes_listed(dsn, "T9", before=latest["earlier_before"])
    assert listed(middle) == names[20 : 20 + SHOES_LISTED]
    assert (middle["latest"], middle["later_before"]) == (False, None), "later: the latest page"
    first = shoes_listed(dsn, "T9", before=middle["earlier_before"])
    assert listed(first) == names[:20]
    assert first["earlier_before"] is None
    assert listed(shoes_listed(dsn, "T9", before=first["later_before"])) == listed(middle)
    named = shoes_listed(dsn, "T9", shoe_id="S3")
    assert (named["shoe_id"], listed(named)) == ("S3", listed(latest)), "any shoe, by its id"
    assert shoes_listed(dsn, "T9", shoe_id="S3", before=middle["earlier_before"])["shoe_id"] == "S3"
    assert shoes_listed(dsn, "T9", before=1)["shoes"] == []
