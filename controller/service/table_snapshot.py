"""What a display reads of a table: where the procedure stands and the round on the table.

A snapshot is a frozen copy taken under the session's lock, so a display thread, the
control socket's status and the console read one consistent moment and never the
live model. Apart from the session because its readers (table_service.py's JSON and
status line) need the type, not the session.
"""

from __future__ import annotations

from dataclasses import dataclass

from cardshoe.controller.procedure.machine import State
from cardshoe.controller.procedure.shoe import CardDue
from cardshoe.controller.procedure.table import TableModel
from cardshoe.controller.rules.cards import Card


@dataclass(frozen=True)
class TableSnapshot:
    """What a display shows: where the procedure stands and the round on the table."""

    state: State
    held_state: State | None
    holds: tuple[str, ...]
    shoe_id: str | None
    round_no: int | None
    demo: bool
    player: tuple[Card, ...]
    banker: tuple[Card, ...]
    card_due: CardDue | None
    """What the next card is for: a hand, a burn, or None when no card may leave."""
    dealt: int
    burned: int
    rounds_finished: int
    last_round: int | None
    relief_burn_due: bool
    """A dealer relieved another: game.relief_burn cards burn after the next no more bets."""
    possible: tuple[str, ...] = ()
    """The operator commands the table accepts now (refusals.possible_commands)."""
    clearable_holds: tuple[str, ...] = ()
    """The active holds a person clears (clear-hold): what a console offers to clear."""


def snapshot_of(model: TableModel) -> TableSnapshot:
    """The model as it stands; the caller holds the lock that keeps it still."""
    shoe, current = model.shoe, model.round
    return TableSnapshot(
        state=State(model.state),
        held_state=model.held_state,
        holds=tuple(model.holds),
        shoe_id=model.shoe_id,
        round_no=model.round_no,
        demo=current is not None and current.demo,
        player=() if current is None else current.deal.player,
        banker=() if current is None else current.deal.banker,
        card_due=model.card_due(),
        dealt=0 if shoe is None else shoe.dealt,
        burned=0 if shoe is None else shoe.burned,
        rounds_finished=0 if shoe is None else shoe.rounds_finished,
        last_round=None if shoe is None else shoe.last_round,
        relief_burn_due=shoe is not None and shoe.relief_burn_due,
        possible=tuple(model.possible_commands()),
        clearable_holds=tuple(model.clearable_holds()),
    )
