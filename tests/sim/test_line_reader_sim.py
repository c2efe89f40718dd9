"""The simulated line reader on a real pty, read with pyserial and the drivers' own matcher.

What the reader wrote is compared with what left its shoe, card by card, so a
lost, doubled or damaged line shows up exactly where it happened.
"""

from __future__ import annotations

import time
import tomllib
from pathlib import Path

import pytest
import serial
from support.sim_support import FakeClock

from cardshoe.drivers.line.checksum import Checksum
from cardshoe.drivers.line.matching import LineKind, LineMatch, match_line
from cardshoe.drivers.line.profile import LineProfile, parse_line_profile
from cardshoe.drivers.line.splitting import LineSplitter
from cardshoe.firmware_sim.attach_pty import serve_pty
from cardshoe.firmware_sim.errors import SimConfigError
from cardshoe.firmware_sim.faults import parse_injection
from cardshoe.firmware_sim.line_reader import LineFormat, LineReader

EXAMPLE = Path(__file__).parents[2] / "docs" / "examples" / "line-shoe.toml"
NMEA = LineFormat(checksum=Checksum.NMEA)


@pytest.fixture(scope="module")
def profile() -> LineProfile:
    return parse_line_profile(tomllib.loads(EXAMPLE.read_text())["device"]["line"], EXAMPLE.parent)


class PortReader:
    """Lines from a pty opened as a host opens a serial port."""

    def __init__(self, path: str, profile: LineProfile) -> None:
        self.port = serial.Serial(path, baudrate=profile.baud, timeout=0.05, exclusive=True)
        self.profile = profile
        self.splitter = LineSplitter(profile.terminator, profile.max_length)

    def lines(self, count: int) -> list[LineMatch]:
        found: list[LineMatch] = []
        deadline = time.monotonic() + 10
        while len(found) < count:
            assert time.monotonic() < deadline, f"only {len(found)} of {count} lines came"
            for line in self.splitter.feed(self.port.read(max(1, self.port.in_waiting))):
                assert isinstance(line, bytes)
                found.append(match_line(line, self.profile))
        return found

    def close(self) -> None:
        self.port.close()


def test_a_whole_eight_deck_shoe_arrives_line_for_card(profile: LineProfile) -> None:
    reader = LineReader(format=NMEA, seed=3, decks=8)
    with serve_pty(reader) as attachment:
        host = PortReader(attachment.path, profile)
        try:
            seen: list[LineMatch] = []
            reader.press_button()
            seen += host.lines(1)
            cut_seen = False
            while reader.pull_card():
                # The cut card's line follows the card that uncovered it.
                seen += host.lines(1 + (reader.shoe.cut_card_seen and not cut_seen))
                cut_seen = reader.shoe.cut_card_seen
        finally:
            host.close()
    kinds = [match.kind for match in seen]
    assert kinds[0] is LineKind.BUTTON
    cards = [match.card for match in seen if match.kind is LineKind.CARD]
    assert [(c.rank, int(c.suit)) for c in cards if c] == [
        (card.rank, int(card.suit)) for card in reader.shoe.dealt
    ]
    assert len(cards) == 416
    cut = kinds.index(LineKind.CUT_CARD)
    assert kinds.count(LineKind.CUT_CARD) == 1
    assert cut == 1 + 416 - 12  # right after the card that left 12 behind the cut card


