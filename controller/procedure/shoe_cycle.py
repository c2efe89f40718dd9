"""The shoe's life: opened, shuffled and counted, its reports, ended, reconciled or abandoned.

One job of the table model (the chain of its jobs is in base.py): everything
that happens to the shoe as a whole, from start-shoe to the device's counts
that close it (or abandon-shoe), and what the shoe reports on its own (the cut
card, an empty shoe). Rounds are rounds.py's; this part opens and closes the
shoe around them.
"""

from __future__ import annotations

from transitions import EventData

from cardshoe.controller.procedure.facts import (
    Alarm,
    AlarmKind,
    BurnReason,
    ReliefBurnDropped,
    ShoeEnded,
    ShoeShuffled,
    ShoeStarted,
    TableIdle,
)
from cardshoe.controller.procedure.holds import HoldReason
from cardshoe.controller.procedure.inputs import DeviceCount, PackCount
from cardshoe.controller.procedure.irregularities import Irregularity
from cardshoe.controller.procedure.machine import State, Trigger
from cardshoe.controller.procedure.operator_commands import StartShoe
from cardshoe.controller.procedure.operator_input import deck_set_text
from cardshoe.controller.procedure.rounds import Rounds
from cardshoe.controller.procedure.shoe import CARDS_PER_DECK, ShoeState
from cardshoe.drivers.api.events import OperationDone


