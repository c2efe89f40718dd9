"""The journal on a real SQLite file: durability settings, atomicity, queries and the chain."""

from __future__ import annotations

import hashlib
import signal
import sqlite3
import subprocess
import sys
import threading
from enum import StrEnum
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cardshoe.controller.canonical import canonical_json
from cardshoe.controller.journal.chain import GENESIS_HASH, HASHED_FIELDS, record_hash
from cardshoe.controller.journal.errors import JournalError, JournalStorageError
from cardshoe.controller.journal.records import Record
from cardshoe.controller.journal.schema import SCHEMA_VERSION
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.journal.verify import VerifyResult


class Kind(StrEnum):
    CARD_READ = "card_read"
    ROUND_OPENED = "round_opened"


@pytest.fixture
def journal_path(tmp_path: Path) -> Path:
    return tmp_path / "journal.sqlite"


def write_rounds(path: Path, rounds: int, cards_per_round: int = 4) -> None:
    """A small shoe: each round one transaction of an opening record and its cards."""
    with Journal.open(path, table_id="T1", create=True) as journal:
        seq = 0
        for round_no in range(1, rounds + 1):
            with journal.transaction() as tx:
                tx.append(
                    Kind.ROUND_OPENED,
                    {"round": round_no},
                    shoe_id="S1",
                    round_no=round_no,
                    device_serial=None,
                )
                for position in range(cards_per_round):
                    seq += 1
                    tx.append(
                        Kind.CARD_READ,
                        {"card": "AS", "position": position},
                        shoe_id="S1",
                        round_no=round_no,
                        device_serial="SN1",
                        device_seq=seq,
                    )


def tamper(path: Path, *statements: str) -> None:
    """Edit the file behind the journal's back, as an attacker with the sqlite3 shell would."""
    connection = sqlite3.connect(path, isolation_level=None)
    for statement in statements:
        connection.execute(statement)
    connection.close()


def verify(path: Path) -> VerifyResult:
    with Journal.open_readonly(path) as journal:
        return journal.verify()


def test_durability_settings_are_read_back(journal_path: Path) -> None:
    with Journal.open(journal_path, table_id="T1", create=True) as journal:
        assert journal.durability.journal_mode == "wal"
        assert journal.durability.synchronous == "FULL"
    connection = sqlite3.connect(journal_path)
    assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    connection.close()


def test_records_read_back_with_every_field(journal_path: Path) -> None:
    with Journal.open(journal_path, table_id="T1", create=True) as journal:
        with journal.transaction() as tx:
            first = tx.append(
                Kind.CARD_READ,
                {"card": "9H", "face_up": False, "notes": ["é", 1.5]},
                shoe_id="S1",
                round_no=3,
                device_serial="SN1",
                device_seq=41,
            )
            second = tx.append("shoe_closed", {}, shoe_id="S1", round_no=None, device_serial=None)
        assert (first, second) == (1, 2)
        records = list(journal.records())
    assert [record.id for record in records] == [1, 2]
    card = records[0]
    assert card.table_id == "T1"
    assert (card.shoe_id, card.round_no, card.device_serial, card.device_seq) == (
        "S1",
        3,
        "SN1",
        41,
    )
    assert card.kind == "card_read"
    assert card.payload == {"card": "9H", "face_up": False, "notes": ["é", 1.5]}
    assert card.prev_hash == "0" * 64
    assert records[1].prev_hash == card.hash
    assert card.time_utc.endswith("Z")
    assert card.as_dict()["payload"] == card.payload
    assert records[1].round_no is None


def test_exception_inside_transaction_rolls_back_every_record(journal_path: Path) -> None:
    with Journal.open(journal_path, table_id="T1", create=True) as journal:
        with journal.transaction() as tx:
            tx.append("kept", {}, shoe_id=None, round_no=None, device_serial=None)
        with pytest.raises(RuntimeError, match="power cut"), journal.transaction() as tx:
            tx.append("lost", {"n": 1}, shoe_id=None, round_no=None, device_serial=None)
            tx.append("lost", {"n": 2}, shoe_id=None, round_no=None, device_serial=None)
            raise RuntimeError("power cut")
        with pytest.raises(RuntimeError, match="ended"):
            tx.append("stray", {}, shoe_id=None, round_no=None, device_serial=None)
        with journal.transaction() as tx:
            next_id = tx.append("after", {}, shoe_id=None, round_no=None, device_serial=None)
        assert [record.kind for record in journal.records()] == ["kept", "after"]
        assert next_id == 2
        assert journal.verify().ok


