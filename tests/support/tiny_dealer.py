"""Deal one shoe through the tiny protocol family, as a table would with a third party's
reader: run as a subprocess whose PYTHONPATH holds the tiny distribution
(tiny_protocol.py), so the family is found only through its entry point.

    python tiny_dealer.py JOURNAL SEED ROUNDS

The dealer is this script: a pseudo-terminal's other end, writing one card line
whenever the table wants a card, and the cut card line after CUT_AFTER cards. It prints
the shoe's end as one JSON object.
"""

from __future__ import annotations

import json
import os
import random
import sys
from dataclasses import asdict
from pathlib import Path

from cardshoe.controller.config import BurnPolicy, ShoeProcedure, TableConfig
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.rules.cards import ShoeComposition
from cardshoe.controller.service.session import TableSession
from cardshoe.drivers.api.protocols import open_device

CONFIG = TableConfig(table_id="T1", shoe=ShoeProcedure(burn=BurnPolicy.FIXED, burn_fixed=1))
CUT_AFTER = 30


def main(argv: list[str]) -> int:
    journal_path, seed, rounds = Path(argv[0]), int(argv[1]), int(argv[2])
    cards = [str(card) for card in ShoeComposition(CONFIG.game.decks).cards()]
    random.Random(seed).shuffle(cards)
    dealer_end, reader_end = os.openpty()
    written = 0
    with (
        Journal.open(journal_path, table_id="T1", create=True) as journal,
        open_device(os.ttyname(reader_end), protocol="tiny") as device,
    ):
        session = TableSession(CONFIG, journal, device)

        def deal() -> None:
            nonlocal written
            shoe = session.model.shoe
            taken = 0 if shoe is None else shoe.dealt + shoe.burned
            if session.model.card_due() is None or written != taken:
                return
            line = cards[written] + ("\r\nCUT" if written == CUT_AFTER else "")
            os.write(dealer_end, f"{line}\r\n".encode())
            written += 1

        ended = session.run_shoe(rounds=rounds, betting_time_s=0, on_step=deal)
    print(json.dumps(None if ended is None else asdict(ended)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
