"""What ingest does with records that are repeated, forged, out of order or missing."""

from __future__ import annotations

import hashlib
import json
import signal
from dataclasses import replace
from pathlib import Path

from support.floor_support import (
    Floor,
    chained_messages,
    floor_alarms,
    floor_records,
    floor_table,
    publish,
    rejected_messages,
)
from support.process_support import in_mask, signal_mask, spawned_with_stop_signals_blocked
from support.service_support import wait_until
from support.shoectl import ShoectlRunner

from cardshoe.controller.floor.local_servers import Mosquitto, Postgres
from cardshoe.controller.floor.messages import EventMessage, StatusMessage, event_bodies
from cardshoe.controller.floor.schema import connect, migrate

EVENTS = "cardshoe/v1/casino-1/{}/events"


def contiguous(floor: Floor, table_id: str) -> int:
    return (floor_table(floor.dsn, table_id) or {}).get("contiguous_id", 0)


def test_repeats_are_ignored_and_a_repeat_with_another_hash_is_an_alarm_not_an_overwrite(
    floor: Floor, shoectl: ShoectlRunner
) -> None:
    floor.ingest()
    good = chained_messages("T1", 5)
    other = chained_messages("T2", 3)
    publish(floor.broker.url, EVENTS.format("T1"), [m.encode() for m in good + good[:3]])
    publish(floor.broker.url, EVENTS.format("T2"), [m.encode() for m in other])
    wait_until(lambda: contiguous(floor, "T1") == 5, "T1 verified to 5")
    wait_until(lambda: contiguous(floor, "T2") == 3, "T2 verified to 3")
    assert floor_alarms(floor.dsn) == []

    rewritten = chained_messages("T1", 3)[2]
    rewritten = replace(rewritten, payload={"n": 99})
    rewritten = replace(rewritten, hash=_rehash(rewritten))
    publish(floor.broker.url, EVENTS.format("T1"), [rewritten.encode()])
    wait_until(lambda: floor_alarms(floor.dsn), "the conflict alarm")
    assert floor_alarms(floor.dsn) == [("T1", "conflict", 3)]
    assert floor_records(floor.dsn, "T1") == [(m.record_id, m.hash) for m in good]

    report = shoectl("floor", "status", "--dsn", floor.dsn, "--json")
    assert report.returncode == 1
    flagged = {row["table_id"]: row["chain_verified"] for row in json.loads(report.stdout)}
    assert flagged == {"T1": False, "T2": True}


def _rehash(message: EventMessage) -> str:
    from cardshoe.controller.journal.chain import record_hash

    return record_hash(message.prev_hash, message.hashed_values())


def test_a_record_whose_fields_do_not_match_its_hash_is_kept_out_and_the_table_flagged(
    floor: Floor,
) -> None:
    floor.ingest()
    good = chained_messages("T3", 4)
    forged = replace(good[2], payload={"n": "forged"})
    publish(floor.broker.url, EVENTS.format("T3"), [m.encode() for m in good[:2]])
    publish(floor.broker.url, EVENTS.format("T3"), [forged.encode()])
    wait_until(lambda: floor_alarms(floor.dsn), "the hash alarm")
    assert floor_alarms(floor.dsn) == [("T3", "hash_mismatch", 3)]
    assert contiguous(floor, "T3") == 2
    publish(floor.broker.url, EVENTS.format("T3"), [m.encode() for m in good[2:]])
    wait_until(lambda: contiguous(floor, "T3") == 4, "the real records to take their place")
    assert floor_table(floor.dsn, "T3")["chain_ok"] is False


def test_a_record_that_does_not_link_to_the_one_before_is_moved_out_into_an_alarm(
    floor: Floor,
) -> None:
    floor.ingest()
    good = chained_messages("T4", 3)
    stranger = chained_messages("T4", 3)[2]
    stranger = replace(stranger, prev_hash="ab" * 32)
    stranger = replace(stranger, hash=_rehash(stranger))
    publish(floor.broker.url, EVENTS.format("T4"), [m.encode() for m in [*good[:2], stranger]])
    wait_until(lambda: floor_alarms(floor.dsn), "the chain alarm")
    assert floor_alarms(floor.dsn) == [("T4", "chain_mismatch", 3)]
    assert [record_id for record_id, _ in floor_records(floor.dsn, "T4")] == [1, 2]
    publish(floor.broker.url, EVENTS.format("T4"), [good[2].encode()])
    wait_until(lambda: contiguous(floor, "T4") == 3, "the real record 3")


def test_a_message_of_many_records_is_taken_record_by_record_beside_older_single_ones(
    floor: Floor,
) -> None:
    """The uplink's arrays: each record is checked alone, and a bare record (an older uplink's
    message) still fills the place of the one refused."""
    floor.ingest()
    good = chained_messages("T20", 6)
    forged = replace(good[3], payload={"n": "forged"})
    bodies = [body for _, body in event_bodies([*good[:3], forged, *good[4:]])]
    assert len(bodies) == 1 and json.loads(bodies[0])[3]["record_id"] == 4
    publish(floor.broker.url, EVENTS.format("T20"), bodies)
    wait_until(lambda: floor_alarms(floor.dsn), "the hash alarm")
    assert floor_alarms(floor.dsn) == [("T20", "hash_mismatch", 4)]
    ((_, quarantined, reason),) = rejected_messages(floor.dsn)
    assert quarantined == hashlib.sha256(bodies[0]).hexdigest() and "record 4" in reason
    assert floor_records(floor.dsn, "T20") == [(m.record_id, m.hash) for m in good if m != good[3]]
    assert contiguous(floor, "T20") == 3
    publish(floor.broker.url, EVENTS.format("T20"), [good[3].encode()])
    wait_until(lambda: contiguous(floor, "T20") == 6, "the real record 4 as a bare message")
    assert floor_records(floor.dsn, "T20") == [(m.record_id, m.hash) for m in good]


