"""What each injected fault does to a cardshoe-protocol device: one table, a row per kind.

faults.py says what can go wrong and when (the kinds, `KIND@round=N`, the
plan that fires them); this module says what each kind does when it fires,
so one row of EFFECTS holds a kind's whole behaviour: the moment it strikes
(its Stage), what it does then, and the capability the device needs to
notice it. FirmwareCore asks the table as a card is about to leave and at
power-up. A new kind is a member of InjectionKind and a row here
(docs/architecture.md, "How to add a fault kind").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import Enum, auto
from typing import TYPE_CHECKING

from cardshoe.drivers.api.events import CardSuit
from cardshoe.drivers.protocol.cardid import CardId
from cardshoe.drivers.protocol.messages import Capability, FaultKind, Orientation
from cardshoe.firmware_sim.errors import SimConfigError
from cardshoe.firmware_sim.faults import (
    DEFAULT_DURATION_S,
    LINE_ONLY_KINDS,
    Injection,
    InjectionKind,
)
from cardshoe.firmware_sim.profiles import DeviceProfile

if TYPE_CHECKING:
    from cardshoe.firmware_sim.core import FirmwareCore

ALTERED_IMAGE_SUFFIX = b"\x00altered"


class Stage(Enum):
    """When an injection strikes as its card is about to leave, in the order they run."""

    BLOCK = auto()
    """Instead of the card leaving: the card stays, the other injections due wait for it."""
    SHAPE = auto()
    """It changes what leaves: how many cards, which way up, whether the reader reads it."""
    CARD = auto()
    """It changes the shoe as the card is about to leave (or arms itself, at power-up)."""
    WIRE = auto()
    """It strikes the transmission of the card's event, not the card itself."""
    LINE = auto()
    """A line reader's text only: no cardshoe-protocol device can have it."""


@dataclass
class Release:
    """The card (or double feed) about to leave, as the SHAPE and WIRE injections leave it."""

    orientation: Orientation
    feed_size: int = 1
    in_order: bool = False
    unread: Injection | None = None
    """A misread-card or unreadable-card injection: the first card leaves unread."""
    unplug: Injection | None = None
    """An unplug injection: the device loses power once the card's events are queued."""
    seq: int = 0
    """The seq of the card's event, set before the WIRE injections strike it."""


Action = Callable[["FirmwareCore", Injection, Release], None]


@dataclass(frozen=True)
class FaultEffect:
    stage: Stage
    act: Action
    needs: Capability | None = None
    """Without it the device could not even notice the fault: injecting it is a mistake in
    the scenario."""


def duration_of(injection: Injection) -> float:
    """How long the fault lasts: its `,for=`, else its kind's default."""
    return injection.duration_s or DEFAULT_DURATION_S.get(injection.kind, 0.0)


def _foreign_card(core: FirmwareCore, injection: Injection, release: Release) -> None:
    """A card of another deck set slips in: it belongs to some other table's shoe."""
    other_set = core.deck_set % 0xFFFFFFFF + 1
    core.shoe.put_on_top(
        CardId(core.rng.randint(1, 13), CardSuit(core.rng.randint(0, 3)), other_set, 1)
    )


def _duplicate_card(core: FirmwareCore, injection: Injection, release: Release) -> None:
    copied = _card_still_out(core)
    if copied is None:
        # Nothing out to copy yet (a round's first card on the automatic machine,
        # which took every earlier card back): strike at the next card instead.
        later = replace(injection, round=None, card=len(core.shoe.dealt) + 2)
        core.plan.injections.append(later)
    else:
        core.shoe.put_on_top(copied)


def _card_still_out(core: FirmwareCore) -> CardId | None:
    """A card dealt and not taken back, for a duplicate: only while both copies are
    out can the host tell the intruder from its genuine card. This round's latest card,
    or between rounds the shoe's first; None when every card dealt is back in."""
    out = core._cards_out()
    if not out:
        return None
    return out[-1] if core._cards_in_round else out[0]


def _early_cut_card(core: FirmwareCore, injection: Injection, release: Release) -> None:
    core._report_cut_card()


def _out_of_cards(core: FirmwareCore, injection: Injection, release: Release) -> None:
    core.shoe.keep_only(1)
    core.shoe.cut_card_depth = None


def _jam(core: FirmwareCore, injection: Injection, release: Release) -> None:
    core._raise_fault(FaultKind.JAM, detail=1)
    core._schedule(duration_of(injection), core.clear_jam)


def _door_open(core: FirmwareCore, injection: Injection, release: Release) -> None:
    core.open_door()
    core._schedule(duration_of(injection), core.close_door)


def _bad_firmware_hash(core: FirmwareCore, injection: Injection, release: Release) -> None:
    core.firmware_image += ALTERED_IMAGE_SUFFIX
    if not injection.at_power_up:
        core._start_self_test()


def _arm_power_cut(core: FirmwareCore, injection: Injection, release: Release) -> None:
    """Armed now, it strikes half-way through the next firmware transfer."""
    core._power_cut = injection


