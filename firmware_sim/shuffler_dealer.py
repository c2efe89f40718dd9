"""An automatic shuffler-dealer (Macau Art. 2.3 and 7.2).

It shuffles the loaded decks into a shoe, delivers one card face up per
DEAL_NEXT, and after each round takes the round's cards back and shuffles
them in at random places (continuous shuffling), so it has no cut card.
Round N begins at the first DEAL_NEXT after power-up, a SHUFFLE or a RETURN.
"""

from __future__ import annotations

from typing import ClassVar

from cardshoe.drivers.protocol.cardid import CardId
from cardshoe.drivers.protocol.error_codes import ErrorCode
from cardshoe.drivers.protocol.messages import (
    Capability,
    Command,
    DealNext,
    FaultKind,
    MessageType,
    OperationDone,
    Orientation,
    ReturnCards,
    Shuffle,
)
from cardshoe.firmware_sim.core import FirmwareCore
from cardshoe.firmware_sim.faults import InjectionKind


class ShufflerDealer(FirmwareCore):
    SUPPORTED: ClassVar[Capability] = (
        Capability.DEAL_NEXT
        | Capability.SHUFFLE
        | Capability.RETURN
        | Capability.TAGGED_CARDS
        | Capability.ORIENTATION
        | Capability.DOUBLE_FEED_DETECTION
        | Capability.DOOR_SENSOR
    )
    FORBIDDEN_INJECTIONS: ClassVar[frozenset[InjectionKind]] = frozenset(
        {InjectionKind.REVERSED_CARD, InjectionKind.EARLY_CUT_CARD}
    )
    FACE: ClassVar[Orientation] = Orientation.FACE_UP
    HAS_CUT_CARD: ClassVar[bool] = False

    _deals_pending = 0
    _next_deal_at = 0.0
    _round_open = False
    _table_from = 0
    """Cards in shoe.dealt from this index on are on the table, not yet returned."""

    def press_button(self) -> bool:
        """An automatic machine has no dealer button."""
        return False

    def pull_card(self) -> bool:
        """Nothing to pull by hand: the machine delivers each card itself on DEAL_NEXT."""
        return False

    def _start_firmware(self) -> None:
        """Accepted deals do not survive a restart: the host will ask again."""
        self._deals_pending = 0
        super()._start_firmware()

    def _model_command(self, command: Command) -> ErrorCode:
        if isinstance(command, DealNext):
            return self._accept_deal()
        if isinstance(command, Shuffle | ReturnCards):
            if self._operation is not None:
                return ErrorCode.BUSY
            if self.door_open:
                return ErrorCode.DOOR_OPEN
            if isinstance(command, Shuffle):
                self._start_operation(
                    MessageType.SHUFFLE,
                    self.timing.shuffle_s,
                    lambda: self._finish_shuffle(command),
                )
            else:
                self._start_operation(
                    MessageType.RETURN,
                    self.timing.return_s,
                    lambda: self._finish_return(command),
                )
            return ErrorCode.OK
        return ErrorCode.UNSUPPORTED

    def _accept_deal(self) -> ErrorCode:
        refusal = self._deal_refusal()
        if refusal is not None:
            return refusal
        if not self._round_open:
            self._round_open = True
            self._start_round()
        if not self._deals_pending:
            self._next_deal_at = self._clock() + self.timing.deal_s
        self._deals_pending += 1
        return ErrorCode.OK

    def _tick_model(self, now: float) -> None:
        """Deliver accepted deals; a jam or an open door holds them until it clears."""
        if not self._deals_pending or now < self._next_deal_at or self._operation is not None:
            return
        if not self.self_test_passed:
            self._deals_pending = 0
            return
        if self._release_cards(self.FACE):
            self._deals_pending -= 1
            self._next_deal_at = now + self.timing.deal_s
        elif not self.shoe.remaining:
            self._deals_pending = 0

    def _cards_out(self) -> list[CardId]:
        """The cards on the table: everything before them went back into the machine."""
        return self.shoe.dealt[self._table_from :]

    def _finish_shuffle(self, command: Shuffle) -> None:
        self.decks = command.decks
        self.shoe = self._new_shoe(command.decks, self.shoe.order)
        self._table_from = 0
        self._round_open = False
        self._deals_pending = 0
        self._clear_fault(FaultKind.CARD_COUNT_MISMATCH)
        self._queue(
            OperationDone,
            request_id=command.request_id,
            operation=MessageType.SHUFFLE,
            result=ErrorCode.OK,
            card_count=min(self.shoe.remaining, 0xFFFF),
        )

    def _finish_return(self, command: ReturnCards) -> None:
        """The round's cards go back in; an intruder was set apart and stays out."""
        on_table = range(self._table_from, len(self.shoe.dealt))
        returned = [self.shoe.dealt[i] for i in on_table if i not in self.shoe.intruders]
        self.shoe.shuffle_in(returned, self.rng)
        self._table_from = len(self.shoe.dealt)
        self._round_open = False
        self._queue(
            OperationDone,
            request_id=command.request_id,
            operation=MessageType.RETURN,
            result=ErrorCode.OK,
            card_count=len(returned),
        )
        if len(returned) != command.expected_cards:
            self._raise_fault(FaultKind.CARD_COUNT_MISMATCH, detail=len(returned))