class ShoeCycle(Rounds):
    """The shoe-lifecycle actions the procedure names."""

    # Actions: opening a shoe

    def open_shoe(self, event: EventData) -> None:
        command: StartShoe = event.kwargs["command"]
        decks = self.config.game.decks
        self.shoe = ShoeState(
            command.shoe_id,
            command.deck_set,
            loaded=decks * CARDS_PER_DECK,
            deck_set_declared=command.deck_set is not None,
        )
        self._emit(
            ShoeStarted(
                command.shoe_id,
                self.game.name,
                decks,
                str(self.config.device.kind),
                self.config.fingerprint,
                self.config.fingerprint_options(),
                None if command.deck_set is None else deck_set_text(command.deck_set),
            )
        )

    def start_shoe_burn(self, event: EventData) -> None:
        shoe = self._open_shoe()
        shoe.burn_reason, shoe.burn_remaining = BurnReason.START_OF_SHOE, None

    def record_shuffle(self, event: EventData) -> None:
        done: OperationDone = event.kwargs["done"]
        shoe = self._open_shoe()
        expected = shoe.loaded
        shoe.loaded, shoe.cards_out = done.card_count, 0
        self._emit(ShoeShuffled(done.card_count))
        shoe.pack_checked = True
        if done.card_count != expected:
            self._emit(
                Alarm(
                    AlarmKind.CARD_COUNT,
                    f"the machine shuffled {done.card_count} cards; "
                    f"{self.config.game.decks} decks hold {expected}: load "
                    f"{self.config.game.decks} decks, or correct game.decks and start a new shoe",
                )
            )
            self.trigger(Trigger.HOLD, reason=HoldReason.PACK_COUNT_MISMATCH)

    def check_pack_count(self, event: EventData) -> None:
        """Before the deal: the manual shoe must hold decks x 52 cards (issue 12, shoe start).

        A 6-deck table dealt an 8-deck shoe voids round after round for excess
        copies; the count names the cause before the first round.
        """
        count: PackCount = event.kwargs["count"]
        shoe = self.shoe
        if shoe is None or shoe.pack_checked:
            return
        shoe.pack_checked = True
        if count.cards_remaining is None or count.cards_dealt is None:
            return  # the device cannot count its pack: nothing to compare
        held = count.cards_remaining + count.cards_dealt
        if held == shoe.loaded:
            return
        decks = self.config.game.decks
        self._emit(
            Alarm(
                AlarmKind.CARD_COUNT,
                f"the shoe holds {held} cards; {decks} decks hold {shoe.loaded}: load {decks} "
                "decks, or correct game.decks and start a new shoe",
            )
        )
        self.trigger(Trigger.HOLD, reason=HoldReason.PACK_COUNT_MISMATCH)

    def fail_shuffle(self, event: EventData) -> None:
        done: OperationDone = event.kwargs["done"]
        self._emit(Alarm(AlarmKind.DEVICE_FAULT, f"shuffle failed: {done.result.upper()}"))
        self._close_shoe(reconciled=False)

    # Actions: ending a shoe

    def withdraw_open_round(self, event: EventData) -> None:
        if self.round is not None:
            reason = Irregularity.INSUFFICIENT_CARDS if self._open_shoe().empty else "shoe_closed"
            self.round.void_reason = reason
            self.void_round(event)

    def make_round_last(self, event: EventData) -> None:
        self._set_last_round(self._current_round_number(), "house", event.kwargs["reason"])

    def reconcile_shoe(self, event: EventData) -> None:
        count: DeviceCount = event.kwargs["count"]
        problems = reconciliation_problems(self._open_shoe(), count)
        if problems:
            self._emit(Alarm(AlarmKind.RECONCILIATION, "; ".join(problems)))
        self._close_shoe(
            reconciled=not problems,
            remaining=count.cards_remaining,
            device_cards_dealt=count.cards_dealt,
        )

    def close_abandoned_shoe(self, event: EventData) -> None:
        reason = event.kwargs["reason"]
        if self.round is not None:
            self.round.void_reason = "shoe_abandoned"
            self.void_round(event)
        self._emit(Alarm(AlarmKind.SHOE_ABANDONED, reason))
        if self.shoe is not None:
            self._close_shoe(reconciled=False)
        if self.state == State.HELD:
            self.held_state = State.IDLE

    def _close_shoe(
        self,
        *,
        reconciled: bool,
        remaining: int | None = None,
        device_cards_dealt: int | None = None,
    ) -> None:
        shoe = self._open_shoe()
        if shoe.relief_burn_due:
            self._emit(ReliefBurnDropped(self.config.game.relief_burn))
        self._emit(
            ShoeEnded(
                shoe.shoe_id,
                shoe.rounds_finished,
                shoe.loaded,
                shoe.dealt,
                shoe.burned,
                shoe.returned,
                shoe.intruders,
                remaining,
                device_cards_dealt,
                reconciled,
            )
        )
        self.shoe = None

    def on_enter_idle(self, event: EventData) -> None:
        self._emit(TableIdle())

    # Actions: what the shoe reports

    def note_cut_card(self, event: EventData) -> None:
        last = self._current_round_number() + self.config.shoe.rounds_after_cut_card - 1
        self._set_last_round(last, "cut_card")
        self._check_cut_card_position()

    def _check_cut_card_position(self) -> None:
        """An early or late cut card ends the shoe where nobody cut it: the pit must look.

        A manual shoe gives nothing back, so the cards still in it are what was
        loaded (with any intruders) less what came out.
        """
        shoe, rules = self._open_shoe(), self.config.shoe
        left = shoe.loaded + shoe.intruders - shoe.dealt - shoe.burned
        if abs(left - rules.cut_card_depth) > rules.cut_card_tolerance:
            self._emit(
                Alarm(
                    AlarmKind.CUT_CARD,
                    f"the cut card came out with {left} cards left in the shoe; "
                    f"shoe.cut_card_depth is {rules.cut_card_depth} "
                    f"(tolerance {rules.cut_card_tolerance}): check how the pack was cut",
                )
            )

    def note_shoe_empty(self, event: EventData) -> None:
        shoe = self._open_shoe()
        shoe.empty = True
        current = self.round
        if (
            self.position in (State.ROUND_BURN, State.DEALING)
            and current is not None
            and current.void_reason is None
            and not current.deal.is_complete
        ):
            current.void_reason = Irregularity.INSUFFICIENT_CARDS
            self._record_irregularity(Irregularity.INSUFFICIENT_CARDS, None, None)


def reconciliation_problems(shoe: ShoeState, count: DeviceCount) -> list[str]:
    """The device's counts against the shoe's own accounting: each disagreement in words.

    A rule, not an action: none means the shoe is reconciled. A count the device
    cannot give (None) is compared with nothing.
    """
    taken = shoe.dealt + shoe.burned
    problems = []
    if count.cards_dealt is not None and count.cards_dealt != taken:
        problems.append(f"the device counted {count.cards_dealt} cards out, the journal {taken}")
    if count.cards_remaining is not None:
        accounted = taken - shoe.returned + count.cards_remaining
        if accounted != shoe.loaded + shoe.intruders:
            problems.append(
                f"loaded {shoe.loaded} + intruders {shoe.intruders} != dealt {shoe.dealt} "
                f"+ burned {shoe.burned} - returned {shoe.returned} "
                f"+ remaining {count.cards_remaining}"
            )
    return problems