def test_a_gap_waits_for_the_missing_records_and_is_reported_once_it_is_old(
    floor: Floor, shoectl: ShoectlRunner
) -> None:
    floor.ingest("ingest-1", "--gap-after", "0.5")
    records = chained_messages("T5", 6)
    publish(floor.broker.url, EVENTS.format("T5"), [m.encode() for m in records[:2]])
    publish(floor.broker.url, EVENTS.format("T5"), [m.encode() for m in records[4:]])
    head = StatusMessage(online=True, table_id="T5", head_id=6, head_hash=records[-1].hash)
    publish(floor.broker.url, "cardshoe/v1/casino-1/T5/status", [head.encode()], retain=True)
    wait_until(lambda: floor_alarms(floor.dsn), "the gap alarm")
    assert floor_alarms(floor.dsn) == [("T5", "gap", 3)]
    report = json.loads(shoectl("floor", "status", "--dsn", floor.dsn, "--json").stdout)[0]
    assert report["gaps"] == [[3, 4]] and report["contiguous_id"] == 2
    assert report["lag_records"] == 4 and report["lag_s"] > 0
    assert report["chain_ok"] and not report["chain_verified"]

    publish(floor.broker.url, EVENTS.format("T5"), [m.encode() for m in records[2:4]])
    wait_until(lambda: contiguous(floor, "T5") == 6, "the gap to close")
    report = json.loads(shoectl("floor", "status", "--dsn", floor.dsn, "--json").stdout)[0]
    assert report["gaps"] == [] and report["lag_records"] == 0 and report["chain_verified"]


def test_two_ingests_share_the_feed_and_still_store_each_record_once(floor: Floor) -> None:
    floor.ingest("ingest-a")
    floor.ingest("ingest-b")
    tables = {f"T{n}": chained_messages(f"T{n}", 200) for n in range(10, 14)}
    for table_id, messages in tables.items():
        publish(floor.broker.url, EVENTS.format(table_id), [m.encode() for m in messages])
    for table_id, messages in tables.items():
        wait_until(lambda t=table_id: contiguous(floor, t) == 200, f"{table_id} verified")
        assert floor_records(floor.dsn, table_id) == [(m.record_id, m.hash) for m in messages]
    assert floor_alarms(floor.dsn) == []


def test_a_record_postgres_cannot_store_is_an_alarm_and_ingest_goes_on(floor: Floor) -> None:
    floor.ingest()
    good = chained_messages("T6", 2)
    poison = replace(good[1], payload={"text": "nul \x00 inside"})
    poison = replace(poison, hash=_rehash(poison))
    other = chained_messages("T7", 3)
    publish(floor.broker.url, EVENTS.format("T6"), [good[0].encode(), poison.encode()])
    publish(floor.broker.url, EVENTS.format("T7"), [m.encode() for m in other])
    wait_until(lambda: contiguous(floor, "T7") == 3, "the other table's records")
    wait_until(lambda: floor_alarms(floor.dsn), "the malformed alarm")
    assert floor_alarms(floor.dsn) == [("T6", "malformed", 2)]
    assert contiguous(floor, "T6") == 1
    assert floor_table(floor.dsn, "T6")["chain_ok"] is False


def test_ingest_stops_when_asked_while_its_database_is_away(
    tmp_path: Path, broker: Mosquitto
) -> None:
    """SIGTERM must end ingest even mid-retry (systemd would otherwise SIGKILL it)."""
    own = Postgres(tmp_path / "own-postgres")
    own.start()
    try:
        with connect(own.dsn) as connection:
            migrate(connection)
        floor = Floor(tmp_path, broker, own.dsn)
        ingest = floor.ingest()
        own.stop("immediate")
        publish(broker.url, EVENTS.format("T8"), [chained_messages("T8", 1)[0].encode()])
        wait_until(lambda: "floor database failed" in ingest.log, "ingest to retry the batch")
        assert ingest.stop() == 0
        assert "a batch not stored" in ingest.log
    finally:
        own.stop()


def test_an_ingest_started_with_its_stop_signals_blocked_still_stops_on_sigterm(
    floor: Floor,
) -> None:
    """A parent thread that had blocked SIGTERM passes the mask on: ingest unblocks it, so
    SIGTERM still ends it after its batch. A blocked SIGTERM is one way to what CI saw twice,
    an ingest running its loop 30 s after its stop signal."""
    ingest = spawned_with_stop_signals_blocked(floor.ingest)
    assert ingest.process is not None
    blocked = signal_mask(ingest.process.pid, "SigBlk")
    assert not in_mask(blocked, signal.SIGTERM), f"SIGTERM still blocked: {blocked:#x}"
    assert ingest.stop() == 0
