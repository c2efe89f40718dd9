"""The operator's commands, one row each: the one place a command is declared.

Each row says what the command is called as typed (and so in the procedure's
refusals), what it takes, the least role that may give it, its line in
`shoectl control --help`, and how it reaches the procedure: the input it
becomes, journaled under its record kind. Everything else is derived from
OPERATOR_COMMANDS: the service's routes and argument checks
(service/command_routes.py), the role check (service/roles.py), the refusal
words (refusals.COMMAND_WORDS), the journal kinds of the inputs
(inputs.HOST_INPUTS) and `shoectl control`'s options and help
(cli/control_cmd.py). A new command is its row (and input) here plus its
handling in the procedure (docs/architecture.md, "How to add an operator command").

It sits with the procedure, below the service and the command line, because
the procedure names its commands in a refusal and journals their inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from cardshoe.controller import record_kinds
from cardshoe.controller.procedure.facts import ShoeEnding
from cardshoe.controller.procedure.machine import Trigger


class Role(IntEnum):
    """Who may give a command (service/roles.py maps a person to one); higher includes lower."""

    WATCHER = 0
    DEALER = 1
    SUPERVISOR = 2
    TECHNICIAN = 3

    def __str__(self) -> str:
        return self.name.lower()


@dataclass(frozen=True)
class Parameter:
    """One argument of a command: its JSON key on the control socket (--shoe-id for shoe_id
    at `shoectl control`), its type there, and its words for `shoectl control --help`."""

    name: str
    kind: type | tuple[type, ...]
    help: str
    required: bool = False

    @property
    def kind_text(self) -> str:
        kinds = self.kind if isinstance(self.kind, tuple) else (self.kind,)
        return " or ".join(kind.__name__ for kind in kinds)


@dataclass(frozen=True)
class StartShoe:
    """The operator opens a shoe: loaded (manual) or to be shuffled (automatic)."""

    shoe_id: str
    deck_set: int | None = None
    """The loaded deck set's serial as printed on its box; None: take the first card's."""


@dataclass(frozen=True)
class SignIn:
    """A dealer takes the table (the sign-in command), relieving the one signed in before.

    An input, not only a note about who deals: under game.relief_burn a relief in
    the middle of a shoe makes the house burn before the next deal, so a restart's
    replay must see it.
    """

    dealer: str | None
    """The user giving the command; None when it came from no control-socket client."""
    relieves: str | None
    """The dealer signed in before; None for the first sign-in the journal holds."""


@dataclass(frozen=True)
class ShoeLoaded:
    """Manual shoe: the pack is shuffled and in the shoe, face down."""


@dataclass(frozen=True)
class CutDone:
    """Manual shoe: the pack is cut and the cut card placed (Macau Art. 2.1)."""


@dataclass(frozen=True)
class CloseBets:
    """No more bets, by command rather than the dealer button."""


@dataclass(frozen=True)
class ConfirmFaceUp:
    """The dealer turned the automatic machine's face-down card face up (Art. 7.2)."""


@dataclass(frozen=True)
class EndShoe:
    """The house ends the shoe after the round under way (Macau Art. 3.2)."""

    reason: ShoeEnding = ShoeEnding.COMMAND
    """A person's command, or which of the automatic machine's shoe policies."""


@dataclass(frozen=True)
class AbandonShoe:
    """The shoe is closed as it stands, unreconciled; the open round is void."""

    reason: str


@dataclass(frozen=True)
class ClearHold:
    """The operator resolved a hold that only a person can resolve (a sequence gap)."""

    reason: str
    accepted_seq: int | None = None
    """For a sequence gap or regression: the device seq from which events are taken again,
    less one. Journaled as the record's device_seq, so a restart does not see the gap again."""
    note: str | None = None
    """What the person found, in their own words."""


@dataclass(frozen=True)
class VoidRound:
    """A supervisor voids the round under way for an error only a person sees (Art. 10)."""

    reason: str
    """A VoidReason (procedure/corrections.py), each citing its rule."""
    note: str | None = None
    round_no: int | None = None
    """The round voided; None: the round being dealt, or with none, the round just dealt."""


