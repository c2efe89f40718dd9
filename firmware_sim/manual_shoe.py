"""A manual dealing shoe: a card reader with a gate, a dealer button and a door.

Cards leave when the dealer pulls them (VirtualDealer in tests and the
demo); the gate decides whether the dealer can. Round N begins at the
dealer's Nth BUTTON press ("no more bets"); cards pulled before the first
press are the burn.
"""

from __future__ import annotations

from typing import ClassVar

from cardshoe.drivers.protocol.error_codes import ErrorCode
from cardshoe.drivers.protocol.messages import (
    ButtonPressed,
    Capability,
    CardRead,
    Command,
    GateMode,
    Orientation,
    SetGate,
)
from cardshoe.firmware_sim.core import FirmwareCore, locked
from cardshoe.firmware_sim.faults import InjectionKind

DEALER_BUTTON = 0


class ManualShoe(FirmwareCore):
    SUPPORTED: ClassVar[Capability] = (
        Capability.GATE
        | Capability.TAGGED_CARDS
        | Capability.ORIENTATION
        | Capability.DOUBLE_FEED_DETECTION
        | Capability.DEALER_BUTTON
        | Capability.CUT_CARD_DETECTION
        | Capability.DOOR_SENSOR
    )
    FORBIDDEN_INJECTIONS: ClassVar[frozenset[InjectionKind]] = frozenset({InjectionKind.FACE_DOWN})
    FACE: ClassVar[Orientation] = Orientation.FACE_DOWN
    HAS_CUT_CARD: ClassVar[bool] = True

    # --- the dealer's side ----------------------------------------------------------

    @locked
    def press_button(self) -> bool:
        """The dealer calls "no more bets": a BUTTON event, and the next round begins.

        False when the shoe has no button or is unplugged.
        """
        if not self.plugged or not self.profile.has(Capability.DEALER_BUTTON):
            return False
        self._start_round()
        self._queue(ButtonPressed, button=DEALER_BUTTON)
        return True

    @locked
    def pull_card(self) -> bool:
        """The dealer pulls the card at the exit; False when the gate or the shoe stops it.

        On a shoe without a gate nothing stops the dealer but an empty shoe,
        a jam or an open door.
        """
        has_gate = self.profile.has(Capability.GATE)
        if has_gate and self.gate is GateMode.LOCKED:
            return False
        if not self._release_cards(self.FACE):
            return False
        if self.gate is GateMode.RELEASE_ONE:
            self.gate = GateMode.LOCKED
        self.dealer.last_pull_at = self._clock()
        return True

    # --- firmware -------------------------------------------------------------------

    def _model_command(self, command: Command) -> ErrorCode:
        if not isinstance(command, SetGate):
            return ErrorCode.UNSUPPORTED
        if command.mode is GateMode.LOCKED:
            self.gate = GateMode.LOCKED
            return ErrorCode.OK
        refusal = self._deal_refusal()
        if refusal is not None:
            return refusal
        self.gate = command.mode
        return ErrorCode.OK

    def _tick_model(self, now: float) -> None:
        done = self.shoe.cut_card_seen or not self.shoe.remaining
        if self.dealer.reload_due(now, done, self.gate is GateMode.LOCKED):
            self.load_pack()
            return
        if (
            self.dealer.ready(now)
            and self.profile.has(Capability.GATE)
            and self.gate is not GateMode.LOCKED
            and not any(isinstance(event, CardRead) for event in self.link.pending)
        ):
            self.pull_card()