def _double_feed(core: FirmwareCore, injection: Injection, release: Release) -> None:
    release.feed_size = 2


def _double_feed_in_order(core: FirmwareCore, injection: Injection, release: Release) -> None:
    release.feed_size = 2
    release.in_order = True


def _face_up(core: FirmwareCore, injection: Injection, release: Release) -> None:
    release.orientation = Orientation.FACE_UP


def _face_down(core: FirmwareCore, injection: Injection, release: Release) -> None:
    release.orientation = Orientation.FACE_DOWN


def _unread(core: FirmwareCore, injection: Injection, release: Release) -> None:
    release.unread = release.unread or injection


def _corrupt_bytes(core: FirmwareCore, injection: Injection, release: Release) -> None:
    core.link.wire_faults.corrupt.add(release.seq)


def _drop_frame(core: FirmwareCore, injection: Injection, release: Release) -> None:
    core.link.wire_faults.drop.add(release.seq)


def _duplicate_frame(core: FirmwareCore, injection: Injection, release: Release) -> None:
    core.link.wire_faults.duplicate.add(release.seq)


def _delay_ack(core: FirmwareCore, injection: Injection, release: Release) -> None:
    core.link.wire_faults.ack_delay_s[release.seq] = duration_of(injection)


def _unplug_after(core: FirmwareCore, injection: Injection, release: Release) -> None:
    release.unplug = release.unplug or injection


def _nothing(core: FirmwareCore, injection: Injection, release: Release) -> None:
    """A line reader's fault: the device refuses it before it could fire."""


EFFECTS: dict[InjectionKind, FaultEffect] = {
    InjectionKind.FOREIGN_CARD: FaultEffect(Stage.CARD, _foreign_card, Capability.TAGGED_CARDS),
    InjectionKind.DUPLICATE_CARD: FaultEffect(Stage.CARD, _duplicate_card, Capability.TAGGED_CARDS),
    InjectionKind.DOUBLE_FEED: FaultEffect(Stage.SHAPE, _double_feed),
    InjectionKind.DOUBLE_FEED_IN_ORDER: FaultEffect(
        Stage.SHAPE, _double_feed_in_order, Capability.DOUBLE_FEED_DETECTION
    ),
    InjectionKind.MISREAD_CARD: FaultEffect(Stage.SHAPE, _unread),
    InjectionKind.UNREADABLE_CARD: FaultEffect(Stage.SHAPE, _unread),
    InjectionKind.REVERSED_CARD: FaultEffect(Stage.SHAPE, _face_up),
    InjectionKind.FACE_DOWN: FaultEffect(Stage.SHAPE, _face_down),
    InjectionKind.JAM: FaultEffect(Stage.BLOCK, _jam),
    InjectionKind.DOOR_OPEN: FaultEffect(Stage.BLOCK, _door_open, Capability.DOOR_SENSOR),
    InjectionKind.EARLY_CUT_CARD: FaultEffect(
        Stage.CARD, _early_cut_card, Capability.CUT_CARD_DETECTION
    ),
    InjectionKind.OUT_OF_CARDS: FaultEffect(Stage.CARD, _out_of_cards),
    InjectionKind.UNPLUG: FaultEffect(Stage.WIRE, _unplug_after),
    InjectionKind.CORRUPT_BYTES: FaultEffect(Stage.WIRE, _corrupt_bytes),
    InjectionKind.DROP_FRAME: FaultEffect(Stage.WIRE, _drop_frame),
    InjectionKind.DUPLICATE_FRAME: FaultEffect(Stage.WIRE, _duplicate_frame),
    InjectionKind.DELAY_ACK: FaultEffect(Stage.WIRE, _delay_ack),
    InjectionKind.BAD_FIRMWARE_HASH: FaultEffect(Stage.BLOCK, _bad_firmware_hash),
    InjectionKind.FIRMWARE_POWER_CUT: FaultEffect(Stage.CARD, _arm_power_cut),
    **{kind: FaultEffect(Stage.LINE, _nothing) for kind in LINE_ONLY_KINDS},
}
"""Every injection kind and what it does; tests/sim checks that no kind is missing."""


def stage_of(injection: Injection) -> Stage:
    return EFFECTS[injection.kind].stage


def check_injections(
    injections: list[Injection], profile: DeviceProfile, forbidden: frozenset[InjectionKind]
) -> None:
    """Refuse a scenario's injection the device could not have, or could not notice."""
    for injection in injections:
        if injection.kind in forbidden or stage_of(injection) is Stage.LINE:
            raise SimConfigError(
                f"{injection} cannot happen on a {profile.kind.name} (profile {profile.name})"
            )
        needed = EFFECTS[injection.kind].needs
        if needed is not None and not profile.has(needed):
            raise SimConfigError(
                f"{injection}: profile {profile.name} lacks {needed.name}, "
                "so the device could not notice it"
            )
