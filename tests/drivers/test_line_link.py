"""The line family through the registry, on a real pty with the simulated reader.

What the reader wrote is checked against what the host's LineLink made of it:
cards with their seqs, acks written back, bad lines counted and reported once
per kind per interval, a burst raising a fault, an unplug and the way back.
"""

from __future__ import annotations

import time
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest
from support.driver_testing import next_events

from cardshoe.controller.config import ConfigError, TableConfig, load_config
from cardshoe.drivers.api.device_link import Capability
from cardshoe.drivers.api.events import (
    ButtonPressed,
    CardId,
    CardSeen,
    CutCardSeen,
    FaultCleared,
    FaultKind,
    FaultRaised,
    LinkLost,
    LinkRestored,
    ProtocolViolation,
    ReadFlag,
)
from cardshoe.drivers.api.protocols import open_device
from cardshoe.drivers.line.checksum import Checksum
from cardshoe.drivers.line.link import EVENT_OF_LINE
from cardshoe.drivers.line.matching import LineKind
from cardshoe.drivers.line.profile import BadLinePolicy, LineProfile, parse_line_profile
from cardshoe.firmware_sim.attach_pty import serve_pty
from cardshoe.firmware_sim.faults import parse_injection
from cardshoe.firmware_sim.line_reader import LineFormat, LineReader

EXAMPLE = Path(__file__).parents[2] / "docs" / "examples" / "line-shoe.toml"
NMEA = LineFormat(checksum=Checksum.NMEA)
WAIT_S = 5.0


def example_profile(**changes: object) -> LineProfile:
    table = tomllib.loads(EXAMPLE.read_text())["device"]["line"] | changes
    return parse_line_profile(table, EXAMPLE.parent)


def wire_card(reader: LineReader, index: int) -> CardId:
    card = reader.shoe.dealt[index]
    return CardId(card.rank, int(card.suit))


def test_the_example_config_names_the_line_family() -> None:
    config = load_config(EXAMPLE)
    assert config.device.protocol == "line"
    assert isinstance(config.device.protocol_options, LineProfile)
    assert config.device.protocol_options.checksum is Checksum.NMEA


def test_a_bad_profile_in_a_table_config_is_one_line() -> None:
    data = tomllib.loads(EXAMPLE.read_text())
    data["device"]["line"]["checksum"] = "crc16"
    with pytest.raises(ConfigError) as caught:
        TableConfig.from_mapping(data, base_dir=EXAMPLE.parent)
    assert str(caught.value) == (
        'device.protocol = "line": device.line.checksum = \'crc16\': use "none" or "nmea"'
    )


def test_cards_come_numbered_from_the_journal_and_acks_go_back() -> None:
    profile = example_profile(ack="OK\r\n")
    reader = LineReader(format=NMEA, seed=9, decks=1, cut_card_depth=50, ack=b"OK\r\n")
    with (
        serve_pty(reader) as attachment,
        open_device(attachment.path, protocol="line", options=profile) as link,
    ):
        assert link.capabilities == Capability.CUT_CARD_DETECTION | Capability.DEALER_BUTTON
        assert link.identity.protocol == "line"
        link.set_journaled_seq(41)
        reader.press_button()
        reader.pull_card()
        reader.pull_card()  # 50 left: the cut card shows
        button, first, second, cut = next_events(link, 4)
        assert button == ButtonPressed(42, button.device_time_ms)
        assert isinstance(first, CardSeen) and first.seq == 43
        assert first.card == wire_card(reader, 0) and first.code.startswith("C")
        assert isinstance(second, CardSeen) and second.card == wire_card(reader, 1)
        assert isinstance(cut, CutCardSeen) and cut.seq == 45
        link.ack(45)
        deadline = time.monotonic() + WAIT_S
        while reader.counts.acks < 4 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert reader.counts.acks == 4
        counters = link.counters()
        assert counters["acks_written"] == 4
        assert counters["delivered_seq"] == counters["acked_seq"] == 45