@pytest.mark.parametrize(
    ("kind", "payload", "error"),
    [
        ("Card Read", {}, ValueError),
        ("", {}, ValueError),
        ("card_read", ["AS"], TypeError),
        ("card_read", {1: "AS"}, TypeError),
        ("card_read", {"cards": [{2: "AS"}]}, TypeError),
        ("card_read", {"x": float("nan")}, ValueError),
        ("card_read", {"x": object()}, TypeError),
    ],
)
def test_bad_appends_roll_back_the_transaction(
    journal_path: Path, kind: str, payload: object, error: type[Exception]
) -> None:
    with Journal.open(journal_path, table_id="T1", create=True) as journal:
        with pytest.raises(error), journal.transaction() as tx:
            tx.append("good", {}, shoe_id=None, round_no=None, device_serial=None)
            tx.append(kind, payload, shoe_id=None, round_no=None, device_serial=None)
        assert list(journal.records()) == []


def test_device_seq_needs_its_device(journal_path: Path) -> None:
    with Journal.open(journal_path, table_id="T1", create=True) as journal:
        with pytest.raises(ValueError, match="device_serial"), journal.transaction() as tx:
            tx.append("card_read", {}, shoe_id="S1", round_no=1, device_serial=None, device_seq=3)
        assert list(journal.records()) == []


def test_transactions_do_not_nest_and_end_for_good(journal_path: Path) -> None:
    with Journal.open(journal_path, table_id="T1", create=True) as journal:
        with (
            journal.transaction() as tx,
            pytest.raises(RuntimeError, match="nest"),
            journal.transaction(),
        ):
            pass
        with pytest.raises(RuntimeError, match="ended"):
            tx.append("late", {}, shoe_id=None, round_no=None, device_serial=None)


def test_filters_and_pages(journal_path: Path) -> None:
    write_rounds(journal_path, rounds=300)
    with Journal.open_readonly(journal_path) as journal:
        everything = list(journal.records())
        assert len(everything) == 1500
        assert [record.id for record in everything] == list(range(1, 1501))
        round_7 = list(journal.records(round_no=7))
        assert [record.kind for record in round_7] == ["round_opened"] + ["card_read"] * 4
        openings = list(journal.records(kinds=[Kind.ROUND_OPENED]))
        assert len(openings) == 300
        assert list(journal.records(shoe_id="S2")) == []
        assert [record.id for record in journal.records(after_id=1497)] == [1498, 1499, 1500]


def test_last_device_seq_is_the_latest_from_that_device(journal_path: Path) -> None:
    write_rounds(journal_path, rounds=3)
    with Journal.open(journal_path, table_id="T1", create=True) as journal:
        assert journal.last_device_seq("SN1") == 12
        assert journal.last_device_seq("SN2") is None
        with journal.transaction() as tx:
            tx.append("card_read", {}, shoe_id="S2", round_no=1, device_serial="SN1", device_seq=1)
            tx.append("note", {}, shoe_id="S2", round_no=1, device_serial="SN1")
        assert journal.last_device_seq("SN1") == 1


def test_reopen_continues_the_chain(journal_path: Path) -> None:
    write_rounds(journal_path, rounds=2)
    write_rounds(journal_path, rounds=2)
    result = verify(journal_path)
    assert result.ok
    assert result.records == 20


