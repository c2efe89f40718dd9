"""Issue 21, case 3: one malformed MQTT message must not stop the floor.

Each form below once killed `shoectl floor ingest` (exit 70), and again at
every restart because the broker delivered it again. Now each is quarantined
in rejected_messages (the hash of its bytes and the reason), alarmed and
acknowledged, and every table's records go on reaching PostgreSQL.
"""

from __future__ import annotations

import hashlib
import json
import random

import pytest
from support.floor_support import (
    Floor,
    chained_messages,
    floor_alarms,
    floor_records,
    floor_table,
    publish,
    publish_each,
    rejected_messages,
)
from support.service_support import wait_until

EVENTS = "cardshoe/v1/casino-1/{}/events"
STATUS = "cardshoe/v1/casino-1/{}/status"


def _record_with(raw_payload: str) -> bytes:
    """A record of table P1 whose payload is the given JSON text, spliced in as bytes."""
    record = json.loads(chained_messages("P1", 1)[0].encode())
    record["payload"] = "@@"
    return json.dumps(record).replace('"@@"', raw_payload).encode()


DEEP = b"[" * 100_000 + b"]" * 100_000
DEEP_PAYLOAD = _record_with('{"a": ' * 500 + "1" + "}" * 500)
LONG_INTEGER = _record_with('{"n": ' + "7" * 5000 + "}")
NAN = _record_with('{"odds": NaN}')
INFINITY = _record_with('{"odds": 1e999}')
LONE_SURROGATE = _record_with('{"note": "\\ud800"}')
NUL = _record_with('{"note": "a\\u0000b"}')
NOT_A_RECORD_IN_AN_ARRAY = b"[" + chained_messages("P1", 1)[0].encode() + b",5]"
TOO_MANY_RECORDS = b"[" + b",".join(m.encode() for m in chained_messages("P1", 201)) + b"]"
STATUS_ONLINE_5 = json.dumps({"online": 5, "table_id": "P1"}).encode()
STATUS_SURROGATE = b'{"online": true, "table_id": "P1", "version": "\\udfff"}'
RAW_SURROGATE = _record_with('{"note": "@"}').replace(b'"@"', b'"\xed\xa0\x80"')
"""A surrogate encoded as UTF-8 bytes (not valid UTF-8), which json.loads of bytes lets in."""

POISON = {
    "json nested 100,000 deep": (EVENTS, DEEP),
    "a record whose payload nests 500 deep": (EVENTS, DEEP_PAYLOAD),
    "a 5,000-digit integer": (EVENTS, LONG_INTEGER),
    "a NaN": (EVENTS, NAN),
    "an infinite number": (EVENTS, INFINITY),
    "a lone surrogate": (EVENTS, LONE_SURROGATE),
    "a surrogate in raw bytes": (EVENTS, RAW_SURROGATE),
    "a NUL character": (EVENTS, NUL),
    "an array with an item that is not a record": (EVENTS, NOT_A_RECORD_IN_AN_ARRAY),
    "an array of more records than a message may hold": (EVENTS, TOO_MANY_RECORDS),
    "a retained status with online 5": (STATUS, STATUS_ONLINE_5),
    "a retained status with a lone surrogate": (STATUS, STATUS_SURROGATE),
}


def _contiguous(floor: Floor, table_id: str) -> int:
    return (floor_table(floor.dsn, table_id) or {}).get("contiguous_id", 0)


@pytest.mark.parametrize("form", list(POISON))
def test_one_message_no_longer_stops_the_floor(floor: Floor, form: str) -> None:
    topic, body = POISON[form]
    retain = topic == STATUS
    ingest = floor.ingest()
    good = chained_messages("G1", 6)
    publish(floor.broker.url, EVENTS.format("G1"), [m.encode() for m in good[:3]])
    publish(floor.broker.url, topic.format("P1"), [body], retain=retain)
    publish(floor.broker.url, EVENTS.format("G1"), [m.encode() for m in good[3:]])
    wait_until(lambda: _contiguous(floor, "G1") == 6, f"G1 verified past the poison\n{ingest.log}")
    wait_until(lambda: rejected_messages(floor.dsn), "the quarantined message")

    digest = hashlib.sha256(body).hexdigest()
    ((table_id, quarantined, reason),) = rejected_messages(floor.dsn)
    assert (table_id, quarantined) == ("P1", digest)
    assert reason.startswith("malformed: ")
    assert [(t, kind) for t, kind, _ in floor_alarms(floor.dsn)] == [("P1", "malformed")]
    assert floor_records(floor.dsn, "G1") == [(m.record_id, m.hash) for m in good]
    assert ingest.process is not None and ingest.process.poll() is None
    assert "Traceback" not in ingest.log

    # A restarted ingest is handed a retained poison again: quarantined again, still alive.
    ingest.stop()
    restarted = floor.ingest()
    if retain:
        wait_until(lambda: len(rejected_messages(floor.dsn)) == 2, "the retained poison again")
    later = chained_messages("G1", 2, first_id=7)
    publish(floor.broker.url, EVENTS.format("G1"), [m.encode() for m in later])
    wait_until(lambda: _contiguous(floor, "G1") == 8, f"G1 after the restart\n{restarted.log}")
    assert restarted.process is not None and restarted.process.poll() is None


GOOD_TABLES = ("G1", "G2", "G3")
CAMPAIGN_SIZE = 10_000


def _campaign(seed: int) -> list[tuple[str, bytes, bool]]:
    """(topic, body, retain) of every poison message: each form above, then random bytes."""
    chooser = random.Random(seed)
    tables = ("P1", "P2", *GOOD_TABLES)
    messages = []
    forms = list(POISON.values())
    for number in range(CAMPAIGN_SIZE):
        table = tables[number % len(tables)]
        if number < len(forms) * 20:
            topic, body = forms[number % len(forms)]
            body = body.replace(b'"P1"', json.dumps(table).encode()) + b" " * (number // 8)
        else:
            topic = EVENTS if number % 7 else STATUS
            body = chooser.randbytes(chooser.randrange(0, 300))
        messages.append((topic.format(table), body, topic == STATUS))
    return messages


@pytest.mark.timeout(600)  # 10,000 messages on a shared, loaded machine
def test_a_poison_campaign_of_ten_thousand_messages_leaves_ingest_alive_and_nothing_lost(
    floor: Floor,
) -> None:
    ingest = floor.ingest()
    poison = _campaign(21)
    good = {table: chained_messages(table, 300) for table in GOOD_TABLES}
    chunk = len(poison) // 10
    for part in range(10):
        mixed = [
            (EVENTS.format(table), message.encode(), False)
            for table, records in good.items()
            for message in records[part * 30 : (part + 1) * 30]
        ]
        publish_each(floor.broker.url, mixed + poison[part * chunk : (part + 1) * chunk])
    for table in GOOD_TABLES:
        wait_until(
            lambda table=table: _contiguous(floor, table) == 300,
            f"{table} verified\n{ingest.log[-2000:]}",
        )
        assert floor_records(floor.dsn, table) == [(m.record_id, m.hash) for m in good[table]]
    wait_until(
        lambda: len(rejected_messages(floor.dsn)) >= len(poison),
        f"every poison message quarantined\n{ingest.log[-2000:]}",
        120.0,
    )
    quarantined = sorted(digest for _, digest, _ in rejected_messages(floor.dsn))
    assert quarantined == sorted(hashlib.sha256(body).hexdigest() for _, body, _ in poison)
    assert ingest.process is not None and ingest.process.poll() is None
    assert "Traceback" not in ingest.log