@dataclass(frozen=True)
class EnterCard:
    """A supervisor enters the card the reader could not read; it goes to the hand due it."""

    card: str
    """As the rules engine prints it (7H); the session checks the notation before."""
    note: str | None = None
    operator: dict[str, Any] | None = None
    """Who entered it (uid, user, role), so the correction the procedure records names them."""


def _void_round(reason: str, note: str | None = None, round: int | None = None) -> VoidRound:
    """void-round's --round is the input's round_no."""
    return VoidRound(reason, note, round)


@dataclass(frozen=True)
class OperatorCommand:
    """One command of the control socket."""

    name: str
    """As the operator types it; the procedure's refusals name the command so."""
    role: Role
    """The least role that may give it."""
    help: str | None = None
    """Its line in `shoectl control --help`; None: not given with `shoectl control` (a
    command of its own, such as `shoectl status`, or a console's)."""
    parameters: tuple[Parameter, ...] = ()
    trigger: Trigger | None = None
    """The procedure trigger whose refusal names this command (refusals.COMMAND_WORDS)."""
    procedure_input: type | None = None
    """The procedure input it becomes, journaled as `kind` (inputs.HOST_INPUTS)."""
    kind: str | None = None
    """Its input's journal kind: a constant of record_kinds.py, or by default command.<name>,
    registered there with the input as its payload's form."""
    build: Callable[..., Any] | None = None
    """The checked arguments -> the input, when the input is not built from them by name;
    TableSession.operate applies it. A command the session handles itself has a method of
    its own there (service/command_routes.SESSION_SIDE)."""

    def __post_init__(self) -> None:
        if self.procedure_input is not None and self.kind is None:
            kind = record_kinds.command_kind(self.name, self.procedure_input)
            object.__setattr__(self, "kind", kind)

    def make(self, arguments: Mapping[str, Any]) -> object:
        """The procedure input for the command's checked arguments."""
        build = self.build or self.procedure_input
        if build is None:
            raise TypeError(f"{self.name} reaches no procedure input")
        return build(**arguments)


_NOTE = Parameter("note", str, "free text for the journal")

