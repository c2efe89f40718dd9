"""shoectl journal show | export | verify, run as a technician would, on real journal files."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from cardshoe.controller.journal.errors import JournalError
from cardshoe.controller.journal.records import ChainAnchor
from cardshoe.controller.journal.store import Journal

CARDS = ("AS", "9H", "KD", "3C")


def write_shoe(path: Path, shoe_id: str = "S1", rounds: int = 3) -> None:
    with Journal.open(path, table_id="T1", create=True) as journal:
        for round_no in range(1, rounds + 1):
            with journal.transaction() as tx:
                tx.append(
                    "round_opened",
                    {"round": round_no},
                    shoe_id=shoe_id,
                    round_no=round_no,
                    device_serial=None,
                )
                for position, card in enumerate(CARDS):
                    tx.append(
                        "card_read",
                        {"card": card, "position": position},
                        shoe_id=shoe_id,
                        round_no=round_no,
                        device_serial="SN1",
                        device_seq=round_no * 10 + position,
                    )


@pytest.fixture
def journal_file(tmp_path: Path) -> Path:
    path = tmp_path / "journal.sqlite"
    write_shoe(path)
    return path


def assert_one_line_error(result: subprocess.CompletedProcess[str], code: int, text: str) -> None:
    assert result.returncode == code, result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert text in result.stderr


def test_show_lists_every_record(shoectl, journal_file: Path) -> None:
    result = shoectl("journal", "show", str(journal_file))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 15
    assert lines[1].split()[0] == "2"
    assert "SN1#10" in lines[1]
    assert "card_read" in lines[1]
    assert '"card": "AS"' in lines[1]


def field_spans(line: str) -> list[tuple[int, int]]:
    """Where each of show's seven columns starts and ends in one of its lines."""
    spans, position = [], 0
    for field in line.split(None, 6):
        start = line.index(field, position)
        position = start + len(field)
        spans.append((start, position))
    return spans


def test_show_sizes_each_column_to_its_widest_value(shoectl, journal_file: Path) -> None:
    """Ids 1 to 15 and kinds of 9 and 12 letters: each column as wide as its widest value
    and no wider, numbers aligned right, text left, so every line's columns line up."""
    result = shoectl("journal", "show", str(journal_file), check=True)
    rows = [field_spans(line) for line in result.stdout.splitlines()]
    assert len(rows) == 15 and all(len(spans) == 7 for spans in rows)
    right_aligned = {0, 3}
    for column in range(6):
        edges = {spans[column][1 if column in right_aligned else 0] for spans in rows}
        assert len(edges) == 1, f"column {column} does not line up: {edges}"
        widest = max(end - start for start, end in (spans[column] for spans in rows))
        next_start = rows[0][column + 1][0]
        column_start = (
            rows[0][column][1] - widest if column in right_aligned else rows[0][column][0]
        )
        assert next_start - column_start == widest + 2, f"column {column} is not sized to fit"
    assert rows[0][0] == (1, 2), "id 1 is aligned right under 15, with no padding before it"


def test_show_filters_and_last(shoectl, journal_file: Path) -> None:
    def ids(*options: str) -> list[int]:
        result = shoectl("journal", "show", str(journal_file), "--json", *options)
        assert result.returncode == 0, result.stderr
        return [record["id"] for record in json.loads(result.stdout)]

    assert ids() == list(range(1, 16))
    assert ids("--round", "2") == [6, 7, 8, 9, 10]
    assert ids("--kind", "round_opened") == [1, 6, 11]
    assert ids("--kind", "round_opened", "--last", "2") == [6, 11]
    assert ids("--shoe", "S2") == []
    empty = shoectl("journal", "show", str(journal_file), "--shoe", "S2")
    assert empty.stdout.strip() == "no matching records"


def test_export_json_lines_carry_every_column(shoectl, journal_file: Path) -> None:
    result = shoectl("journal", "export", str(journal_file), "--round", "3")
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [record["id"] for record in records] == [11, 12, 13, 14, 15]
    assert records[1]["payload"] == {"card": "AS", "position": 0}
    assert records[1]["device_seq"] == 30
    assert records[1]["prev_hash"] == records[0]["hash"]
    assert records[0]["time_utc"].endswith("Z")


def test_export_csv_keeps_the_payload_as_json(shoectl, journal_file: Path) -> None:
    result = shoectl(
        "journal", "export", str(journal_file), "--format", "csv", "--kind", "card_read"
    )
    assert result.returncode == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert len(rows) == 12
    assert json.loads(rows[0]["payload"]) == {"card": "AS", "position": 0}
    assert rows[0]["device_serial"] == "SN1"
    assert list(rows[0])[:3] == ["id", "time_utc", "time_ns"]


BREAKERS = "\u2028\x85\x9b\x7f\u2029\x1c"
"""What JSON leaves as typed and a terminal or str.splitlines() takes as a line's end or a
command: the line and paragraph separators, NEL, CSI, DEL and a file separator."""
NOTE = "a" + "b".join(BREAKERS) + "c"


