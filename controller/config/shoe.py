"""The [shoe] section: a manual shoe's cut card and burns, an automatic machine's endings.

Separate because its keys depend on the device kind (MANUAL_SHOE_KEYS, MACHINE_KEYS) and
carry their own ranges from the Macau texts (Arts. 2.1, 3.1, 3.2).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import time
from enum import StrEnum
from typing import ClassVar

from cardshoe.controller.config.checks import ConfigError, check_range, show
from cardshoe.controller.rules.cards import Card


class BurnPolicy(StrEnum):
    """How many cards the start-of-shoe burn takes (Macau Art. 2.1, amended 2011)."""

    DECKS = "decks"
    FIRST_CARD = "first-card"
    FIXED = "fixed"


class CutCardPolicy(StrEnum):
    """What the cut card means when it comes out (Macau Art. 3.1)."""

    LAST_ROUND = "last-round"
    ONE_MORE_ROUND = "one-more-round"


CUT_CARD_DEEPEST = 26
"""The deepest cut card: Art. 2.1 puts it "above about the last 12 cards" (约十二张) and the
2011 amendment keeps that; neither text gives a tolerance, so the depth may be up to half a
deck, over twice the text's number, and no deeper (docs/configuration.md)."""
CUT_CARD_TOLERANCE_RANGE = (0, CUT_CARD_DEEPEST)
FIXED_BURN_RANGE = (1, 8)
MACHINE_ROUNDS_RANGE = (0, 10_000)
DEFAULT_MACHINE_ROUNDS = 80
"""An automatic machine's shoe never runs out (Art. 7.2): the house ends it after this many
rounds (Art. 3.2), as many as eight decks give from a manual shoe (shoectl demo's choice)."""
MACHINE_END_AT_PATTERN = re.compile(r"^([01][0-9]|2[0-3]):[0-5][0-9]$")
MANUAL_SHOE_KEYS = ("burn", "burn_fixed", "cut_card_depth", "cut_card", "cut_card_tolerance")
"""The [shoe] keys of a manual shoe's cut card and burn (Arts. 2.1, 3.1)."""
MACHINE_KEYS = ("machine_rounds", "machine_end_at", "machine_end_at_relief")
"""The [shoe] keys of the house's ending of an automatic machine's shoe (Art. 3.2)."""


@dataclass(frozen=True)
class ShoeProcedure:
    """The [shoe] section: cut card and burns of a manual shoe (Macau Arts. 2.1, 3.1), and
    when the house ends an automatic machine's shoe, which never runs out (Art. 3.2)."""

    SECTION: ClassVar[str] = "shoe"

    burn: BurnPolicy = BurnPolicy.DECKS
    burn_fixed: int | None = None
    """How many cards the house burns; set exactly when burn is "fixed"."""
    cut_card_depth: int = 12
    """Cards between the cut card and the end of the shoe (Macau: about the last 12)."""
    cut_card: CutCardPolicy = CutCardPolicy.LAST_ROUND
    cut_card_tolerance: int = 6
    """How far from cut_card_depth the cut card may come out before it is an alarm."""
    machine_rounds: int = DEFAULT_MACHINE_ROUNDS
    """The automatic machine's shoe ends after this many rounds; 0 turns it off."""
    machine_end_at: tuple[str, ...] = ()
    """Times of day ("HH:MM", the table PC's local time) at which the automatic machine's
    shoe ends after the round under way."""
    machine_end_at_relief: bool = False
    """A dealer relieving another ends the automatic machine's shoe after the round under way."""

    def __post_init__(self) -> None:
        check_range("shoe.cut_card_tolerance", self.cut_card_tolerance, *CUT_CARD_TOLERANCE_RANGE)
        check_range("shoe.machine_rounds", self.machine_rounds, *MACHINE_ROUNDS_RANGE, "0: off")
        for when in self.machine_end_at:
            if not MACHINE_END_AT_PATTERN.match(when):
                raise ConfigError(
                    f"shoe.machine_end_at has {show(when)}: write each time of day as "
                    'HH:MM on the 24-hour clock, such as "06:00" or "22:30"'
                )
        if self.burn == BurnPolicy.FIXED:
            if self.burn_fixed is None:
                raise ConfigError('shoe.burn = "fixed" needs shoe.burn_fixed, a count from 1 to 8')
            check_range("shoe.burn_fixed", self.burn_fixed, *FIXED_BURN_RANGE, "Macau 2011")
        elif self.burn_fixed is not None:
            raise ConfigError(
                f'shoe.burn_fixed is used only with shoe.burn = "fixed", not "{self.burn}": '
                "remove it or set burn to fixed"
            )

    def start_burn_count(self, decks: int, first_card: Card) -> int:
        """Cards burned when the shoe starts, the first card drawn included.

        Every policy burns the first card; with "first-card" its face value (A = 1,
        2-9 as printed, 10/J/Q/K = 10; Art. 2.1's 牌面点数, not Art. 5's points, see
        docs/procedure.md) is how many more cards follow it.
        """
        if self.burn == BurnPolicy.FIRST_CARD:
            return 1 + min(first_card.rank, 10)
        if self.burn == BurnPolicy.FIXED and self.burn_fixed is not None:
            return self.burn_fixed
        return decks

    @property
    def machine_end_times(self) -> tuple[time, ...]:
        """machine_end_at as times of day, earliest first."""
        return tuple(sorted({time.fromisoformat(when) for when in self.machine_end_at}))

    @property
    def rounds_after_cut_card(self) -> int:
        """Rounds that may still start, or be under way, once the cut card shows."""
        return 2 if self.cut_card == CutCardPolicy.ONE_MORE_ROUND else 1
