"""`shoectl demo --protocol line|hid`: a whole shoe dealt through a simulated card reader,
as a child process, read back from its --json lines."""

from __future__ import annotations

import pytest
from support.demo_lines import demo_json, of, only
from support.shoectl import ShoectlRunner, one_error_line


@pytest.mark.parametrize(
    ("protocol", "transport", "game", "decks"),
    [("line", "pty", "punto-banco", 2), ("hid", "usb", "seven-up", 4)],
)
def test_a_whole_shoe_through_a_reader(
    shoectl: ShoectlRunner, protocol: str, transport: str, game: str, decks: int
) -> None:
    options = ("--protocol", protocol, "--game", game, "--decks", str(decks), "--seed", "8")
    lines = demo_json(shoectl, *options)
    device = only(lines, "device")
    assert (device["protocol"], device["transport"]) == (protocol, transport)
    assert device["capabilities"] == ["cut_card_detection", "dealer_button"]
    assert device["authenticated"] is False
    ended = only(lines, "shoe_ended")
    rounds = of(lines, "round")
    assert ended["reconciled"] and ended["rounds"] == len(rounds) > 10
    assert ended["device_cards_dealt"] is None, "a reader counts nothing"
    assert ended["dealt"] == sum(len(line["dealt"]) for line in rounds)
    assert only(lines, "last_round")["cause"] == "cut_card"
    assert not of(lines, "irregularity") and not of(lines, "alarm")
    counters = only(lines, "link")["counters"]
    assert counters["bad_lines"] == 0 and counters["cards"] == ended["dealt"] + ended["burned"]


def test_a_garbled_line_is_one_alarm_and_the_shoe_goes_on(shoectl: ShoectlRunner) -> None:
    faults = ("--inject", "garbled-line@card=5", "--inject", "garbled-line@card=9")
    lines = demo_json(shoectl, "--protocol", "line", "--decks", "2", "--seed", "3", *faults)
    (alarm,) = of(lines, "alarm")
    assert alarm["kind"] == "device_fault"
    assert "1 bad line (bad checksum)" in alarm["detail"]
    assert only(lines, "link")["counters"]["bad_bad_checksum"] == 2
    assert only(lines, "shoe_ended")["rounds"] > 5


def test_an_unplugged_reader_holds_until_the_supervisor_enters_the_card_it_lost(
    shoectl: ShoectlRunner,
) -> None:
    """The cable comes out as round 2's first card leaves: its line is lost, and no reader
    resends one. Back on the link, the table holds until the demo's supervisor enters it."""
    faults = ("--inject", "unplug@round=2,for=0.2")
    lines = demo_json(shoectl, "--protocol", "line", "--decks", "1", "--seed", "4", *faults)
    holds = [(line["reason"], line["held_state"]) for line in of(lines, "hold")]
    assert holds == [("link_lost", "dealing"), ("device_cannot_replay", "dealing")]
    ended_holds = [line["reason"] for line in of(lines, "hold_ended")]
    assert ended_holds == ["link_lost", "device_cannot_replay"]
    (corrected,) = of(lines, "correction")
    assert (corrected["round"], corrected["correction"]) == (2, "entered")
    assert corrected["by"]["user"] == "demo-supervisor"
    (round_2,) = [line for line in of(lines, "round") if line["round"] == 2]
    assert round_2["dealt"][0] == {"card": corrected["card"], "to": corrected["to"]}
    ended = only(lines, "shoe_ended")
    assert ended["reconciled"] and not [line for line in of(lines, "round") if line["void"]]
    assert only(lines, "link")["counters"]["link_losses"] == 1


@pytest.mark.parametrize("protocol", ["line", "hid"])
def test_a_reader_fault_line_holds_until_the_supervisor_clears_it(
    shoectl: ShoectlRunner, protocol: str
) -> None:
    """The reader writes a fault line where round 3's first card would leave, and never a line
    saying it passed: the table holds until the demo's supervisor clears it, then deals on."""
    faults = ("--inject", "reader-fault@round=3")
    lines = demo_json(shoectl, "--protocol", protocol, "--decks", "1", "--seed", "6", *faults)
    holds = [line["reason"] for line in of(lines, "hold")]
    assert holds == ["fault.device_specific"]
    assert [line["reason"] for line in of(lines, "hold_ended")] == holds
    ended = only(lines, "shoe_ended")
    assert ended["reconciled"] and ended["rounds"] > 5
    assert not [line for line in of(lines, "round") if line["void"]]
    assert not of(lines, "irregularity")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            ("--protocol", "hid", "--transport", "pty"),
            "--protocol hid is reached over --transport usb",
        ),
        (("--protocol", "line", "--transport", "usb"), "reached over --transport pty or tcp"),
        (("--protocol", "line", "--device", "auto"), "a card reader sits on a manual shoe"),
        (("--protocol", "line", "--inject", "jam@card=2"), "--inject: jam@card=2 cannot happen"),
        (("--protocol", "line", "--shuffle", "riffle:2"), "shuffled fair by the demo"),
        (("--protocol", "serial"), "Invalid value for '--protocol'"),
    ],
)
def test_bad_reader_options_are_one_line_and_exit_2(
    shoectl: ShoectlRunner, options: tuple[str, ...], message: str
) -> None:
    done = shoectl("demo", *options)
    assert done.returncode == 2, done.stderr
    assert message in one_error_line(done.stderr)