OPERATOR_COMMANDS: tuple[OperatorCommand, ...] = (
    OperatorCommand("status", Role.WATCHER),
    OperatorCommand("subscribe", Role.WATCHER),
    OperatorCommand(
        "sign-in",
        Role.DEALER,
        "The dealer giving it takes the table.",
        procedure_input=SignIn,
        kind=record_kinds.COMMAND_SIGN_IN,
    ),
    OperatorCommand(
        "supervisor-sign-in",
        Role.SUPERVISOR,
        "The supervisor giving it witnesses the packs loaded from now on.",
    ),
    OperatorCommand(
        "new-shoe",
        Role.DEALER,
        "Open a shoe.",
        (
            Parameter("shoe_id", str, "the new shoe's id, generated if not given"),
            Parameter(
                "deck_set",
                (int, str),
                "the loaded deck set's serial as printed on its box, 0x00BC614E or decimal, "
                "the first card's if not given",
            ),
        ),
        Trigger.START_SHOE,
        StartShoe,
        record_kinds.COMMAND_START_SHOE,
    ),
    OperatorCommand(
        "shoe-loaded",
        Role.DEALER,
        "Manual shoe: the shuffled pack is in the shoe.",
        trigger=Trigger.SHOE_LOADED,
        procedure_input=ShoeLoaded,
        kind=record_kinds.COMMAND_SHOE_LOADED,
    ),
    OperatorCommand(
        "cut-done",
        Role.DEALER,
        "Manual shoe: the pack is cut and the cut card placed.",
        trigger=Trigger.CUT_DONE,
        procedure_input=CutDone,
        kind=record_kinds.COMMAND_CUT_DONE,
    ),
    OperatorCommand(
        "no-more-bets",
        Role.DEALER,
        "No more bets, as the dealer button does.",
        trigger=Trigger.CLOSE_BETS,
        procedure_input=CloseBets,
        kind=record_kinds.COMMAND_CLOSE_BETS,
    ),
    OperatorCommand(
        "confirm-face-up",
        Role.DEALER,
        "The automatic machine's face-down card is turned face up.",
        trigger=Trigger.CONFIRM_FACE_UP,
        procedure_input=ConfirmFaceUp,
        kind=record_kinds.COMMAND_CONFIRM_FACE_UP,
    ),
    OperatorCommand(
        "end-shoe",
        Role.DEALER,
        "End the shoe now between rounds, or after the round under way.",
        trigger=Trigger.END_SHOE,
        procedure_input=EndShoe,
        kind=record_kinds.COMMAND_END_SHOE,
    ),
    OperatorCommand(
        "abandon-shoe",
        Role.SUPERVISOR,
        "Close the shoe as it stands, unreconciled, voiding the open round.",
        (Parameter("reason", str, "why", required=True),),
        Trigger.ABANDON_SHOE,
        AbandonShoe,
        record_kinds.COMMAND_ABANDON_SHOE,
    ),
    OperatorCommand(
        "void-round",
        Role.SUPERVISOR,
        "Void a round, for a reason of the table's game.",
        (
            Parameter("reason", str, "the game's void reason", required=True),
            _NOTE,
            Parameter(
                "round",
                int,
                "the round to void, by default the round being dealt or the one just settled",
            ),
        ),
        Trigger.VOID_CURRENT_ROUND,
        VoidRound,
        record_kinds.COMMAND_VOID_ROUND,
        _void_round,
    ),
    OperatorCommand(
        "enter-card",
        Role.SUPERVISOR,
        "Enter the card the reader could not read.",
        (
            Parameter(
                "card", str, "the card the reader could not read, as 7H or TD", required=True
            ),
            _NOTE,
        ),
        Trigger.ENTER_CARD,
        EnterCard,
        record_kinds.COMMAND_ENTER_CARD,
    ),
    OperatorCommand(
        "clear-hold",
        Role.SUPERVISOR,
        "Resolve a hold only a person can resolve.",
        (Parameter("reason", str, "the hold's name"), _NOTE),
        Trigger.CLEAR_HOLD,
        ClearHold,
        record_kinds.COMMAND_CLEAR_HOLD,
    ),
    OperatorCommand("console-sign-in", Role.WATCHER),
    OperatorCommand("console-sign-out", Role.WATCHER),
    OperatorCommand(
        "authenticate",
        Role.TECHNICIAN,
        parameters=(Parameter("seed", str, "the regulator's seed, in hex", required=True),),
    ),
    OperatorCommand(
        "firmware-update",
        Role.TECHNICIAN,
        "Install a signed firmware image on the device, while no shoe is open.",
        (Parameter("image", str, "the signed firmware file", required=True),),
    ),
)
"""Every control-socket command, in the order `shoectl control --help` lists them."""

COMMANDS: Mapping[str, OperatorCommand] = {command.name: command for command in OPERATOR_COMMANDS}
COMMAND_INPUTS: Mapping[str, type] = {
    command.kind: command.procedure_input
    for command in OPERATOR_COMMANDS
    if command.kind is not None and command.procedure_input is not None
}
"""The journal kind of each command's procedure input -> the input (inputs.HOST_INPUTS)."""


CONTROL_COMMANDS: tuple[OperatorCommand, ...] = tuple(
    command for command in OPERATOR_COMMANDS if command.help is not None
)
"""The commands given with `shoectl control NAME`."""


def option_name(parameter: str) -> str:
    """A command's argument as `shoectl control` spells it: shoe_id -> --shoe-id."""
    return "--" + parameter.replace("_", "-")


def least_role(name: str) -> Role:
    """The least role that may give the command; a name the table lacks is a technician's."""
    command = COMMANDS.get(name)
    return Role.TECHNICIAN if command is None else command.role
