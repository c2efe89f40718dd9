"""`shoectl run` dealing through a simulated line reader on a pty, the profile of
docs/examples/line-shoe.toml, with a dealer and a supervisor who watch the service's status.

A reader has no gate and resends nothing. The service asks it for no card, so the dealer (a
thread here) draws the next card when the status shows one due and the journal holds every card
drawn so far. A line the service never journaled (read by a process killed before its commit,
or written while no service had the port open, which pyserial's open discards) is lost for
good: the next service, or the same one when the link comes back, holds the table
(device_cannot_replay), and the supervisor compares the layout with the status: the card the
reader let out that the table lacks is entered, and with nothing missing the hold is cleared.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cardshoe.controller.errors import UserError
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.procedure.holds import HoldReason
from cardshoe.controller.service.control_client import request
from cardshoe.drivers.api.events import CardId
from cardshoe.firmware_sim.attach_pty import serve_pty
from support.driver_testing import EXAMPLE_PROFILE, line_reader
from support.service_support import Table, write_table_files

POLL_S = 0.02


def example_profile_lines() -> str:
    """The example's [device.line] table as TOML lines, verbatim."""
    text = EXAMPLE_PROFILE.read_text()
    return text[text.index("\n[device.line]\n") + 1 :]


@contextlib.contextmanager
def simulated_reader_table(
    folder: Path,
    *,
    seed: int = 7,
    game: str = "punto-banco",
    decks: int = 8,
    cut_card_depth: int | None = 14,
    device_lines: str = "",
    service_lines: str = "",
    journal_dir: Path | None = None,
) -> Iterator[Table]:
    """simulated_table's manual shoe, its device a line reader (table.core) that draws a card
    only when told (ReaderDealer). cut_card_depth None: no cut card, the pit ends the shoe.
    device_lines: more [device] keys, as TOML lines."""
    reader = line_reader(seed=seed, decks=decks, cut_card_depth=cut_card_depth)
    with serve_pty(reader) as pty:
        table = Table(folder, reader, pty, journal_dir)
        device = f'protocol = "line"\n{device_lines}' + example_profile_lines()
        write_table_files(table, game, "shoe", decks, device, service_lines)
        Journal.init(table.journal_path, table_id="T1")
        yield table


class ReaderDealer:
    """The dealer and the supervisor at a reader's table, acting on one status at a time."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.entered: list[str] = []
        """The cards the supervisor entered, each one the reader let out and the journal lacked
        (counted as asked: a service killed mid-answer may have journaled the command or not)."""
        self.cleared = 0
        """device_cannot_replay holds cleared with nothing missing (counted as asked)."""
        self.drawn_unheard = 0
        """Cards drawn while no service was running (deal_on)."""
        self._waiting = False
        self._due_and_all_journaled = threading.Event()
        self._lock = threading.Lock()

    def act(self, status: dict[str, Any]) -> None:
        with self._lock:
            self._act(status)

    def wait_for_a_card_due(self, timeout: float) -> bool:
        """Draw no more, until a status shows a card due with every card drawn journaled: True
        then (the dealer keeps waiting, as the service is about to go), False after timeout."""
        with self._lock:
            self._waiting = True
            self._due_and_all_journaled.clear()
        return self._due_and_all_journaled.wait(timeout)

    def deal_on(self, draw_first: bool) -> None:
        """Deal on after wait_for_a_card_due; draw_first: the service is down, and the dealer
        first draws the card it last showed due, which no service hears."""
        with self._lock:
            self._waiting = False
            if draw_first:
                self.drawn_unheard += bool(self.table.core.pull_card())

    def _act(self, status: dict[str, Any]) -> None:
        if status["device"] is None or status["shoe_id"] is None:
            return
        reader = self.table.core
        journaled = status["dealt"] + status["burned"]
        if HoldReason.DEVICE_CANNOT_REPLAY in status["holds"]:
            if reader.counts.cards > journaled:
                lost = reader.shoe.dealt[-1]
                card = str(CardId(lost.rank, int(lost.suit)))
                self.entered.append(card)
                self._ask("enter-card", card=card, note="on the layout, not on the screen")
            else:
                self.cleared += 1
                self._ask("clear-hold", reason=HoldReason.DEVICE_CANNOT_REPLAY, note="all there")
        else:
            self._draw_if_due(status)

    def _draw_if_due(self, status: dict[str, Any]) -> None:
        """Draw when the table shows a card due and holds every card drawn so far."""
        journaled = status["dealt"] + status["burned"]
        due = status["card_due"] is not None
        if not due or status["holds"] or self.table.core.counts.cards != journaled:
            return
        if not self._waiting:
            self.table.core.pull_card()
        elif status["last_round"] is None:  # a lost card of the last round could end the shoe
            self._due_and_all_journaled.set()

    def _ask(self, command: str, **arguments: Any) -> None:
        request(self.table.socket_path, command, timeout=2.0, **arguments)


@contextlib.contextmanager
def dealing(dealer: ReaderDealer) -> Iterator[None]:
    """The dealer acts on the status of whichever service answers, until the block ends."""
    halt = threading.Event()
    failures: list[BaseException] = []

    def run() -> None:
        while not halt.wait(POLL_S):
            try:
                dealer.act(request(dealer.table.socket_path, "status", timeout=2.0))
            except UserError:
                continue  # no service answering, or one stopped mid-answer: ask the next
            except BaseException as failure:
                failures.append(failure)
                return

    thread = threading.Thread(target=run, name="reader-dealer")
    thread.start()
    try:
        yield
    finally:
        halt.set()
        thread.join()
    assert not failures, f"the reader's dealer failed: {failures[0]!r}"
