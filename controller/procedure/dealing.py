"""Dealing: every card that leaves the shoe, to a hand, set aside, or burned.

One job of the table model (the chain of its jobs is in base.py): for each CARD
event it decides what the card is due for and what its irregularities do
(irregularities.py); what the cards say about the loaded pack is deck_set.py's.
The shoe's lifecycle, the rounds' opening and settling, the holds and the
inputs' routing are other modules'; this part knows only cards. Like the model,
it does no I/O: it emits facts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from transitions import EventData

from cardshoe.controller.config import BurnPolicy
from cardshoe.controller.procedure.base import physical_id
from cardshoe.controller.procedure.deck_set import DeckSetWatch
from cardshoe.controller.procedure.facts import (
    Alarm,
    AlarmKind,
    Burned,
    BurnReason,
    CardAssigned,
    CardCorrected,
    CardSetAside,
    CorrectionMethod,
    FirstCardCorrected,
)
from cardshoe.controller.procedure.holds import HoldReason
from cardshoe.controller.procedure.irregularities import (
    INTRUDER_FINDINGS,
    IRREGULARITIES,
    CardInspection,
    Consequence,
    Irregularity,
    inspect_card,
)
from cardshoe.controller.procedure.machine import ROUND_STATES, State, Trigger
from cardshoe.controller.procedure.shoe import CardDue, FeedGroup, MisreadCard, Round, ShoeState
from cardshoe.controller.rules.cards import Card
from cardshoe.controller.rules.hands import Hand
from cardshoe.drivers.api.events import NO_FLAGS, CardSeen, ReadFlag

MAX_FEED_SIZE = 6
"""The most cards one baccarat round takes (three to each hand): a double feed announcing
more is capped here, and the host's feed watch holds the table when the rest never comes."""


