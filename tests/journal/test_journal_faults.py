"""Issue 11, the journal under storage faults, on real SQLite files (cases 1, 3, 4, 5).

Each test names the case it reproduces. The faults are made the way a disk
or a person makes them: files unlinked, random bytes written into a stopped
journal, an index that no longer matches its table, a file size limit the
kernel enforces, a reader that never lets go of its snapshot.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.shoectl import ShoectlRunner

from cardshoe.controller.journal.errors import JournalError, JournalStorageError
from cardshoe.controller.journal.storage_watch import (
    CHECKPOINT_EVERY,
    FOLDER_SETTLED_NS,
    WAL_ALARM_FRAMES,
    StorageProblem,
)
from cardshoe.controller.journal.store import Journal

INTERNAL_ERROR = 70
CORRUPTION_TRIALS = 30


@pytest.fixture
def journal_path(tmp_path: Path) -> Path:
    return tmp_path / "journal.sqlite"


def append_events(journal: Journal, first_seq: int, count: int, padding: int = 0) -> None:
    """count device events, one transaction each, as the session journals cards."""
    for seq in range(first_seq, first_seq + count):
        with journal.transaction() as tx:
            tx.append(
                "device.card_read",
                {"seq": seq, "card": "AS", "padding": "x" * padding},
                shoe_id="S1",
                round_no=seq // 6 + 1,
                device_serial="SN1",
                device_seq=seq,
            )


def a_journal_of(path: Path, events: int) -> None:
    Journal.init(path, table_id="T1")
    with Journal.open(path, table_id="T1") as journal:
        append_events(journal, 1, events)


# --- case 1: a lost journal is never silently replaced ---------------------------------


def test_case1_a_missing_journal_is_refused_not_made(journal_path: Path) -> None:
    with pytest.raises(JournalError, match="no journal: make a new table's journal with"):
        Journal.open(journal_path, table_id="T1")
    assert not journal_path.exists()


def test_case1_a_journal_whose_wal_was_lost_before_any_checkpoint_is_refused(
    journal_path: Path,
) -> None:
    """A main file that never received a checkpoint holds nothing: it is not a new journal."""
    journal_path.write_bytes(b"")
    with pytest.raises(JournalError, match="holds no journal"):
        Journal.open(journal_path, table_id="T1")
    assert journal_path.read_bytes() == b""


def test_case1_journal_init_puts_the_schema_into_the_main_file(journal_path: Path) -> None:
    """After init the table id survives the -wal being lost, so the journal still opens and
    the device's acknowledged events show as a loss (journal_behind_device), not a new table."""
    Journal.init(journal_path, table_id="T1")
    assert not Path(f"{journal_path}-wal").exists()
    with Journal.open(journal_path, table_id="T1") as journal:
        assert journal.last_device_seq("SN1") is None
    with pytest.raises(JournalError, match="a journal is already there"):
        Journal.init(journal_path, table_id="T1")


