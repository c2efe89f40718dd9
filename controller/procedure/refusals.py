"""Refusing an operator's command in the operator's words.

A refused command names the command as typed (no-more-bets, not close_bets),
says where the table stands in words a dealer uses, and lists what is
possible now, taken from the transition table itself so it is never out of
step with the procedure. The refusal is a fact of its own (command.refused),
journaled and counted, not an alarm: a dealer pressing a command too early is
not a reason for the pit to look.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from cardshoe.controller.procedure.corrections import VoidReason, VoidRule
from cardshoe.controller.procedure.machine import TRANSITIONS, State, Trigger
from cardshoe.controller.procedure.operator_commands import OPERATOR_COMMANDS

COMMAND_WORDS: Mapping[Trigger, str] = {
    command.trigger: command.name for command in OPERATOR_COMMANDS if command.trigger is not None
}
"""Each operator command's trigger -> the command as the operator types it
(operator_commands.py)."""

STATE_WORDS: Mapping[State, str] = {
    State.IDLE: "no shoe is open",
    State.LOADING: "the shoe is being loaded",
    State.CUT: "the pack is being cut",
    State.SHUFFLING: "the machine is shuffling",
    State.BURNING: "the start-of-shoe burn is under way",
    State.READY: "the next round is about to open",
    State.BETTING: "bets are open",
    State.ROUND_BURN: "the round's burn is under way",
    State.DEALING: "the round is being dealt",
    State.RETURNING: "the machine is taking the round's cards back",
    State.SHOE_ENDED: "the shoe has ended and is being counted",
    State.HELD: "the table is on hold",
    State.FAULT: "the table stopped on a software fault",
}
"""Where the table stands, as a dealer would say it."""


def possible_commands(state: State, applies: Mapping[Trigger, bool]) -> list[str]:
    """The commands with a transition out of `state`, in the table's order, leaving out
    those `applies` says the table would refuse now (nothing to confirm, enter or void)."""
    possible: list[str] = []
    for transition in TRANSITIONS:
        sources = (
            (transition.source,) if isinstance(transition.source, State) else transition.source
        )
        word = COMMAND_WORDS.get(transition.trigger)
        wanted = applies.get(transition.trigger, True)
        if word is not None and wanted and state in sources and word not in possible:
            possible.append(word)
    return possible


def refusal_text(
    trigger: Trigger,
    state: State,
    position: State,
    holds: Sequence[str],
    applies: Mapping[Trigger, bool],
) -> str:
    """Why an operator command cannot be carried out now, and what can."""
    command = COMMAND_WORDS[trigger]
    situation = STATE_WORDS[state]
    if state is State.HELD:
        situation = f"the table is on hold ({', '.join(holds)}) in {STATE_WORDS[position]}"
    possible = possible_commands(state, applies)
    hint = f"possible now: {', '.join(possible)}" if possible else "no command is possible now"
    return f"{command} is not possible now: {situation} ({hint})"


def clear_hold_needs_text(clearable: Sequence[str]) -> str:
    """clear-hold given without a hold: name the active holds a person clears."""
    if not clearable:
        return "clear-hold needs a hold (--reason), and no hold a person clears is active"
    return f"clear-hold needs a hold: --reason {' or '.join(clearable)}"


def clear_hold_text(named: str, clearable: Sequence[str]) -> str:
    """clear-hold takes the name of an active hold that only a person clears."""
    if not clearable:
        return f"clear-hold {named!r} is not possible now: no hold a person clears is active"
    return (
        f"clear-hold {named!r} is not possible now: name one of the active holds a person "
        f"clears: {', '.join(clearable)} (free text goes in --note)"
    )


def void_reason_text(named: str, reasons: Mapping[VoidReason, VoidRule], game: str) -> str:
    """void-round takes a reason the table's game offers, each citing its rule."""
    offered = "; ".join(f"{reason} ({rule.rule})" for reason, rule in reasons.items())
    return f"void-round {named!r} is not a reason of {game}: use one of {offered}"


def void_round_text(
    named: int | None, open_round: int, open_is_void: bool, voidable: int | None
) -> str:
    """void-round names a round that has a card dealt, or was just settled (the window).

    named: the --round given, if any; open_round: the round open now, and whether
    it is void already; voidable: the round that may be voided now, if any.
    """
    command = "void-round" if named is None else f"void-round --round {named}"
    if voidable is not None:
        return (
            f"{command} is not possible now: round {named} is neither the round being dealt "
            f"nor the one just settled; the round that may be voided now is {voidable}"
        )
    state = "is void already" if open_is_void else "has no card dealt yet"
    return (
        f"{command} is not possible now: round {open_round} {state} and no settled round "
        "may still be corrected (a round may be voided from its first card until the next "
        "round's no more bets)"
    )


def enter_card_text(card: str, copies_out: int | None, decks: int) -> str:
    """enter-card needs a card awaiting entry (misread, or unheard under device_cannot_replay),
    and a card the decks still hold.

    copies_out None: no card awaits entry; else how many copies of the card are out.
    """
    if copies_out is None:
        return (
            f"enter-card {card} is not possible now: no misread card awaits correction (a card "
            "due to a hand that the reader could not read holds the table as misread_card), "
            "nor a card that left unheard (device_cannot_replay, with a card due)"
        )
    return (
        f"enter-card {card} is not possible now: {copies_out} copies of {card} are out of this "
        f"shoe and {decks} decks hold {decks}: look at the card again, or void-round"
    )