class Dealing(DeckSetWatch):
    """The card-taking actions the procedure names."""

    # Actions: cards

    def take_card(self, event: EventData) -> None:
        card_event: CardSeen = event.kwargs["event"]
        shoe = self.shoe
        if shoe is None:
            self._take_card_without_shoe(card_event)
            return
        if shoe.first_card_unread:
            self._take_first_card_reread(shoe, card_event)
            return
        current = self.round
        if current is not None and current.misread is not None:
            self._take_reread(shoe, current, current.misread, card_event)
            return
        feed = shoe.feed
        continuing = feed is not None and card_event.feed_group == feed.group
        if feed is not None and not continuing:
            shoe.feed = feed = None
        flags = card_event.flags
        # NO_FLAGS first: nearly every read is clean, and a Flag's `in` is slow Python.
        suspected = flags is not NO_FLAGS and ReadFlag.DOUBLE_FEED_SUSPECTED in flags
        in_order = suspected and ReadFlag.FEED_IN_ORDER in flags
        starts_group = suspected and not continuing
        due = self._due_at(self.position, within_ordered_feed=True)
        if feed is not None and feed.in_order:
            self._step_ordered_feed(shoe, feed)
            feed = None
        inspection = self._inspect(
            shoe, card_event, starts_feed_group=starts_group and not in_order
        )
        findings = list(inspection.findings)
        if self.state == State.HELD:
            findings.append(Irregularity.CARD_DURING_HOLD)
        wrong_pack = self._before_the_declared_set(shoe, inspection)
        self._count_card(shoe, inspection)
        if feed is not None:
            self._take_group_card(shoe, feed, inspection)
        elif isinstance(due, Hand) and inspection.card_id is None and not inspection.voids:
            self._take_unread_card(card_event, inspection, due, findings)
        elif isinstance(due, Hand) and not inspection.voids:
            self._assign(inspection, findings)
        elif isinstance(due, Hand):
            self._set_aside(inspection, inspection.voids[0], findings)
        elif self._first_card_decides_the_burn(shoe, due) and inspection.card_id is None:
            self._await_first_card(shoe, inspection, findings)
        else:
            self._burn(inspection, due, findings, voids_round=self._void_open_round(inspection))
        if wrong_pack:
            self._hold_for_the_deck_set(shoe, inspection)
        self._weigh_deck_set(shoe, inspection)
        if self.automatic and inspection.is_intruder:
            self._set_intruder_apart(shoe, inspection)
        if starts_group:
            self._open_feed_group(shoe, card_event, due, in_order)

    def _step_ordered_feed(self, shoe: ShoeState, feed: FeedGroup) -> None:
        """Read one after the other: each card is dealt as if alone, in the events' order."""
        feed.remaining -= 1
        if feed.remaining <= 0:
            shoe.feed = None

    def _take_unread_card(
        self,
        card_event: CardSeen,
        inspection: CardInspection,
        due: Hand,
        findings: list[Irregularity],
    ) -> None:
        """An unreadable card due to a hand: its place is kept for a re-read, unless more of
        its double feed are coming."""
        if card_event.flags & ReadFlag.DOUBLE_FEED_SUSPECTED:
            # The group's next card is on its way: no place can be kept for this one.
            self._set_aside(inspection, Irregularity.MISREAD_CARD, findings, Consequence.VOID_ROUND)
        else:
            self._await_reread(inspection, due, findings)

    def _open_feed_group(
        self, shoe: ShoeState, card_event: CardSeen, due: CardDue | None, in_order: bool
    ) -> None:
        """The first card of a suspected double feed: the group's other cards are expected."""
        group_burn = None if isinstance(due, Hand) else (due or BurnReason.IRREGULAR)
        # A round holds at most MAX_FEED_SIZE cards: no feed announces more truthfully.
        size = min(card_event.feed_size, MAX_FEED_SIZE)
        shoe.feed = FeedGroup(card_event.feed_group, size - 1, group_burn, in_order)
        if shoe.feed.remaining <= 0:
            shoe.feed = None

    def _set_intruder_apart(self, shoe: ShoeState, inspection: CardInspection) -> None:
        """An intruder the automatic machine dealt never goes back into it.

        The machine takes the round's cards back (Art. 7.2), its own cards: returned,
        an intruder would be dealt again in a later round and void that one too. It is
        set apart: not among the cards out that the RETURN takes back, and the table
        holds until a person has removed it and says so (clear-hold intruder_on_table).
        """
        shoe.cards_out -= 1
        finding = next(code for code in inspection.findings if code in INTRUDER_FINDINGS)
        self._emit(
            Alarm(
                IRREGULARITIES[finding].alarm or AlarmKind.FOREIGN_CARD,
                f"{inspection.card_id} was never part of this machine's pack: take it off the "
                "table, keep it out of the machine, and clear-hold "
                f"{HoldReason.INTRUDER_ON_TABLE} once it is removed",
            )
        )
        self.trigger(Trigger.HOLD, reason=HoldReason.INTRUDER_ON_TABLE)

    def _take_card_without_shoe(self, card_event: CardSeen) -> None:
        card_id = card_event.card
        inspection = CardInspection(card_id, ())
        findings = [Irregularity.CARD_OUTSIDE_ROUND]
        if self.state == State.HELD:
            findings.append(Irregularity.CARD_DURING_HOLD)
        self._burn(inspection, BurnReason.IRREGULAR, findings)

    def _count_card(self, shoe: ShoeState, inspection: CardInspection) -> None:
        shoe.cards_out += 1
        self._count_identity(shoe, inspection)

    def _count_identity(self, shoe: ShoeState, inspection: CardInspection) -> None:
        """What the card's identity adds to the shoe's accounting, apart from one card out."""
        if inspection.is_intruder:
            shoe.intruders += 1
        card_id, card = inspection.card_id, inspection.card
        if card_id is not None and card is not None and inspection.belongs_to_shoe:
            if card_id.tagged:
                shoe.seen.add(card_id)
            shoe.copies[card] += 1

    def _take_group_card(
        self, shoe: ShoeState, feed: FeedGroup, inspection: CardInspection
    ) -> None:
        feed.remaining -= 1
        if feed.remaining <= 0:
            shoe.feed = None
        extra: list[Irregularity] = [
            code for code in inspection.findings if code is not Irregularity.DOUBLE_FEED
        ]
        if feed.burn is None and self.round is not None:
            self._set_aside(inspection, Irregularity.DOUBLE_FEED, extra)
        else:
            self._burn(inspection, feed.burn or BurnReason.IRREGULAR, extra)

    def _assign(self, inspection: CardInspection, findings: list[Irregularity]) -> None:
        current, card, card_id = self._open_round(), inspection.card, inspection.card_id
        assert card is not None and card_id is not None
        hand = current.deal.deal(card)
        current.cards.append(card)
        self._open_shoe().dealt += 1
        self._emit(
            CardAssigned(current.number, card, str(card_id), hand, current.deal.next_recipient())
        )
        self._record_findings(inspection, findings, Consequence.RECORD)
        if Irregularity.FACE_DOWN_CARD in findings:
            self.trigger(Trigger.HOLD, reason=HoldReason.FACE_DOWN_CARD)

    def _await_reread(
        self, inspection: CardInspection, hand: Hand, findings: list[Irregularity]
    ) -> None:
        """A card due to a hand that could not be read: keep its place and hold (Art. 10).

        Its place in the deal is known, only its identity is not, so it can be
        put right: the dealer passes it through the reader again (the next CARD
        event is that re-read), or a supervisor enters it. It is counted out of
        the shoe now, once; its identity is counted when it is known.
        """
        current = self._open_round()
        current.cards.append(None)
        self._open_shoe().dealt += 1
        current.misread = MisreadCard(hand, len(current.cards) - 1)
        self._record_findings(inspection, findings, Consequence.RECORD)
        self.trigger(Trigger.HOLD, reason=HoldReason.MISREAD_CARD)

    def _inspect(
        self, shoe: ShoeState, card_event: CardSeen, *, starts_feed_group: bool
    ) -> CardInspection:
        """inspect_card against this table and the shoe as it stands."""
        return inspect_card(
            card_event,
            automatic=self.automatic,
            deck_set=shoe.deck_set,
            decks=self.config.game.decks,
            seen=shoe.seen,
            copies=shoe.copies,
            starts_feed_group=starts_feed_group,
        )

    def _take_reread(
        self, shoe: ShoeState, current: Round, misread: MisreadCard, card_event: CardSeen
    ) -> None:
        """The misread card passed through the reader again: the same physical card.

        The device does not count a re-read as a card out, and neither does the
        table. The strict checks apply to what it reads: unreadable again, the
        table goes on holding; foreign, a duplicate or a copy too many, the round
        is void as for any such card; otherwise it goes to the hand it was due
        (or, in a round voided meanwhile, is set aside with it).
        """
        inspection = self._inspect(shoe, card_event, starts_feed_group=False)
        findings = list(inspection.findings)
        if inspection.card_id is None:
            self._record_findings(inspection, findings, Consequence.RECORD)
            return
        wrong_pack = self._before_the_declared_set(shoe, inspection)
        self._count_identity(shoe, inspection)
        current.misread = None
        current.cards[misread.index] = inspection.card
        if inspection.voids or current.void_reason is not None:
            reason = inspection.voids[0] if inspection.voids else current.void_reason
            current.void_reason = current.void_reason or reason
            self._emit(
                CardSetAside(current.number, inspection.card, physical_id(inspection), str(reason))
            )
            self._record_findings(inspection, findings, Consequence.RECORD)
        else:
            card = inspection.card
            assert card is not None
            self._place_corrected(
                current, misread, card, str(inspection.card_id), CorrectionMethod.REREAD, None
            )
            self._record_findings(inspection, findings, Consequence.RECORD)
            if Irregularity.FACE_DOWN_CARD in findings:
                self.trigger(Trigger.HOLD, reason=HoldReason.FACE_DOWN_CARD)
        if wrong_pack:
            self._hold_for_the_deck_set(shoe, inspection)

    def _first_card_decides_the_burn(self, shoe: ShoeState, due: CardDue | None) -> bool:
        """The start-of-shoe burn's first card, under the first-card policy (Art. 2.1)."""
        return (
            due is BurnReason.START_OF_SHOE
            and shoe.burn_remaining is None
            and self.config.shoe.burn is BurnPolicy.FIRST_CARD
        )

    def _await_first_card(
        self, shoe: ShoeState, inspection: CardInspection, findings: list[Irregularity]
    ) -> None:
        """The first card could not be read: burned, but the burn's count waits for it.

        Art. 2.1's option burns as many cards as the first card's face value, and Art. 18
        binds the table to the option approved: another count (one card per deck, say)
        would be another option. The table holds (misread_card) until the dealer re-reads
        the card or a supervisor enters it (enter-card).
        """
        shoe.burned += 1
        shoe.first_card_unread = True
        self._emit(Burned(None, None, BurnReason.START_OF_SHOE, None))
        self._record_findings(inspection, findings, Consequence.HOLD)
        self.trigger(Trigger.HOLD, reason=HoldReason.MISREAD_CARD)

    def _take_first_card_reread(self, shoe: ShoeState, card_event: CardSeen) -> None:
        """The unread first card passed through the reader again: counted nowhere again."""
        inspection = self._inspect(shoe, card_event, starts_feed_group=False)
        findings = list(inspection.findings)
        if inspection.card_id is None or inspection.card is None:
            self._record_findings(inspection, findings, Consequence.RECORD)
            return
        self._count_identity(shoe, inspection)
        self._record_findings(inspection, findings, Consequence.BURN)
        self._fix_first_card(
            shoe, inspection.card, str(inspection.card_id), CorrectionMethod.REREAD, None
        )

    def _fix_first_card(
        self,
        shoe: ShoeState,
        card: Card,
        physical_id: str,
        method: CorrectionMethod,
        by: Mapping[str, Any] | None,
    ) -> None:
        """The first card is known: its face value fixes the burn, which it is part of."""
        total = self._start_burn_total(card)
        shoe.first_card_unread = False
        shoe.burn_remaining = total - 1
        self._emit(FirstCardCorrected(method, card, physical_id, total, by))

    def _place_corrected(
        self,
        current: Round,
        misread: MisreadCard,
        card: Card,
        physical_id: str,
        method: CorrectionMethod,
        by: Mapping[str, Any] | None,
    ) -> None:
        """The misread card, now known, goes to the hand it was due; the correction is recorded."""
        current.misread = None
        current.cards[misread.index] = card
        hand = current.deal.deal(card)
        assert hand is misread.hand, (hand, misread)
        self._emit(
            CardAssigned(current.number, card, physical_id, hand, current.deal.next_recipient())
        )
        self._emit(
            CardCorrected(
                current.number, Irregularity.MISREAD_CARD, method, card, physical_id, hand, by
            )
        )

    def _set_aside(
        self,
        inspection: CardInspection,
        reason: str,
        findings: list[Irregularity],
        placed_as: Consequence = Consequence.RECORD,
    ) -> None:
        current = self._open_round()
        current.cards.append(inspection.card)
        self._open_shoe().dealt += 1
        if current.void_reason is None:
            current.void_reason = reason
        self._emit(
            CardSetAside(current.number, inspection.card, physical_id(inspection), str(reason))
        )
        self._record_findings(inspection, findings, placed_as)

    def _void_open_round(self, inspection: CardInspection) -> bool:
        """An intruder while a round is open (betting, its burn, dealing) voids that round.

        The round's bets are at stake from the moment it opens: a card that was
        never part of the pack, found then, means the pack the round is dealt
        from is not the one loaded (7 Up 5.1, Macau Art. 10). Earlier results
        stand; the card itself goes to no hand and is burned.
        """
        current = self.round
        if (
            not inspection.is_intruder
            or current is None
            or current.void_reason is not None
            or self.position not in ROUND_STATES
        ):
            return False
        current.void_reason = next(
            code for code in inspection.findings if code in INTRUDER_FINDINGS
        )
        return True

    def _burn(
        self,
        inspection: CardInspection,
        reason: BurnReason | None,
        findings: list[Irregularity],
        *,
        voids_round: bool = False,
    ) -> None:
        if reason is None:
            reason = BurnReason.IRREGULAR
            findings = [
                *findings,
                Irregularity.CARD_AFTER_ROUND
                if self._after_a_round()
                else Irregularity.CARD_OUTSIDE_ROUND,
            ]
        self._record_burn(inspection.card, physical_id(inspection), reason)
        placed_as = Consequence.VOID_ROUND if voids_round else Consequence.BURN
        self._record_findings(inspection, findings, placed_as)

    def _record_burn(self, card: Card | None, card_id: str | None, reason: BurnReason) -> None:
        """One card more burned for this reason: the shoe's count, the burn's, and its fact.
        A card a supervisor entered (device_cannot_replay) counts as a read one does."""
        shoe, remaining = self.shoe, None
        if shoe is not None:
            shoe.burned += 1
            remaining = self._count_burn(shoe, reason, card)
        self._emit(Burned(card, card_id, reason, remaining))

    def _after_a_round(self) -> bool:
        """A card that comes when its round is complete (or void) and no other is dealing."""
        position = self.position
        if position in (State.DEALING, State.RETURNING):
            return True
        return position in (State.READY, State.BETTING) and bool(
            self.shoe and self.shoe.rounds_finished
        )

    def _count_burn(self, shoe: ShoeState, reason: BurnReason, card: Card | None) -> int | None:
        if reason is BurnReason.IRREGULAR or reason is not shoe.burn_reason:
            return shoe.burn_remaining
        if shoe.burn_remaining is None:
            shoe.burn_remaining = self._start_burn_total(card)
        shoe.burn_remaining = max(0, shoe.burn_remaining - 1)
        return shoe.burn_remaining

    def _start_burn_total(self, first: Card | None) -> int:
        """Cards the start-of-shoe burn takes, the first card included.

        Only the first-card policy looks at the card, and under it an unreadable
        first card holds the table until it is known (_await_first_card): None
        comes here only for the other policies.
        """
        decks, rules = self.config.game.decks, self.config.shoe
        if first is not None:
            return rules.start_burn_count(decks, first)
        if rules.burn is BurnPolicy.FIXED and rules.burn_fixed is not None:
            return rules.burn_fixed
        return decks