@pytest.mark.parametrize(
    ("fault", "kinds"),
    [
        ("garbled-line@card=2", [LineKind.CARD, LineKind.BAD_CHECKSUM, LineKind.CARD]),
        ("bad-checksum@card=2", [LineKind.CARD, LineKind.BAD_CHECKSUM, LineKind.CARD]),
        ("double-read@card=2", [LineKind.CARD, LineKind.CARD, LineKind.CARD, LineKind.CARD]),
        ("dropped-line@card=2", [LineKind.CARD, LineKind.CARD]),
        ("reader-fault@card=2", [LineKind.CARD, LineKind.FAULT, LineKind.CARD]),
    ],
)
def test_line_faults_leave_their_mark_on_the_wire(
    fault: str, kinds: list[LineKind], profile: LineProfile
) -> None:
    reader = LineReader(format=NMEA, seed=5, injections=[parse_injection(fault)])
    with serve_pty(reader) as attachment:
        host = PortReader(attachment.path, profile)
        try:
            for _ in range(3):
                reader.pull_card()
            seen = host.lines(len(kinds))
            assert host.port.read(64) == b""
        finally:
            host.close()
    assert [match.kind for match in seen] == kinds
    if fault.startswith("double-read"):
        assert seen[1] == seen[2]


def test_garbled_without_checksum_matches_nothing() -> None:
    table = tomllib.loads(EXAMPLE.read_text())["device"]["line"] | {"checksum": "none"}
    plain = parse_line_profile(table, EXAMPLE.parent)
    reader = LineReader(seed=1, injections=[parse_injection("garbled-line@card=1")])
    reader.pull_card()
    line = reader.take_output()
    assert match_line(line.removesuffix(b"\r\n"), plain).kind is LineKind.UNMATCHED


def test_unplug_loses_the_card_and_the_port_until_the_reader_is_back(
    profile: LineProfile,
) -> None:
    clock = FakeClock()
    reader = LineReader(
        format=NMEA, seed=2, clock=clock, injections=[parse_injection("unplug@card=2,for=3")]
    )
    with serve_pty(reader) as attachment:
        host = PortReader(str(attachment.link), profile)
        reader.pull_card()
        assert host.lines(1)[0].kind is LineKind.CARD
        reader.pull_card()
        assert not reader.plugged
        with pytest.raises(serial.SerialException):
            while True:
                host.port.read(1)
        host.close()
        assert not reader.pull_card()
        clock.advance(3)
        deadline = time.monotonic() + 5
        while not attachment.link.exists():
            assert time.monotonic() < deadline
            time.sleep(0.01)
        host = PortReader(str(attachment.link), profile)
        try:
            reader.pull_card()
            assert host.lines(1)[0].kind is LineKind.CARD
        finally:
            host.close()
    assert len(reader.shoe.dealt) == 3 and reader.counts.lines == 2


def test_a_cardshoe_fault_is_refused_on_a_line_reader() -> None:
    with pytest.raises(SimConfigError, match="jam@card=1 cannot happen on a line reader"):
        LineReader(injections=[parse_injection("jam@card=1")])


def test_a_line_fault_is_refused_on_a_cardshoe_device() -> None:
    from cardshoe.firmware_sim.devices import create_device

    with pytest.raises(SimConfigError, match="double-read@card=1 cannot happen on a"):
        create_device(injections=[parse_injection("double-read@card=1")])


def test_a_coded_reader_writes_each_card_as_its_code(tmp_path: Path) -> None:
    (tmp_path / "cards.csv").write_text(
        "\n".join(
            f"{9000 + rank * 4 + suit},{'A23456789TJQK'[rank - 1]}{'SHDC'[suit]}"
            for rank in range(1, 14)
            for suit in range(4)
        )
    )
    coded = parse_line_profile({"card": r"^(?P<code>\d+)$", "cards_file": "cards.csv"}, tmp_path)
    assert coded.cards is not None
    codes = {(face.rank, int(face.suit)): code for code, face in coded.cards.items()}
    reader = LineReader(format=LineFormat(codes=codes), seed=4, decks=1)
    while reader.pull_card():
        pass
    lines = reader.take_output().split(b"\r\n")[:-1]
    faces = [match_line(line, coded).card for line in lines if line != b"CUT"]
    assert [(face.rank, int(face.suit)) for face in faces if face] == [
        (card.rank, int(card.suit)) for card in reader.shoe.dealt
    ]
