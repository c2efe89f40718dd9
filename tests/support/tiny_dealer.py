"""Deal through the tiny protocol family (tiny_protocol.py), as a table would with a third
party's reader: the dealer is the other end of a pseudo-terminal, writing one card line
whenever the table wants a card, and the cut card line after CUT_AFTER cards.

Run as a script, in a subprocess whose PYTHONPATH holds the tiny distribution, so the
family is found only through its entry point; it prints the shoe's end as one JSON object:

    python tiny_dealer.py JOURNAL SEED ROUNDS
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
from cardshoe.drivers.api.device_link import DeviceLink
from cardshoe.drivers.api.protocols import open_device

CONFIG = TableConfig(table_id="T1", shoe=ShoeProcedure(burn=BurnPolicy.FIXED, burn_fixed=1))
CUT_AFTER = 30


class PtyDealer:
    """A shuffled shoe and the pseudo-terminal its reader writes on; deal() is a session's
    on_step: one card out whenever one is due and the last one has been taken."""

    def __init__(self, seed: int) -> None:
        self.cards = [str(card) for card in ShoeComposition(CONFIG.game.decks).cards()]
        random.Random(seed).shuffle(self.cards)
        self._dealer_end, self._reader_end = os.openpty()
        self.written = 0
        self.unrecorded = 0
        """Cards taken from the shoe while no reader listened (lost to the table)."""

    def open_reader(self) -> DeviceLink:
        return open_device(os.ttyname(self._reader_end), protocol="tiny")

    def taken_by(self, session: TableSession) -> int:
        shoe = session.model.shoe
        return 0 if shoe is None else shoe.dealt + shoe.burned

    def deal(self, session: TableSession) -> None:
        recorded = self.written - self.unrecorded
        if session.model.card_due() is None or recorded != self.taken_by(session):
            return
        line = self.cards[self.written] + ("\r\nCUT" if self.written == CUT_AFTER else "")
        os.write(self._dealer_end, f"{line}\r\n".encode())
        self.written += 1

    def deal_unseen(self) -> str:
        """A card leaves while the controller is down: the reader's line is lost."""
        card = self.cards[self.written]
        self.written += 1
        self.unrecorded += 1
        return card


def main(argv: list[str]) -> int:
    journal_path, seed, rounds = Path(argv[0]), int(argv[1]), int(argv[2])
    dealer = PtyDealer(seed)
    with (
        Journal.open(journal_path, table_id="T1", create=True) as journal,
        dealer.open_reader() as device,
    ):
        session = TableSession.open(CONFIG, journal, device)
        ended = session.run_shoe(
            rounds=rounds, betting_time_s=0, on_step=lambda: dealer.deal(session)
        )
    print(json.dumps(None if ended is None else asdict(ended)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
