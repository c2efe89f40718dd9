"""The [game] section: what is dealt and how it is paid, the options a regulator approves.

Separate from the other sections because it is the part of the configuration that speaks to the
rules engine (rules/games.py); every one of its keys is in the fingerprint.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from cardshoe.controller.config.checks import ConfigError, check_option, check_range, one_of, show
from cardshoe.controller.rules.errors import RulesError
from cardshoe.controller.rules.games import (
    GAME_NAMES,
    Game,
    check_decks,
    commission_names,
    get_game,
    paytable_named,
    paytable_names,
    tie_options,
)
from cardshoe.controller.rules.settlement import Rounding
from cardshoe.controller.rules.ties import TieOption

ROUND_BURN_RANGE = (0, 8)
RELIEF_BURN_RANGE = (0, 8)
DEMO_ROUNDS_RANGE = (0, 3)


@dataclass(frozen=True)
class GameConfig:
    """The [game] section: what is dealt and how it is paid."""

    SECTION: ClassVar[str] = "game"

    name: str = "punto-banco"
    """A game of the rules engine: punto-banco, seven-up, macau-1, macau-2."""
    decks: int = 8
    commission: str | None = None
    """A commission option of the game in the rules engine; None means its default."""
    paytable: str | None = None
    """The name of the game's paytable in the rules engine; None means its default."""
    demo_rounds: int = 0
    """Demonstration rounds dealt, never settled, when a shoe starts (Macau Art. 2.2)."""
    round_burn: int = 0
    """Cards burned at the start of every round; 0 turns it off (Macau Art. 8)."""
    relief_burn: int = 0
    """Cards burned before the next deal when a dealer relieves another in a shoe (a house
    policy: docs/procedure.md, "Relief burn"); 0 turns it off."""
    tie_bets: str | None = None
    """What happens to the Banker and Player bets after a tie (Macau Art. 11, rules/ties.py):
    cancel, stand or change, as the game allows; None means its default."""
    commission_rounding: str = str(Rounding.FLOOR)
    """How a win's winnings are rounded to the minor unit: floor (the house keeps the
    fraction) or half-up. The texts do not say, so it is an approved option (Art. 18)."""

    def __post_init__(self) -> None:
        if self.name not in GAME_NAMES:
            raise ConfigError(
                f"game.name = {show(self.name)} is not a game: use {one_of(GAME_NAMES)}"
            )
        try:
            check_decks(self.name, self.decks, "game.decks")
        except RulesError as exc:
            raise ConfigError(str(exc)) from None
        check_range("game.demo_rounds", self.demo_rounds, *DEMO_ROUNDS_RANGE, "Macau Art. 2.2")
        check_range("game.round_burn", self.round_burn, *ROUND_BURN_RANGE)
        check_range("game.relief_burn", self.relief_burn, *RELIEF_BURN_RANGE)
        check_option("game.commission", self.commission, commission_names(self.name), self.name)
        check_option("game.paytable", self.paytable, self._paytable_names, self.name)
        check_option("game.tie_bets", self.tie_bets, tie_options(self.name), self.name)
        check_option(
            "game.commission_rounding",
            self.commission_rounding,
            tuple(str(rounding) for rounding in Rounding),
            self.name,
        )

    @property
    def _paytable_names(self) -> tuple[str, ...]:
        """The paytables the rules engine publishes for this game."""
        return paytable_names(self.name)

    @property
    def effective_commission(self) -> str:
        return self.commission or commission_names(self.name)[0]

    @property
    def effective_tie_bets(self) -> TieOption:
        return TieOption(self.tie_bets or tie_options(self.name)[0])

    @property
    def effective_paytable(self) -> str:
        return self.paytable or self._paytable_names[0]

    def build_game(self) -> Game:
        """The rules engine's game with this table's commission option and paytable."""
        return get_game(
            self.name,
            commission=self.effective_commission,
            paytable=paytable_named(self.name, self.effective_paytable),
            rounding=Rounding(self.commission_rounding),
        )