def test_case1_shoectl_journal_init_makes_the_configured_journal_once(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    config = tmp_path / "table.toml"
    config.write_text('table_id = "T7"\n[service]\njournal_path = "j.sqlite"\n')
    made = shoectl("journal", "init", "--config", str(config))
    assert (made.returncode, made.stdout.strip()) == (
        0,
        f"{tmp_path / 'j.sqlite'}: new journal for table T7",
    )
    again = shoectl("journal", "init", "--config", str(config))
    assert again.returncode == 2
    assert again.stderr.startswith("shoectl: error: ") and len(again.stderr.splitlines()) == 1
    kept = shoectl("journal", "init", "--config", str(config), "--if-missing")
    assert (kept.returncode, "kept the journal already there" in kept.stdout) == (0, True)
    with Journal.open_readonly(tmp_path / "j.sqlite") as journal:
        assert journal.table_id == "T7"


def test_case1_a_wal_unlinked_under_the_writer_is_noticed_within_one_commit(
    journal_path: Path,
) -> None:
    a_journal_of(journal_path, 0)
    with Journal.open(journal_path, table_id="T1") as journal:
        append_events(journal, 1, 10)
        Path(f"{journal_path}-wal").unlink()
        append_events(journal, 11, 1)
        (notice,) = journal.take_notices()
        assert notice.problem is StorageProblem.FILES_REPLACED
        assert str(journal_path) in notice.detail
        append_events(journal, 12, 5)
        assert journal.take_notices() == []
    with Journal.open_readonly(journal_path) as reopened:
        assert [r.device_seq for r in reopened.records()] == list(range(1, 17))
        assert reopened.verify().ok


def a_writer_whose_folder_is_quiet(journal_path: Path) -> Journal:
    """A writer past FOLDER_SETTLED_NS without a change in its folder: after each commit it
    then stats the folder alone, not the two files (storage_watch.py)."""
    a_journal_of(journal_path, 0)
    journal = Journal.open(journal_path, table_id="T1")
    append_events(journal, 1, 1)
    time.sleep(FOLDER_SETTLED_NS / 1e9 + 0.2)
    append_events(journal, 2, 3)
    return journal


def test_case1_a_wal_unlinked_in_a_quiet_folder_is_noticed_within_one_commit(
    journal_path: Path,
) -> None:
    with a_writer_whose_folder_is_quiet(journal_path) as journal:
        Path(f"{journal_path}-wal").unlink()
        append_events(journal, 5, 1)
        (notice,) = journal.take_notices()
        assert notice.problem is StorageProblem.FILES_REPLACED
        append_events(journal, 6, 1)
    with Journal.open_readonly(journal_path) as reopened:
        assert [r.device_seq for r in reopened.records()] == list(range(1, 7))
        assert reopened.verify().ok


def test_case1_a_journal_moved_out_of_a_quiet_folder_stops_the_writer(journal_path: Path) -> None:
    with a_writer_whose_folder_is_quiet(journal_path) as journal:
        journal_path.rename(journal_path.with_name("moved.sqlite"))
        with pytest.raises(JournalStorageError, match="removed or replaced"):
            append_events(journal, 5, 1)


# --- case 3: verify names every corruption, exit 1 --------------------------------------


def damage(path: Path, rng: random.Random) -> None:
    """Random bytes over a random span of the file, past SQLite's 100-byte header."""
    size = path.stat().st_size
    offset = rng.randrange(100, size - 64)
    with path.open("r+b") as file:
        file.seek(offset)
        file.write(rng.randbytes(rng.randrange(8, 64)))


def exported(shoectl: ShoectlRunner, path: Path) -> subprocess.CompletedProcess[str]:
    return shoectl("journal", "export", str(path))


def test_case3_verify_names_random_corruption_in_one_line_with_exit_1(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    original = tmp_path / "original.sqlite"
    a_journal_of(original, 120)
    clean = exported(shoectl, original).stdout
    caught = 0
    for trial in range(CORRUPTION_TRIALS):
        copy = tmp_path / f"trial-{trial}.sqlite"
        copy.write_bytes(original.read_bytes())
        damage(copy, random.Random(trial))
        result = shoectl("journal", "verify", str(copy))
        assert result.returncode in (0, 1), (trial, result.stderr)
        if result.returncode == 0:
            # The bytes fell where nothing is kept (free space in a page): every record reads
            # back as it was written.
            assert exported(shoectl, copy).stdout == clean, trial
            continue
        caught += 1
        (line,) = result.stderr.splitlines()
        assert line.startswith(f"shoectl: error: {copy}: verification failed at "), line
        for command in ("show", "export"):
            listing = shoectl("journal", command, str(copy))
            assert listing.returncode != INTERNAL_ERROR, (trial, command, listing.stderr)
            assert "Traceback" not in listing.stderr
    assert caught >= CORRUPTION_TRIALS // 2


def break_the_device_index(path: Path) -> None:
    """The index records_by_device no longer matches its table, as a torn page leaves it."""
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA writable_schema = ON")
    connection.execute(
        "UPDATE sqlite_schema SET sql = 'CREATE INDEX records_by_device ON records "
        "(device_serial, id) WHERE device_seq IS NULL' WHERE name = 'records_by_device'"
    )
    connection.commit()
    connection.close()


def test_case3_verify_runs_sqlites_integrity_check(tmp_path: Path, shoectl: ShoectlRunner) -> None:
    path = tmp_path / "journal.sqlite"
    a_journal_of(path, 12)
    break_the_device_index(path)
    result = shoectl("journal", "verify", str(path), "--json")
    assert result.returncode == 1
    answer = json.loads(result.stdout)
    assert answer["ok"] is False
    assert "integrity check" in answer["reason"] and "records_by_device" in answer["reason"]
    plain = shoectl("journal", "verify", str(path))
    assert plain.returncode == 1 and len(plain.stderr.splitlines()) == 1


def test_case3_a_damaged_file_with_sqlites_header_is_exit_1_not_2(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    path = tmp_path / "journal.sqlite"
    a_journal_of(path, 30)
    with path.open("r+b") as file:
        file.seek(16)
        file.write(b"\xff" * 84)
    result = shoectl("journal", "verify", str(path))
    assert result.returncode == 1, result.stderr
    (line,) = result.stderr.splitlines()
    assert "damaged" in line and str(path) in line


# --- case 4: the start-up check, from the last checked anchor ---------------------------


def edit_payload(path: Path, record_id: int) -> None:
    connection = sqlite3.connect(path)
    connection.execute('UPDATE records SET payload = \'{"card":"KD"}\' WHERE id = ?', (record_id,))
    connection.commit()
    connection.close()


def test_case4_the_start_up_check_walks_from_the_last_checked_anchor(journal_path: Path) -> None:
    a_journal_of(journal_path, 40)
    with Journal.open(journal_path, table_id="T1") as journal:
        first = journal.check_since_anchor()
        assert (first.ok, first.records) == (True, 40)
        append_events(journal, 41, 10)
    edit_payload(journal_path, 45)
    with Journal.open(journal_path, table_id="T1") as journal:
        second = journal.check_since_anchor()
    assert (second.ok, second.first_bad_id) == (False, 45)
    assert "do not match its hash" in (second.reason or "")


def test_case4_the_start_up_check_follows_a_prune(journal_path: Path) -> None:
    """Records pruned before or past the anchor the last start-up reached: still quick, still
    counted right, and an edit after the anchor is still found."""
    a_journal_of(journal_path, 40)
    with Journal.open(journal_path, table_id="T1") as journal:
        assert journal.check_since_anchor().ok
        append_events(journal, 41, 10)
        journal.prune_through(20)
        after_prune = journal.check_since_anchor()
        assert (after_prune.ok, after_prune.records, after_prune.last_id) == (True, 30, 50)
        journal.prune_through(50)
        append_events(journal, 51, 5)
        past_anchor = journal.check_since_anchor()
        assert (past_anchor.ok, past_anchor.records, past_anchor.last_id) == (True, 5, 55)
        append_events(journal, 56, 5)
    edit_payload(journal_path, 58)
    with Journal.open(journal_path, table_id="T1") as journal:
        result = journal.check_since_anchor()
    assert (result.ok, result.first_bad_id) == (False, 58)


def test_case4_the_start_up_check_finds_an_index_redefined(journal_path: Path) -> None:
    a_journal_of(journal_path, 12)
    break_the_device_index(journal_path)
    with Journal.open(journal_path, table_id="T1") as journal:
        result = journal.check_since_anchor()
    assert result.ok is False and "records_by_device" in (result.reason or "")


def test_case4_a_rewritten_anchor_record_fails_the_start_up_check(journal_path: Path) -> None:
    a_journal_of(journal_path, 20)
    with Journal.open(journal_path, table_id="T1") as journal:
        assert journal.check_since_anchor().ok
    edit_payload(journal_path, 20)
    with Journal.open(journal_path, table_id="T1") as journal:
        result = journal.check_since_anchor()
    assert (result.ok, result.first_bad_id) == (False, 20)


# --- case 5: failing checkpoints are reported, never silent ------------------------------

FILE_SIZE_LIMITED_WRITER = """
import resource, sys
from pathlib import Path
from cardshoe.controller.journal.errors import JournalError
from cardshoe.controller.journal.store import Journal
path, limit, events = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
with Journal.open(path, table_id="T1") as journal:
    try:
        for seq in range(1, events + 1):
            with journal.transaction() as tx:
                tx.append("device.card_read", {"padding": "x" * 1500}, shoe_id="S1",
                          round_no=1, device_serial="SN1", device_seq=seq)
            for notice in journal.take_notices():
                print("NOTICE", seq, notice.problem.value, notice.detail, flush=True)
    except JournalError as exc:
        print("FAILED", seq, exc, flush=True)
"""


def test_case5_checkpoints_that_cannot_grow_the_main_file_are_reported(
    journal_path: Path,
) -> None:
    """The kernel's file size limit lets the -wal take records while the main file cannot
    grow: every checkpoint fails. The journal says so long before a commit fails."""
    Journal.init(journal_path, table_id="T1")
    limit = 16 * 1024 * 1024
    child = subprocess.run(
        [sys.executable, "-c", FILE_SIZE_LIMITED_WRITER, str(journal_path), str(limit), "40000"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    lines = child.stdout.splitlines()
    notices = [line for line in lines if line.startswith("NOTICE")]
    failed = [line for line in lines if line.startswith("FAILED")]
    assert notices, child.stdout[-2000:]
    assert all(StorageProblem.CHECKPOINT_FAILING.value in line for line in notices)
    assert str(journal_path) in notices[0]
    assert failed, "the limit must stop the -wal too"
    first_notice, failure = int(notices[0].split()[1]), int(failed[0].split()[1])
    assert first_notice < failure - CHECKPOINT_EVERY
    assert "file size limit" in failed[0]
    with Journal.open_readonly(journal_path) as journal:
        assert journal.verify().ok
        assert journal.last_device_seq("SN1") == failure - 1


def test_case5_a_reader_that_holds_the_wal_back_is_reported(journal_path: Path) -> None:
    a_journal_of(journal_path, 1)
    reader = sqlite3.connect(journal_path, isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM records").fetchone()
    try:
        with Journal.open(journal_path, table_id="T1") as journal:
            notices = []
            seq = 2
            while not notices and seq < 20 * WAL_ALARM_FRAMES:
                append_events(journal, seq, CHECKPOINT_EVERY)
                seq += CHECKPOINT_EVERY
                notices = journal.take_notices()
            wal_size = os.path.getsize(f"{journal_path}-wal")
    finally:
        reader.close()
    (notice,) = notices
    assert notice.problem is StorageProblem.CHECKPOINT_FAILING
    assert "reader holds an old snapshot" in notice.detail
    assert wal_size >= WAL_ALARM_FRAMES * 4096


@pytest.mark.parametrize(
    "payload", ["[" * 5000 + "]" * 5000, "9" * 5000], ids=["nested deep", "5,000 digits"]
)
def test_case3_a_payload_rewritten_as_json_python_cannot_read_is_named_not_a_crash(
    tmp_path: Path, shoectl: ShoectlRunner, payload: str
) -> None:
    """JSON nested past Python's recursion limit, or an integer past its digit limit: json
    raises neither as a JSONDecodeError, and each had reached the user as an internal error."""
    path = tmp_path / "journal.sqlite"
    a_journal_of(path, 20)
    connection = sqlite3.connect(path)
    with connection:
        connection.execute("UPDATE records SET payload = ? WHERE id = 5", (payload,))
    connection.close()
    verified = shoectl("journal", "verify", str(path))
    assert verified.returncode == 1
    assert verified.stderr.startswith(f"shoectl: error: {path}: verification failed at record 5")
    for command in ("show", "export"):
        listing = shoectl("journal", command, str(path))
        assert listing.returncode == 1, listing.stderr
        (line,) = listing.stderr.splitlines()
        assert line == (
            f"shoectl: error: {path}: record 5 holds a payload that is not JSON: "
            "run 'shoectl journal verify'"
        )
