"""What the running table tells about itself: `shoectl status`'s figures and systemd's STATUS=.

The table's snapshot as plain JSON for the control socket's clients, the one
line systemd shows, and the two things counted since the service started (the
last alarm, the commands refused). Separate from table_service.py, which runs
the table, because these only describe it: each is read, none decides anything.
"""

from __future__ import annotations

from typing import Any

from cardshoe.controller.procedure.facts import Alarm, RefusedCommand, TableEvent
from cardshoe.controller.service.table_snapshot import TableSnapshot
from cardshoe.controller.timestamps import utc_timestamp


class LastAlarm:
    """Remembers the latest alarm since the service started, for `shoectl status`."""

    def __init__(self) -> None:
        self.record: dict[str, str] | None = None

    def notify(self, event: TableEvent) -> None:
        if isinstance(event, Alarm):
            self.record = {
                "time": utc_timestamp(),
                "kind": event.kind.value,
                "detail": event.detail,
            }


class RefusalCount:
    """Counts the operator commands refused since the service started, for `shoectl status`:
    by the procedure (command.refused) or for the giver's role (session.command_denied), each
    journaled at most once per kind per interval and never as the table's last alarm."""

    def __init__(self) -> None:
        self.count = 0

    def notify(self, event: TableEvent) -> None:
        if isinstance(event, RefusedCommand):
            self.count += 1

    def denied(self) -> None:
        self.count += 1


def snapshot_to_json(snapshot: TableSnapshot) -> dict[str, Any]:
    """The table's state as plain JSON values, for the control socket and its clients."""
    return {
        "state": snapshot.state.value,
        "held_state": None if snapshot.held_state is None else snapshot.held_state.value,
        "holds": list(snapshot.holds),
        "shoe_id": snapshot.shoe_id,
        "round_no": snapshot.round_no,
        "demo": snapshot.demo,
        "player": [str(card) for card in snapshot.player],
        "banker": [str(card) for card in snapshot.banker],
        "card_due": None if snapshot.card_due is None else snapshot.card_due.value,
        "dealt": snapshot.dealt,
        "burned": snapshot.burned,
        "rounds_finished": snapshot.rounds_finished,
        "last_round": snapshot.last_round,
        "relief_burn_due": snapshot.relief_burn_due,
        "possible": list(snapshot.possible),
        "clearable_holds": list(snapshot.clearable_holds),
    }


def status_line(snapshot: TableSnapshot) -> str:
    """One line for `systemctl status`: where the procedure stands, the shoe and the round.

    It changes a few times a round, not with every card, so systemd is told little.
    """
    state = snapshot.state.value
    if snapshot.held_state is not None:
        state = f"held ({', '.join(snapshot.holds)}) in {snapshot.held_state.value}"
    if snapshot.shoe_id is None:
        return f"{state}: no shoe open"
    round_text = "no round yet" if snapshot.round_no is None else f"round {snapshot.round_no}"
    return f"{state}: shoe {snapshot.shoe_id}, {round_text}"