@pytest.fixture
def odd_payload_journal(tmp_path: Path) -> Path:
    path = tmp_path / "journal.sqlite"
    with Journal.open(path, table_id="T1", create=True) as journal, journal.transaction() as tx:
        for round_no in (1, 2):
            tx.append(
                "round_opened",
                {"round": round_no, "note": NOTE},
                shoe_id="S1",
                round_no=round_no,
                device_serial=None,
            )
    return path


def printed(shoectl, journal: Path, *args: str) -> list[str]:
    """The command's output lines, after checking none of BREAKERS got through as typed."""
    result = shoectl("journal", *args[:1], str(journal), *args[1:])
    assert result.returncode == 0, result.stderr
    assert not any(character in result.stdout for character in BREAKERS), result.stdout
    return result.stdout.splitlines()


def test_a_payload_with_line_breaking_text_keeps_one_line_a_record(
    shoectl, odd_payload_journal: Path
) -> None:
    shown = printed(shoectl, odd_payload_journal, "show")
    assert [line.split()[0] for line in shown] == ["1", "2"]
    (whole,) = printed(shoectl, odd_payload_journal, "show", "--json")
    assert [record["payload"]["note"] for record in json.loads(whole)] == [NOTE, NOTE]
    exported = printed(shoectl, odd_payload_journal, "export")
    assert [json.loads(line)["payload"]["note"] for line in exported] == [NOTE, NOTE]
    table = printed(shoectl, odd_payload_journal, "export", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO("\n".join(table))))
    assert [json.loads(row["payload"])["note"] for row in rows] == [NOTE, NOTE]


def test_verify_prints_the_anchor(shoectl, journal_file: Path) -> None:
    result = shoectl("journal", "verify", str(journal_file))
    assert result.returncode == 0, result.stderr
    assert "ok, 15 records" in result.stdout
    anchor = result.stdout.split("anchor ")[1].strip()
    assert ChainAnchor.parse(anchor).record_id == 15
    again = shoectl("journal", "verify", str(journal_file), "--anchor", anchor, "--json")
    assert again.returncode == 0
    assert json.loads(again.stdout)["anchor"] == anchor


def test_verify_names_the_edited_record(shoectl, journal_file: Path) -> None:
    connection = sqlite3.connect(journal_file)
    connection.execute("""UPDATE records SET payload = '{"card":"9S","position":1}' WHERE id = 8""")
    connection.commit()
    connection.close()
    result = shoectl("journal", "verify", str(journal_file))
    assert_one_line_error(result, 1, "record 8")
    assert "edited" in result.stderr
    as_json = shoectl("journal", "verify", str(journal_file), "--json")
    assert as_json.returncode == 1
    report = json.loads(as_json.stdout)
    assert (report["ok"], report["first_bad_id"], report["records"]) == (False, 8, 7)


def test_anchor_catches_a_rewritten_journal(shoectl, journal_file: Path) -> None:
    anchor = json.loads(shoectl("journal", "verify", str(journal_file), "--json").stdout)["anchor"]
    for suffix in ("", "-wal", "-shm"):
        Path(f"{journal_file}{suffix}").unlink(missing_ok=True)
    write_shoe(journal_file, shoe_id="forged")
    assert shoectl("journal", "verify", str(journal_file)).returncode == 0
    result = shoectl("journal", "verify", str(journal_file), "--anchor", anchor)
    assert_one_line_error(result, 1, "record 15")
    assert "rewritten" in result.stderr


def test_anchor_catches_a_journal_cut_short(shoectl, tmp_path: Path) -> None:
    path = tmp_path / "short.sqlite"
    write_shoe(path, rounds=2)
    result = shoectl("journal", "verify", str(path), "--anchor", f"15:{'a' * 64}")
    assert_one_line_error(result, 1, "record 15")
    assert "cut off" in result.stderr


def test_unusable_paths_are_one_line_exit_2(shoectl, tmp_path: Path) -> None:
    text_file = tmp_path / "notes.txt"
    text_file.write_text("not a journal\n" * 100)
    for command, path, expected in (
        ("show", tmp_path / "absent.sqlite", "no such journal file"),
        ("export", tmp_path, "not a journal file"),
        ("verify", text_file, "not a cardshoe journal"),
    ):
        assert_one_line_error(shoectl("journal", command, str(path)), 2, expected)


def test_bad_anchor_is_one_line_exit_2(shoectl, journal_file: Path) -> None:
    result = shoectl("journal", "verify", str(journal_file), "--anchor", "last")
    assert_one_line_error(result, 2, "ID:HASH")


def test_reading_never_changes_the_journal(shoectl, journal_file: Path) -> None:
    before = journal_file.read_bytes()
    for command in ("show", "export", "verify"):
        assert shoectl("journal", command, str(journal_file)).returncode == 0
    assert journal_file.read_bytes() == before


def test_command_module_loads_without_sqlite() -> None:
    probe = "import sys, cardshoe.controller.cli.journal_cmd; print('sqlite3' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


def test_chain_anchor_round_trips() -> None:
    anchor = ChainAnchor(7, "ab" * 32)
    assert ChainAnchor.parse(str(anchor)) == anchor
    assert ChainAnchor.parse("7:" + "AB" * 32) == anchor
    for bad in ("7", "0:" + "ab" * 32, "x:" + "ab" * 32, "7:abc"):
        with pytest.raises(JournalError):
            ChainAnchor.parse(bad)
