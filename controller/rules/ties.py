"""What happens to the Banker and Player bets after a tie (Macau Art. 11), as data.

Art. 11: after a tie a new round decides, and the earlier bets may be (1)
cancelled, (2) left standing, or (3) changed: reduced or not, or moved
between Player and Banker. Which one a table offers is a house option the
regulator approves (Art. 18). 7 Up (3.10.1: the Player and Banker wagers
"do not win or lose") and Punto Banco return them, the one choice they have.
In every option the tied round settles the bets at 0 per unit: they are not
won or lost. The option says where the stake goes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum


class TieOption(StrEnum):
    CANCEL = "cancel"
    STAND = "stand"
    CHANGE = "change"


@dataclass(frozen=True)
class TieRule:
    meaning: str
    source: str
    carried: bool
    """The bets stay on the layout into the next round."""


TIE_RULES: Mapping[TieOption, TieRule] = {
    TieOption.CANCEL: TieRule(
        "the Banker and Player bets are cancelled and returned to the players",
        "Macau Art. 11(1) 取消; 7 Up 3.10.1; Punto Banco custom",
        carried=False,
    ),
    TieOption.STAND: TieRule(
        "the Banker and Player bets stand, unchanged, for the next round",
        "Macau Art. 11(2) 维持不变",
        carried=True,
    ),
    TieOption.CHANGE: TieRule(
        "the Banker and Player bets stay for the next round, and each player may reduce one "
        "or move it between Banker and Player before no more bets",
        "Macau Art. 11(3) 更改投注",
        carried=True,
    ),
}