def test_threads_share_one_journal(journal_path: Path) -> None:
    with Journal.open(journal_path, table_id="T1", create=True) as journal:

        def writer(name: str) -> None:
            for number in range(25):
                with journal.transaction() as tx:
                    tx.append(name, {"n": number}, shoe_id=None, round_no=None, device_serial=None)

        threads = [threading.Thread(target=writer, args=(f"w{i}",)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(list(journal.records())) == 100
        assert journal.verify().ok


def test_second_process_reads_while_writer_is_open(journal_path: Path) -> None:
    with Journal.open(journal_path, table_id="T1", create=True) as writer:
        with writer.transaction() as tx:
            tx.append("one", {}, shoe_id=None, round_no=None, device_serial=None)
        with Journal.open_readonly(journal_path) as reader:
            assert [record.kind for record in reader.records()] == ["one"]
            with writer.transaction() as tx:
                tx.append("two", {}, shoe_id=None, round_no=None, device_serial=None)
            assert [record.kind for record in reader.records()] == ["one", "two"]
            assert reader.verify().ok
            with pytest.raises(JournalStorageError, match="readonly"), reader.transaction():
                pass


def test_one_writer_per_journal_across_processes(journal_path: Path) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from cardshoe.controller.journal.store import Journal\n"
            f"journal = Journal.open({str(journal_path)!r}, table_id='T1', create=True)\n"
            "print('open', flush=True)\n"
            "time.sleep(60)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        with pytest.raises(JournalError, match=f"pid {holder.pid}\\) is writing this journal"):
            Journal.open(journal_path, table_id="T1", create=True)
        with Journal.open_readonly(journal_path) as reader:
            assert reader.verify().ok
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    with (
        Journal.open(journal_path, table_id="T1", create=True) as writer,
        writer.transaction() as tx,
    ):
        tx.append("after", {}, shoe_id=None, round_no=None, device_serial=None)


def test_journal_refuses_another_table(journal_path: Path) -> None:
    write_rounds(journal_path, rounds=1)
    with pytest.raises(JournalError, match="belongs to table T1, not T2"):
        Journal.open(journal_path, table_id="T2", create=True)


@pytest.mark.parametrize(
    ("content", "expected"),
    [(b"hello, not a database" * 50, "not a cardshoe journal"), (None, "no such journal")],
)
def test_unusable_files_are_one_line_errors(
    journal_path: Path, content: bytes | None, expected: str
) -> None:
    if content is not None:
        journal_path.write_bytes(content)
    with pytest.raises(JournalError, match=expected) as caught:
        Journal.open_readonly(journal_path)
    assert "\n" not in str(caught.value)


def test_other_sqlite_database_is_left_alone(journal_path: Path) -> None:
    tamper(journal_path, "CREATE TABLE invoices (amount INTEGER)")
    with pytest.raises(JournalError, match="other tables"):
        Journal.open(journal_path, table_id="T1", create=True)
    with pytest.raises(JournalError, match="not a cardshoe journal"):
        Journal.open_readonly(journal_path)
    connection = sqlite3.connect(journal_path)
    assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    connection.close()


def test_newer_schema_is_refused(journal_path: Path) -> None:
    write_rounds(journal_path, rounds=1)
    tamper(journal_path, "PRAGMA user_version = 7")
    with pytest.raises(JournalError, match="newer cardshoe"):
        Journal.open(journal_path, table_id="T1", create=True)


def test_missing_folder_is_named(tmp_path: Path) -> None:
    with pytest.raises(JournalError, match="no folder"):
        Journal.open(tmp_path / "absent" / "journal.sqlite", table_id="T1", create=True)


def test_intact_journal_verifies(journal_path: Path) -> None:
    write_rounds(journal_path, rounds=5)
    result = verify(journal_path)
    assert (result.ok, result.records, result.first_bad_id, result.reason) == (True, 25, None, None)
    with Journal.open_readonly(journal_path) as journal:
        assert result.head_hash == list(journal.records())[-1].hash


def test_empty_journal_verifies(journal_path: Path) -> None:
    Journal.open(journal_path, table_id="T1", create=True).close()
    assert verify(journal_path).ok


@pytest.mark.parametrize(
    ("statements", "first_bad_id", "reason"),
    [
        (['UPDATE records SET payload = \'{"card":"KS","position":1}\' WHERE id = 8'], 8, "edited"),
        (["UPDATE records SET round_no = 9 WHERE id = 12"], 12, "edited"),
        (["UPDATE records SET time_ns = time_ns + 1 WHERE id = 3"], 3, "edited"),
        (["DELETE FROM records WHERE id = 10"], 11, "record 10 is missing"),
        (["DELETE FROM records WHERE id IN (1, 2)"], 3, "records 1-2 are missing"),
        (
            [
                "UPDATE records SET id = -1 WHERE id = 6",
                "UPDATE records SET id = 6 WHERE id = 7",
                "UPDATE records SET id = 7 WHERE id = -1",
            ],
            6,
            "does not link to record 5",
        ),
        (["DELETE FROM records WHERE id >= 24"], 24, "records 24-25 are missing from the end"),
        (["UPDATE records SET prev_hash = hash WHERE id = 5"], 5, "does not link to record 4"),
        (["DELETE FROM chain_head"], None, "chain head is missing"),
    ],
)
def test_verify_names_the_first_bad_record(
    journal_path: Path, statements: list[str], first_bad_id: int | None, reason: str
) -> None:
    write_rounds(journal_path, rounds=5)
    tamper(journal_path, *statements)
    result = verify(journal_path)
    assert not result.ok
    assert result.first_bad_id == first_bad_id
    assert reason in (result.reason or "")


def test_verify_catches_swapped_records_with_their_hashes(journal_path: Path) -> None:
    """Moving whole rows, hashes included, breaks the links between them."""
    write_rounds(journal_path, rounds=2)
    columns = "time_ns, table_id, shoe_id, round_no, device_serial, device_seq, kind, payload"
    swap = ", ".join(
        f"{name} = other.{name}" for name in [*columns.split(", "), "prev_hash", "hash"]
    )
    tamper(
        journal_path,
        "CREATE TEMP TABLE saved AS SELECT * FROM records WHERE id IN (3, 4)",
        f"UPDATE records SET {swap} FROM (SELECT * FROM saved) AS other "
        "WHERE records.id + other.id = 7",
    )
    result = verify(journal_path)
    assert (result.ok, result.first_bad_id) == (False, 3)
    assert "does not link to record 2" in (result.reason or "")


def test_verify_catches_a_record_added_outside_the_journal(journal_path: Path) -> None:
    write_rounds(journal_path, rounds=1)
    with Journal.open_readonly(journal_path) as journal:
        last: Record = list(journal.records())[-1]
    forged_hash = record_hash(
        last.hash, (6, last.time_ns + 1, "T1", "S1", 1, None, None, "payout", "{}")
    )
    tamper(
        journal_path,
        f"INSERT INTO records VALUES (6, {last.time_ns + 1}, 'T1', 'S1', 1, NULL, NULL, "
        f"'payout', '{{}}', '{last.hash}', '{forged_hash}')",
    )
    result = verify(journal_path)
    assert (result.ok, result.first_bad_id) == (False, 6)
    assert "added outside the journal" in (result.reason or "")


def test_a_version_2_journal_gains_the_index_by_kind_and_latest_reads_through_it(
    journal_path: Path,
) -> None:
    """The lookups a start-up makes (the latest table.idle, the last shoes' starts) go
    through an index by kind, which an older journal gains when it is next opened."""
    with Journal.open(journal_path, table_id="T1", create=True) as journal:
        for shoe in range(1, 5):
            with journal.transaction() as tx:
                tx.append("shoe.started", {"n": shoe}, shoe_id=f"S{shoe}", round_no=None,
                          device_serial=None)  # fmt: skip
                tx.append("card", {}, shoe_id=f"S{shoe}", round_no=1, device_serial=None)
    tamper(journal_path, "DROP INDEX records_by_kind", "PRAGMA user_version = 2")
    with Journal.open(journal_path, table_id="T1") as journal:
        assert [r.payload["n"] for r in journal.latest(["shoe.started"], 2)] == [3, 4]
        assert [r.kind for r in journal.latest(["card", "shoe.started"], 3)] == [
            "card",
            "shoe.started",
            "card",
        ]
        assert journal.latest(["table.idle"], 5) == []
    connection = sqlite3.connect(journal_path)
    assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 3
    plan = connection.execute(
        "EXPLAIN QUERY PLAN SELECT id FROM records WHERE kind IN ('shoe.started') "
        "ORDER BY id DESC LIMIT 2"
    ).fetchall()
    connection.close()
    assert "records_by_kind" in " ".join(str(step) for step in plan)
    assert verify(journal_path).ok


@given(
    st.lists(
        st.one_of(
            st.none(),
            st.integers(),
            st.text(),
            st.booleans(),
            st.floats(allow_nan=False, allow_infinity=False),
        ),
        min_size=len(HASHED_FIELDS),
        max_size=len(HASHED_FIELDS),
    )
)
def test_a_record_hash_is_sha256_of_the_canonical_json_of_its_fields(values: list) -> None:
    """record_hash spells the canonical JSON out for text, integers and NULL; any value is
    hashed over exactly the text canonical_json gives."""
    body = canonical_json(values).encode("utf-8")
    expected = hashlib.sha256(bytes.fromhex(GENESIS_HASH) + body).hexdigest()
    assert record_hash(GENESIS_HASH, values) == expected


def test_text_that_is_not_utf8_fails_verify_at_its_record(journal_path: Path) -> None:
    write_rounds(journal_path, rounds=2)
    tamper(journal_path, "UPDATE records SET kind = CAST(x'ff6361726400' AS TEXT) WHERE id = 3")
    result = verify(journal_path)
    assert not result.ok
    assert result.first_bad_id == 3
    assert result.reason == "its contents do not match its hash: the record was edited"


def test_records_with_every_kind_of_text_verify(journal_path: Path) -> None:
    """verify hashes SQLite's spelling of each record first: control characters, quotes,
    backslashes, non-ASCII and line separators must hash as the journal wrote them."""
    odd = '\x00\x01\x1f\x7f"\\/é漢😀\u2028\u2029\n\t'
    with (
        Journal.open(journal_path, table_id=odd, create=True) as journal,
        journal.transaction() as tx,
    ):
        tx.append("odd", {odd: [odd, 1.5, -0.0, 10**30, None, True]}, shoe_id=odd,
                  round_no=0, device_serial=odd, device_seq=2**62)  # fmt: skip
    result = verify(journal_path)
    assert (result.ok, result.records) == (True, 1)
