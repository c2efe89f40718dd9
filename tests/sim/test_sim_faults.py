"""Every injectable fault, shown by what the device puts on the wire (decoded with the codec)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from support.sim_support import FakeClock, WireHost

from cardshoe.drivers.protocol.error_codes import ErrorCode
from cardshoe.drivers.protocol.firmware_image import sign_image
from cardshoe.drivers.protocol.link_constants import FIRMWARE_CHUNK_SIZE, PROTOCOL_MINOR
from cardshoe.drivers.protocol.messages import (
    CardRead,
    CutCard,
    DealNext,
    Fault,
    FaultCleared,
    FaultKind,
    FirmwareBegin,
    FirmwareChunk,
    FirmwareCommit,
    GateMode,
    GetInfo,
    GetStatus,
    Hello,
    Message,
    Orientation,
    Reply,
    ReturnCards,
    SelfTestResult,
    SensorFlag,
    SetGate,
    ShoeEmpty,
    StatusFlag,
)
from cardshoe.firmware_sim.devices import configure_device, create_device
from cardshoe.firmware_sim.errors import SimConfigError
from cardshoe.firmware_sim.fault_effects import EFFECTS
from cardshoe.firmware_sim.faults import Injection, InjectionKind, load_scenario, parse_injection
from cardshoe.firmware_sim.profiles import get_profile


def connected(profile: str, *injections: str) -> WireHost:
    clock = FakeClock()
    core = create_device(
        profile, seed=7, clock=clock, injections=[parse_injection(text) for text in injections]
    )
    host = WireHost(core, clock)
    _hello, result = host.connect()
    host.ack(result.seq)
    return host


def acked(host: WireHost, received: list[Message]) -> list[Message]:
    """Acknowledge everything as it arrives, until the device has nothing more to send."""
    events = [m for m in received if hasattr(m, "seq")]
    while events:
        more = [m for m in host.ack(events[-1].seq) if hasattr(m, "seq")]
        received += more
        events = more
    return received


def pull(host: WireHost, count: int = 1) -> list[Message]:
    """Release and pull `count` cards one at a time, acknowledging what comes."""
    received: list[Message] = []
    for _ in range(count):
        host.send(SetGate(host.request_id(), GateMode.RELEASE_ONE))
        received += host.receive(tick=False)
        host.core.pull_card()
        received += acked(host, host.receive())
    return received


def press(host: WireHost) -> None:
    """The dealer closes bets; the host acknowledges the BUTTON event."""
    host.core.press_button()
    acked(host, host.receive())


def deal(host: WireHost) -> list[Message]:
    host.send(DealNext(host.request_id()))
    return acked(host, host.receive())


def cards(messages: list[Message]) -> list[CardRead]:
    return [m for m in messages if isinstance(m, CardRead)]


def distinct(events: list[CardRead]) -> list[CardRead]:
    """Each event once: while a wait goes unacknowledged, the device resends it."""
    return list({event.seq: event for event in events}.values())


def test_every_fault_kind_has_a_row_in_the_table_of_what_it_does() -> None:
    assert set(EFFECTS) == set(InjectionKind)


def test_foreign_card_carries_another_deck_set_serial() -> None:
    host = connected("cs-1", "foreign-card@round=1")
    first = cards(pull(host))
    press(host)
    (foreign,) = cards(pull(host))
    assert first[0].card.deck_set == host.core.deck_set
    assert foreign.card.deck_set != host.core.deck_set
    assert foreign.card.deck_set != 0


def test_duplicate_card_repeats_a_physical_card_still_out() -> None:
    host = connected("cs-1", "duplicate-card@card=3")
    dealt = cards(pull(host, 3))
    assert dealt[2].card_code == dealt[1].card_code
    assert dealt[1].card_code != dealt[0].card_code


def test_duplicate_card_on_the_machine_copies_a_card_of_the_round_not_one_taken_back() -> None:
    """Cards taken back are shuffled in: a copy of one could not be told from it."""
    host = connected("cs-auto", "duplicate-card@card=3")
    first_round = cards(deal(host) + deal(host))
    host.send(ReturnCards(host.request_id(), 2))
    acked(host, host.receive())
    third, fourth = cards(deal(host) + deal(host))
    assert fourth.card_code == third.card_code
    assert third.card_code not in {card.card_code for card in first_round}


@pytest.mark.parametrize("profile", ["cs-1", "cs-auto"])
def test_double_feed_sends_each_card_flagged_with_one_group(profile: str) -> None:
    host = connected(profile, "double-feed@round=1")
    if profile == "cs-1":
        press(host)
        group = cards(pull(host))
    else:
        group = cards(deal(host))
    assert len(group) == 2
    assert all(SensorFlag.DOUBLE_FEED_SUSPECTED in card.flags for card in group)
    assert {(card.feed_group, card.feed_size) for card in group} == {(1, 2)}
    assert group[1].seq == group[0].seq + 1
    assert group[0].card_code != group[1].card_code


@pytest.mark.parametrize("profile", ["cs-1", "cs-auto"])
def test_a_double_feed_read_in_order_flags_both_cards_feed_in_order(profile: str) -> None:
    host = connected(profile, "double-feed-in-order@round=1")
    if profile == "cs-1":
        press(host)
        group = cards(pull(host))
    else:
        group = cards(deal(host))
    in_order = SensorFlag.DOUBLE_FEED_SUSPECTED | SensorFlag.FEED_IN_ORDER
    assert [(card.flags, card.feed_group, card.feed_size) for card in group] == [
        (in_order, 1, 2)
    ] * 2
    assert host.core.status().cards_dealt == 2


def test_a_double_feed_in_order_needs_a_reader_that_detects_double_feeds() -> None:
    with pytest.raises(SimConfigError, match="double-feed-in-order"):
        connected("cs-1-basic", "double-feed-in-order@card=1")


@pytest.mark.parametrize("profile", ["cs-1", "cs-auto"])
def test_a_misread_card_leaves_unread_and_its_re_read_reads_it_counting_nothing(
    profile: str,
) -> None:
    host = connected(profile, "misread-card@card=2,for=1.5")
    first = cards(pull(host) if profile == "cs-1" else deal(host))
    (unread,) = cards(pull(host) if profile == "cs-1" else deal(host))
    assert unread.flags == SensorFlag.ID_UNREADABLE and unread.card is None
    assert unread.card_code == bytes(8) and host.core.status().cards_dealt == 2
    assert not cards(acked(host, host.wait(1.0)))
    (reread,) = distinct(cards(acked(host, host.wait(1.0))))
    assert reread.flags == SensorFlag(0) and reread.card is not None
    assert reread.card == host.core.shoe.dealt[1] and reread.card != first[0].card
    assert (reread.feed_group, reread.feed_size) == (0, 1)
    assert host.core.status().cards_dealt == 2 and host.core.unread_card is None
    assert not host.core.reread_card()


def test_an_unreadable_card_stays_unreadable_at_every_re_read() -> None:
    host = connected("cs-1", "unreadable-card@card=1")
    (unread,) = cards(pull(host))
    assert unread.card is None and host.core.unread_card == host.core.shoe.dealt[0]
    assert not cards(acked(host, host.wait(2.0)))
    assert host.core.reread_card()
    (again,) = distinct(cards(acked(host, host.receive())))
    assert again.flags == SensorFlag.ID_UNREADABLE and host.core.status().cards_dealt == 1


def test_a_double_feed_a_shoe_cannot_detect_looks_like_two_single_cards() -> None:
    host = connected("cs-1-basic", "double-feed@card=1")
    assert host.core.pull_card()
    group = cards(acked(host, host.receive()))
    assert [(card.flags, card.feed_group, card.feed_size) for card in group] == [(0, 0, 1)] * 2
    assert all(card.orientation is Orientation.UNKNOWN for card in group)


def test_reversed_card_leaves_a_manual_shoe_face_up() -> None:
    host = connected("cs-1", "reversed-card@card=2")
    orientations = [card.orientation for card in cards(pull(host, 3))]
    assert orientations == [Orientation.FACE_DOWN, Orientation.FACE_UP, Orientation.FACE_DOWN]


def test_face_down_card_from_the_automatic_machine() -> None:
    host = connected("cs-auto", "face-down@card=2")
    orientations = [cards(deal(host))[0].orientation for _ in range(3)]
    assert orientations == [Orientation.FACE_UP, Orientation.FACE_DOWN, Orientation.FACE_UP]


def test_jam_raises_a_fault_holds_the_card_and_clears_after_its_duration() -> None:
    host = connected("cs-auto", "jam@card=1,for=1.5")
    received = deal(host)
    assert isinstance(received[0], Reply) and received[0].result is ErrorCode.OK
    (jam,) = received[1:]
    assert isinstance(jam, Fault) and (jam.kind, jam.detail) == (FaultKind.JAM, 1)
    host.send(DealNext(host.request_id()))
    assert host.receive(tick=False)[0].result is ErrorCode.FAULT_ACTIVE
    after = acked(host, host.wait(1.6))
    assert isinstance(after[0], FaultCleared) and after[0].kind is FaultKind.JAM
    assert [type(m) for m in after[1:]] == [CardRead], "the accepted deal completes"


def test_door_open_raises_a_fault_locks_the_gate_and_clears_when_closed() -> None:
    host = connected("cs-1", "door-open@round=1,for=2")
    press(host)
    received = pull(host)
    door = next(m for m in received if isinstance(m, Fault))
    assert door.kind is FaultKind.DOOR_OPEN
    assert not cards(received)
    host.send(GetStatus(host.request_id()))
    (status,) = host.receive(tick=False)
    assert StatusFlag.DOOR_OPEN in status.flags and status.active_faults == (FaultKind.DOOR_OPEN,)
    host.send(SetGate(host.request_id(), GateMode.RELEASE_ONE))
    assert host.receive(tick=False) == [Reply(host.next_request_id - 1, ErrorCode.DOOR_OPEN)]
    cleared = acked(host, host.wait(2.1))
    assert [(type(m), m.kind) for m in cleared] == [(FaultCleared, FaultKind.DOOR_OPEN)]
    assert len(cards(pull(host))) == 1


def test_early_cut_card_comes_out_before_the_card() -> None:
    host = connected("cs-1", "early-cut-card@card=5")
    received = pull(host, 6)
    events = [m for m in received if not isinstance(m, Reply)]
    cut = next(i for i, m in enumerate(events) if isinstance(m, CutCard))
    assert cut == 4
    assert len(cards(events)) == 6
    assert not any(isinstance(m, CutCard) for m in pull(host, 300)), "reported once"


def test_out_of_cards_makes_this_card_the_last_one() -> None:
    host = connected("cs-1", "out-of-cards@round=1")
    press(host)
    received = pull(host, 3)
    events = [m for m in received if not isinstance(m, Reply)]
    assert [type(m) for m in events] == [CardRead, ShoeEmpty]
    assert events[1].cards_dealt == 1
    replies = [m for m in received if isinstance(m, Reply)]
    assert [r.result for r in replies] == [ErrorCode.OK, ErrorCode.SHOE_EMPTY, ErrorCode.SHOE_EMPTY]


def test_unplug_silences_the_device_then_it_restarts_and_replays_the_card() -> None:
    host = connected("cs-1", "unplug@card=1,for=2")
    host.send(SetGate(2, GateMode.RELEASE_ONE))
    host.receive(tick=False)
    assert host.core.pull_card()
    assert host.receive() == []
    host.send(GetInfo(3, 0))
    assert host.wait(1.9) == [], "nothing at all while unplugged"
    start = len(host.raw)
    back = host.wait(0.2)
    assert host.raw[start : start + 1] == b"\x00"
    hello = next(m for m in back if isinstance(m, Hello))
    assert hello.request_id == 0
    host.send(GetInfo(4, 0))
    hello, replayed = host.receive()
    assert isinstance(replayed, CardRead) and replayed.seq == hello.last_acked_seq + 1


def test_corrupt_bytes_damage_the_first_send_and_the_resend_is_good() -> None:
    host = connected("cs-1", "corrupt-bytes@card=1")
    host.send(SetGate(2, GateMode.RELEASE_ONE))
    host.receive(tick=False)
    host.core.pull_card()
    assert host.receive() == []
    assert host.decoder.counters.bad_frames == 1
    (card,) = host.wait(0.21)
    assert isinstance(card, CardRead)


def test_drop_frame_loses_the_first_send_and_the_resend_arrives() -> None:
    host = connected("cs-1", "drop-frame@card=1")
    host.send(SetGate(2, GateMode.RELEASE_ONE))
    host.receive(tick=False)
    sent_before = len(host.raw)
    host.core.pull_card()
    assert host.receive() == [] and len(host.raw) == sent_before
    (card,) = host.wait(0.21)
    assert isinstance(card, CardRead)


def test_duplicate_frame_sends_the_same_event_twice() -> None:
    host = connected("cs-1", "duplicate-frame@card=1")
    host.send(SetGate(2, GateMode.RELEASE_ONE))
    host.receive(tick=False)
    host.core.pull_card()
    first, second = host.receive()
    assert first == second and isinstance(first, CardRead)


def test_delay_ack_keeps_the_device_resending_until_the_ack_is_acted_on() -> None:
    host = connected("cs-1", "delay-ack@card=1,for=0.5")
    host.send(SetGate(2, GateMode.RELEASE_ONE))
    host.receive(tick=False)
    host.core.pull_card()
    (card,) = host.receive()
    host.ack(card.seq)
    resent = host.wait(0.45)
    assert resent == [card, card]
    assert host.wait(0.1) == []
    assert host.core.link.last_acked_seq == card.seq
    assert host.wait(0.5) == []


def test_bad_firmware_hash_fails_the_power_up_self_test_and_blocks_dealing() -> None:
    clock = FakeClock()
    core = create_device("cs-1", clock=clock, injections=[parse_injection("bad-firmware-hash")])
    host = WireHost(core, clock)
    hello, result = host.connect()
    approved = get_profile("cs-1").firmware_hash
    assert hello.firmware_hash == result.firmware_hash != approved
    assert isinstance(result, SelfTestResult)
    assert result.failures == (FaultKind.FIRMWARE_HASH_MISMATCH,)
    host.ack(result.seq)
    host.send(SetGate(2, GateMode.OPEN))
    assert host.receive(tick=False) == [Reply(2, ErrorCode.SELF_TEST_FAILED)]


def test_bad_firmware_hash_during_play_stops_the_card_with_a_failed_self_test() -> None:
    host = connected("cs-auto", "bad-firmware-hash@card=2")
    assert len(cards(deal(host))) == 1
    received = deal(host) + acked(host, host.wait(0.05))
    (result,) = [m for m in received if isinstance(m, SelfTestResult)]
    assert not result.passed and not cards(received)
    assert [m.result for m in deal(host) if isinstance(m, Reply)] == [ErrorCode.SELF_TEST_FAILED]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("jam@round=3", Injection(InjectionKind.JAM, round=3)),
        ("drop-frame@card=12", Injection(InjectionKind.DROP_FRAME, card=12)),
        ("unplug@card=4,for=2.5", Injection(InjectionKind.UNPLUG, card=4, duration_s=2.5)),
        ("bad-firmware-hash", Injection(InjectionKind.BAD_FIRMWARE_HASH)),
        (
            "firmware-power-cut,for=2",
            Injection(InjectionKind.FIRMWARE_POWER_CUT, duration_s=2.0),
        ),
    ],
)
def test_injection_syntax(text: str, expected: Injection) -> None:
    assert parse_injection(text) == expected
    assert str(expected) == text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("smoke@round=1", "unknown fault kind 'smoke'"),
        ("jam", "say when"),
        ("jam@round=0", "count from 1"),
        ("jam@turn=2", "write KIND@round=N"),
        ("foreign-card@card=2,for=1", "has no duration"),
        ("firmware-power-cut@card=3", "without @round or @card"),
    ],
)
def test_bad_injections_say_how_to_write_them(text: str, message: str) -> None:
    with pytest.raises(SimConfigError, match=message):
        parse_injection(text)


def test_every_kind_is_covered_by_a_wire_test_here() -> None:
    """Here, or for a line reader's own faults in test_line_reader_sim.py."""
    here = Path(__file__)
    source = here.read_text(encoding="utf-8") + here.with_name("test_line_reader_sim.py").read_text(
        encoding="utf-8"
    )
    untested = [kind.value for kind in InjectionKind if f'"{kind.value}@' not in source]
    assert not untested


