"""The line reader's pure parts: profile, NMEA checksum, splitting, matching, card codes,
bad-line accounting. The profile is docs/examples/line-shoe.toml, read verbatim."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from cardshoe.drivers.api.events import CardId, CardSuit
from cardshoe.drivers.line.bad_lines import BadLineCounter, BadLineReport
from cardshoe.drivers.line.checksum import Checksum, checked_body, nmea_checksum, with_checksum
from cardshoe.drivers.line.codes import CardTableError, parse_card_table
from cardshoe.drivers.line.matching import LineKind, match_line
from cardshoe.drivers.line.profile import (
    EXAMPLE_TABLE,
    BadLinePolicy,
    LineProfile,
    LineProfileError,
    parse_line_profile,
)
from cardshoe.drivers.line.splitting import LineSplitter, Overlong

EXAMPLE = Path(__file__).parents[2] / "docs" / "examples" / "line-shoe.toml"


def example_table() -> dict:
    return tomllib.loads(EXAMPLE.read_text())["device"]["line"]


@pytest.fixture(scope="module")
def profile() -> LineProfile:
    return parse_line_profile(example_table(), EXAMPLE.parent)


def test_the_example_profile_reads_as_written(profile: LineProfile) -> None:
    assert profile.baud == 9600
    assert profile.terminator == b"\r\n"
    assert profile.checksum is Checksum.NMEA
    assert profile.ack == b""
    assert profile.cards is None


def test_the_built_in_example_is_the_documented_one() -> None:
    assert dict(EXAMPLE_TABLE) == example_table()


def test_nmea_checksum_of_a_published_sentence() -> None:
    # A GPS receiver's sentence with its checksum as printed (NMEA 0183): $...*47
    body = b"GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,"
    assert nmea_checksum(body) == 0x47
    assert with_checksum(body, Checksum.NMEA) == body + b"*47"
    assert checked_body(body + b"*47", Checksum.NMEA) == body
    assert checked_body(body + b"*47".lower(), Checksum.NMEA) == body


@pytest.mark.parametrize(
    "line",
    [
        b"CAS*00",
        b"CAS",
        b"CAS*",
        b"CAS*4",
        b"CAS*ZZ",
        b"CBS*" + f"{0x43 ^ 0x41 ^ 0x53:02X}".encode(),
    ],
)
def test_a_line_whose_checksum_fails_is_not_read(line: bytes, profile: LineProfile) -> None:
    assert match_line(line, profile).kind is LineKind.BAD_CHECKSUM


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"CAS", "card AS"),
        (b"CTD", "card TD"),
        (b"CKC", "card KC"),
        (b"C9H", "card 9H"),
        (b"CUT", "cut card"),
        (b"BTN", "button"),
        (b"E17", "fault 17"),
        (b"CAX", "unmatched"),
        (b"C1S", "unmatched"),
        (b"HELLO", "unmatched"),
    ],
)
def test_lines_match_the_profile(body: bytes, expected: str, profile: LineProfile) -> None:
    assert match_line(with_checksum(body, Checksum.NMEA), profile).describe() == expected


def test_card_faces_are_the_wire_numbers(profile: LineProfile) -> None:
    assert match_line(with_checksum(b"CQD", Checksum.NMEA), profile).card == CardId(
        12, CardSuit.DIAMONDS
    )
    assert match_line(with_checksum(b"CAS", Checksum.NMEA), profile).card == CardId(
        1, CardSuit.SPADES
    )


def test_a_line_past_the_bound_is_too_long_and_not_matched(profile: LineProfile) -> None:
    line = with_checksum(b"C" * (profile.max_length + 1), Checksum.NMEA)
    found = match_line(line, profile)
    assert found.kind is LineKind.TOO_LONG and found.kind.bad


def test_bytes_outside_ascii_are_bad_and_shown_escaped(profile: LineProfile) -> None:
    found = match_line(with_checksum(b"C\xffS", Checksum.NMEA), profile)
    assert found.kind is LineKind.NOT_ASCII
    assert "\\xff" in found.text


def test_a_code_group_reads_the_cards_file(tmp_path: Path) -> None:
    (tmp_path / "cards.csv").write_text("code,card\n4006381333931,AS\n4006381333948, 10h\n")
    table = {"card": r"^(?P<code>\d{13})$", "cards_file": "cards.csv"}
    coded = parse_line_profile(table, tmp_path)
    assert match_line(b"4006381333948", coded).card == CardId(10, CardSuit.HEARTS)
    assert match_line(b"4006381333955", coded).kind is LineKind.UNKNOWN_CODE


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("code,card\n1,AS\n1,KS\n", "x.csv line 3: code '1' is listed twice"),
        ("1,AS\n2,ZZ\n", "x.csv line 2: bad card ID 'ZZ'"),
        ("1,AS,extra\n", "x.csv line 1: expected `code,card`"),
        ("code,card\n", "x.csv lists no card"),
    ],
)
def test_a_bad_cards_file_says_which_line(text: str, message: str) -> None:
    with pytest.raises(CardTableError, match="^" + message.replace("(", r"\(")) as caught:
        parse_card_table(text, "x.csv")
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"checksum": "crc"}, 'device.line.checksum = \'crc\': use "none" or "nmea"'),
        ({"card": "^C(?P<rank>.)$"}, "device.line.card needs named groups `rank` and `suit`"),
        ({"card": "^C(?P<rank"}, "device.line.card is not a regular expression"),
        ({"card": r"^(?P<code>\d+)$"}, "device.line.card has a `code` group but no cards_file"),
        ({"cards_file": "cards.csv"}, "device.line.cards_file is given but the card pattern"),
        ({"baud": "9600"}, "device.line.baud must be a whole number of at least 1"),
        ({"baud": 0}, "device.line.baud must be a whole number of at least 1"),
        ({"terminator": ""}, "device.line.terminator is empty"),
        ({"ack": "OK\u00e9"}, "device.line.ack = 'OK\u00e9': use ASCII only"),
        ({"speed": 9600}, "device.line has unknown key 'speed'"),
        ({"report_interval_s": float("nan")}, "device.line.report_interval_s must be a number"),
        ({"burst_window_s": float("inf")}, "device.line.burst_window_s must be a number"),
    ],
)
def test_a_bad_profile_is_one_line_naming_the_key(change: dict, message: str) -> None:
    table = example_table() | change
    with pytest.raises(LineProfileError) as caught:
        parse_line_profile(table, EXAMPLE.parent)
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


def test_a_missing_cards_file_is_one_line(tmp_path: Path) -> None:
    table = {"card": r"^(?P<code>\d+)$", "cards_file": "absent.csv"}
    with pytest.raises(
        LineProfileError,
        match=r"^device.line.cards_file: cannot read the cards file .*absent.csv: No such file",
    ):
        parse_line_profile(table, tmp_path)


def test_the_splitter_cuts_at_the_terminator_across_reads() -> None:
    splitter = LineSplitter(b"\r\n", max_length=16)
    assert splitter.feed(b"CAS*11\r") == []
    assert splitter.feed(b"\nCUT*") == [b"CAS*11"]
    assert splitter.feed(b"1F\r\nBTN*1E\r\n") == [b"CUT*1F", b"BTN*1E"]


def test_the_splitter_bounds_a_line_without_terminator() -> None:
    splitter = LineSplitter(b"\r\n", max_length=4)
    found = splitter.feed(b"X" * 13)
    assert found == [Overlong(b"XXXX")]
    assert splitter.feed(b"X" * 100) == []
    assert splitter.feed(b"XX\r") == []
    assert splitter.feed(b"\nCAS\r\n") == [b"CAS"]


def test_bad_lines_are_reported_once_per_kind_per_interval() -> None:
    counter = BadLineCounter(BadLinePolicy(report_interval_s=60, burst_lines=100))
    first = counter.count(LineKind.UNMATCHED, "X1", now=0.0)
    assert first == BadLineReport(LineKind.UNMATCHED, 1, "X1")
    assert [counter.count(LineKind.UNMATCHED, f"X{n}", now=n) for n in range(2, 12)] == [None] * 10
    other = counter.count(LineKind.BAD_CHECKSUM, "CAS*00", now=12.0)
    assert other == BadLineReport(LineKind.BAD_CHECKSUM, 1, "CAS*00")
    assert counter.due(59.0) == []
    assert counter.due(60.0) == [BadLineReport(LineKind.UNMATCHED, 10, "X11")]
    assert counter.due(200.0) == []
    assert counter.totals == {LineKind.UNMATCHED: 11, LineKind.BAD_CHECKSUM: 1}


def test_a_line_after_the_interval_reports_with_what_was_counted() -> None:
    counter = BadLineCounter(BadLinePolicy(report_interval_s=60, burst_lines=100))
    counter.count(LineKind.UNMATCHED, "a", now=0.0)
    counter.count(LineKind.UNMATCHED, "b", now=1.0)
    assert counter.count(LineKind.UNMATCHED, "c", now=61.0) == BadLineReport(
        LineKind.UNMATCHED, 2, "c"
    )


def test_a_burst_is_reported_once_until_the_window_passes() -> None:
    counter = BadLineCounter(BadLinePolicy(burst_lines=3, burst_window_s=10))
    starts = []
    for now in (0.0, 1.0, 2.0, 3.0, 4.0):
        counter.count(LineKind.UNMATCHED, "x", now)
        starts.append(counter.burst_started(now))
    assert starts == [False, False, True, False, False]
    assert counter.burst_started(20.0) is False
    for now in (30.0, 31.0, 32.0):
        counter.count(LineKind.UNMATCHED, "x", now)
    assert counter.burst_started(32.0) is True


def test_a_card_table_of_physical_cards_gives_physical_ids(tmp_path: Path) -> None:
    from cardshoe.drivers.api.device_link import Capability
    from cardshoe.drivers.line.link import line_capabilities

    (tmp_path / "tagged.csv").write_text("1001,AS#00BC614E/1\n1002,AS#00BC614E/2\n")
    (tmp_path / "mixed.csv").write_text("1001,AS#00BC614E/1\n1003,KD\n")
    table = {"card": r"^(?P<code>\d+)$"}
    tagged = parse_line_profile(table | {"cards_file": "tagged.csv"}, tmp_path)
    mixed = parse_line_profile(table | {"cards_file": "mixed.csv"}, tmp_path)
    assert match_line(b"1002", tagged).card == CardId(1, CardSuit.SPADES, 0x00BC614E, 2)
    assert Capability.PHYSICAL_IDS in line_capabilities(tagged)
    assert Capability.PHYSICAL_IDS not in line_capabilities(mixed)