def test_an_unknown_code_is_a_misread_card(tmp_path: Path) -> None:
    codes = {(rank, suit): f"{rank * 10 + suit}" for rank in range(1, 14) for suit in range(4)}
    reader = LineReader(format=LineFormat(codes=codes), seed=1, decks=1)
    second = reader.shoe.cards[1]
    unknown_code = codes[(second.rank, int(second.suit))]
    rows = [f"{code},{CardId(rank, suit)}" for (rank, suit), code in codes.items()]
    (tmp_path / "cards.csv").write_text(
        "\n".join(row for row in rows if not row.startswith(unknown_code + ","))
    )
    profile = parse_line_profile({"card": r"^(?P<code>\d+)$", "cards_file": "cards.csv"}, tmp_path)
    with (
        serve_pty(reader) as attachment,
        open_device(attachment.path, protocol="line", options=profile) as link,
    ):
        reader.pull_card()
        reader.pull_card()
        known, unknown = next_events(link, 2)
    assert isinstance(known, CardSeen) and known.card == wire_card(reader, 0)
    assert isinstance(unknown, CardSeen) and unknown.card is None
    assert unknown.flags == ReadFlag.MISREAD and unknown.code == unknown_code


def test_bad_lines_are_reported_once_per_kind_and_a_burst_holds() -> None:
    policy = BadLinePolicy(report_interval_s=3600, burst_lines=4, burst_window_s=3600)
    profile = replace(example_profile(), bad_lines=policy)
    faults = [parse_injection(f"bad-checksum@card={n}") for n in range(1, 5)]
    reader = LineReader(format=NMEA, seed=2, decks=1, injections=faults)
    with (
        serve_pty(reader) as attachment,
        open_device(attachment.path, protocol="line", options=profile) as link,
    ):
        for _ in range(5):
            reader.pull_card()
        report, burst, card = next_events(link, 3)
        assert isinstance(report, ProtocolViolation)
        assert report.reason.startswith("1 bad line (bad checksum), the last: 'C")
        assert isinstance(burst, FaultRaised) and burst.kind is FaultKind.MISREAD
        assert isinstance(card, CardSeen) and card.card == wire_card(reader, 4)
        assert link.counters()["bad_bad_checksum"] == 4
        assert link.get_status().active_faults == (FaultKind.MISREAD,)


def test_a_quiet_window_clears_the_burst() -> None:
    policy = BadLinePolicy(report_interval_s=0, burst_lines=2, burst_window_s=0.3)
    profile = replace(example_profile(), bad_lines=policy)
    faults = [parse_injection(f"garbled-line@card={n}") for n in (1, 2)]
    reader = LineReader(format=NMEA, seed=2, decks=1, injections=faults)
    with (
        serve_pty(reader) as attachment,
        open_device(attachment.path, protocol="line", options=profile) as link,
    ):
        reader.pull_card()
        reader.pull_card()
        kinds = [type(event) for event in next_events(link, 4)]
    assert kinds == [ProtocolViolation, ProtocolViolation, FaultRaised, FaultCleared]


def test_an_unplugged_reader_is_lost_and_found_again_through_its_link() -> None:
    reader = LineReader(
        format=NMEA, seed=4, decks=1, injections=[parse_injection("unplug@card=2,for=0.3")]
    )
    with (
        serve_pty(reader) as attachment,
        open_device(str(attachment.link), protocol="line", options=example_profile()) as link,
    ):
        reader.pull_card()
        (first,) = next_events(link, 1)
        assert isinstance(first, CardSeen) and first.seq == 1
        reader.pull_card()
        lost, restored = next_events(link, 2)
        assert isinstance(lost, LinkLost)
        assert isinstance(restored, LinkRestored)
        reader.pull_card()
        (third,) = next_events(link, 1)
    # The second card left while the cable was out: the host never heard of it.
    assert isinstance(third, CardSeen) and third.seq == 2
    assert third.card == wire_card(reader, 2)


def test_without_a_profile_the_family_says_what_it_needs() -> None:
    from cardshoe.drivers.api.protocols import BadProtocolOptions

    with pytest.raises(BadProtocolOptions, match=r"needs a \[device.line\] table"):
        open_device("/dev/null", protocol="line")


def test_every_good_line_has_an_event_and_no_bad_line_has_one() -> None:
    """A bad line is counted and reported, never an event; every other kind is one."""
    assert set(EVENT_OF_LINE) == {kind for kind in LineKind if not kind.bad}