def test_a_scenario_file_sets_the_device_and_its_injections(tmp_path: Path) -> None:
    scenario = tmp_path / "night.toml"
    scenario.write_text(
        'profile = "cs-auto"\nseed = 4\ndecks = 6\ninject = ["face-down@round=2", "jam@card=9"]\n'
    )
    assert load_scenario(scenario).injections == (
        Injection(InjectionKind.FACE_DOWN, round=2),
        Injection(InjectionKind.JAM, card=9),
    )
    device = configure_device(scenario=scenario, inject=["drop-frame@card=1"])
    assert device.profile.name == "cs-auto" and device.decks == 6
    assert [str(i) for i in device.plan.injections] == [
        "face-down@round=2",
        "jam@card=9",
        "drop-frame@card=1",
    ]
    assert device.shoe.cards == configure_device(scenario=scenario).shoe.cards
    scenario.write_text('profile = "cs-1"\ncolour = "red"\n')
    with pytest.raises(SimConfigError, match="unknown keys"):
        load_scenario(scenario)


def test_a_power_cut_mid_transfer_restarts_the_device_on_its_old_firmware() -> None:
    """firmware-power-cut: the power fails half-way through the transfer; the device answers
    nothing more, comes back after the duration, and runs the slot it ran before."""
    house = Ed25519PrivateKey.generate()
    clock = FakeClock()
    core = create_device(
        "cs-1", seed=7, clock=clock, injections=[parse_injection("firmware-power-cut,for=2")]
    )
    core.link.house_public_key = house.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    factory_hash = core.firmware_hash
    host = WireHost(core, clock)
    host.receive()
    host.send(GetInfo(host.request_id(), PROTOCOL_MINOR))
    host.receive()
    image = bytes(range(256)) * 4
    signed = sign_image(image, 2, house)
    begin = FirmwareBegin(host.request_id(), 2, len(image), signed.sha256, signed.signature)
    host.send(begin)
    assert Reply(begin.request_id, ErrorCode.OK) in host.receive()
    answers = []
    for offset in range(0, len(image), FIRMWARE_CHUNK_SIZE):
        host.send(
            FirmwareChunk(host.request_id(), offset, image[offset : offset + FIRMWARE_CHUNK_SIZE])
        )
        answers += [m for m in host.receive() if isinstance(m, Reply)]
    assert not core.plugged
    assert len(answers) < len(image) // FIRMWARE_CHUNK_SIZE // 2 + 1
    host.wait(2.1)
    assert core.plugged
    host.send(GetInfo(host.request_id(), PROTOCOL_MINOR))
    [hello] = [m for m in host.receive() if isinstance(m, Hello) and m.request_id]
    assert hello.firmware_hash == factory_hash == core.firmware_hash
    host.send(FirmwareCommit(host.request_id()))
    assert [m.result for m in host.receive() if isinstance(m, Reply)] == [
        ErrorCode.FIRMWARE_OUT_OF_ORDER
    ]
