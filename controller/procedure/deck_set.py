"""Which pack is loaded: a declared deck set checked, an undeclared one weighed.

A rule of its own, with its own evidence and its own hold (deck_set_mismatch):
dealing.py hands it each card it takes, and it answers by holding the table,
adopting the set most cards show, or finding earlier cards foreign once the
set is known. Kept apart from dealing so the card path reads as what happens
to one card, and this as what the cards together say about the pack.
"""

from __future__ import annotations

from collections import Counter

from cardshoe.controller.procedure.base import TableBase
from cardshoe.controller.procedure.facts import Alarm, AlarmKind, DeckSetAdopted
from cardshoe.controller.procedure.holds import HoldReason
from cardshoe.controller.procedure.irregularities import (
    CardInspection,
    Consequence,
    Irregularity,
    card_of,
)
from cardshoe.controller.procedure.machine import ROUND_STATES, Trigger
from cardshoe.controller.procedure.operator_input import deck_set_text
from cardshoe.controller.procedure.shoe import ShoeState
from cardshoe.drivers.api.events import CardId

DECK_SET_EVIDENCE = 3
"""With no deck set declared, cards of one set that make it the loaded set, when they also
outnumber the cards of every other set together."""


class DeckSetWatch(TableBase):
    """The deck set's checks, for each card the dealing takes."""

    def _before_the_declared_set(self, shoe: ShoeState, inspection: CardInspection) -> bool:
        """A foreign card before any card of the declared set: the declaration may be wrong.

        With a mistyped deck set every card is foreign; dealing on would void
        every round of the shoe. Once a card of the declared set has come out,
        a foreign card is only that (it voids its round and alarms).
        """
        card_id = inspection.card_id
        if card_id is not None and card_id.deck_set == shoe.deck_set:
            shoe.declared_set_seen = True
        return (
            shoe.deck_set_declared
            and not shoe.declared_set_seen
            and Irregularity.FOREIGN_CARD in inspection.findings
        )

    def _hold_for_the_deck_set(self, shoe: ShoeState, inspection: CardInspection) -> None:
        card_id = inspection.card_id
        assert card_id is not None and shoe.deck_set is not None
        self._emit(
            Alarm(
                AlarmKind.FOREIGN_CARD,
                f"a card of deck set {deck_set_text(card_id.deck_set)} came out before any of "
                f"the declared {deck_set_text(shoe.deck_set)}: if the declaration is wrong, "
                "abandon the shoe and start it again with the deck set printed on the box; "
                "if the card is foreign, take it out and clear-hold "
                f"{HoldReason.DECK_SET_MISMATCH}",
            )
        )
        self.trigger(Trigger.HOLD, reason=HoldReason.DECK_SET_MISMATCH)

    def _weigh_deck_set(self, shoe: ShoeState, inspection: CardInspection) -> None:
        """No deck set declared: the pack's majority names it, never a single card.

        A foreign card that happens to come out first would otherwise become the
        loaded set and make every genuine card after it foreign. Each readable card
        is evidence; the set of DECK_SET_EVIDENCE cards that outnumber all the others
        together is adopted. Cards of two sets before that hold the table
        (deck_set_mismatch): a person looks at them. Once the set is adopted, each
        earlier card of another set is found foreign, as it would have been then.
        """
        card_id = inspection.card_id
        if shoe.deck_set is not None or card_id is None:
            return
        shoe.set_evidence.append((card_id, self.round_no))
        sets = Counter(evidence.deck_set for evidence, _ in shoe.set_evidence)
        if len(sets) == 2 and sets[card_id.deck_set] == 1:
            self._hold_for_disagreeing_cards(shoe)
        ((leader, cards),) = sets.most_common(1)
        if cards < DECK_SET_EVIDENCE or cards <= len(shoe.set_evidence) - cards:
            return
        shoe.deck_set = leader
        self._emit(DeckSetAdopted(deck_set_text(leader)))
        strays = [
            (stray, number) for stray, number in shoe.set_evidence if stray.deck_set != leader
        ]
        shoe.set_evidence.clear()
        for stray, number in strays:
            self._find_foreign_afterwards(shoe, stray, number)

    def _hold_for_disagreeing_cards(self, shoe: ShoeState) -> None:
        seen = ", ".join(str(evidence) for evidence, _ in shoe.set_evidence)
        self._emit(
            Alarm(
                AlarmKind.FOREIGN_CARD,
                f"cards of more than one deck set came out before the loaded set was known "
                f"({seen}): take out any card not of the set printed on the box and "
                f"clear-hold {HoldReason.DECK_SET_MISMATCH}, or abandon the shoe and start it "
                "again with --deck-set; the set most cards show is adopted",
            )
        )
        self.trigger(Trigger.HOLD, reason=HoldReason.DECK_SET_MISMATCH)

    def _find_foreign_afterwards(
        self, shoe: ShoeState, card_id: CardId, number: int | None
    ) -> None:
        """A card found foreign once the loaded set was adopted: recorded and counted as an
        intruder, and its round, if still under way, is void (7 Up 5.1, Macau Art. 10)."""
        card = card_of(card_id)
        shoe.intruders += 1
        shoe.copies[card] -= 1
        shoe.seen.discard(card_id)
        current = self.round
        voids = (
            current is not None
            and current.number == number
            and current.void_reason is None
            and self.position in ROUND_STATES
        )
        if voids and current is not None:
            current.void_reason = Irregularity.FOREIGN_CARD
        consequence = Consequence.VOID_ROUND if voids else Consequence.BURN
        self._record_irregularity(Irregularity.FOREIGN_CARD, card, str(card_id), consequence)
        self._emit(Alarm(AlarmKind.FOREIGN_CARD, f"{Irregularity.FOREIGN_CARD}: {card_id}"))
