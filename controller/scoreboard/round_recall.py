"""One round as a dispute needs it, rebuilt from the journal's records of that round.

Last-game recall: the round's cards in shoe order (to a hand, set aside or
burned), both hands, the result and every bet's settlement per unit, each
irregularity and correction, every operator command with who gave it, and
the ids of the records behind it all, so anyone can check the account
against the journal itself (shoectl journal show, verify). A pure projection
of records: it reads nothing else.

A tie's carried bets (Macau Art. 11(2), 11(3)) are journaled with the tied
round, so a round's recall reads its own records and, before them, the
round.bets_carried of the round before (recall_kinds_before): the bets that
stood on the layout when it was dealt.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cardshoe.controller import record_kinds
from cardshoe.controller.one_line import escape_line_breaks
from cardshoe.controller.scoreboard.demo_events import OUTCOME_FIELDS

CARD_KINDS = {
    record_kinds.CARD_ASSIGNED: None,
    record_kinds.CARD_SET_ASIDE: "set_aside",
    record_kinds.CARD_BURNED: "burn",
}
"""Card facts -> where the card went (None: the hand in its payload). A burned or set-aside
card also says why (the burn's reason: round_burn, dealer_relief...; the void's)."""
RECALL_KINDS_BEFORE = (record_kinds.ROUND_BETS_CARRIED,)
"""The kinds a recall reads of the round before its own: what a tie there carried into it."""


@dataclass(frozen=True)
class JournalEntry:
    """What recall needs of one journal record."""

    id: int
    time_utc: str
    kind: str
    payload: Mapping[str, Any]


@dataclass
class RoundRecall:
    shoe_id: str
    round_no: int
    demo: bool = False
    cards: list[dict[str, Any]] = field(default_factory=list)
    player: list[str] = field(default_factory=list)
    banker: list[str] = field(default_factory=list)
    result: dict[str, Any] | None = None
    void: str | None = None
    settlement: dict[str, str] | None = None
    irregularities: list[dict[str, Any]] = field(default_factory=list)
    corrections: list[dict[str, Any]] = field(default_factory=list)
    """Irregular cards put right at once (card.corrected): how, the card, its hand, who."""
    commands: list[dict[str, Any]] = field(default_factory=list)
    alarms: list[dict[str, Any]] = field(default_factory=list)
    carried_in: dict[str, Any] | None = None
    """The bets a tie carried into this round (record, from_round, option) and where they went
    (went: decided, returned or carried, went_record: the record that says so; None while
    the round is open)."""
    carried_out: dict[str, Any] | None = None
    """This round tied: its bets carried into the next round (record, into_round, option), or
    returned undecided (returned: the reason, no_round_follows)."""
    records: list[int] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def recall_round(
    shoe_id: str, round_no: int, entries: Iterable[JournalEntry]
) -> RoundRecall | None:
    """The round from its records (in journal order); None when the round never opened."""
    recall = RoundRecall(shoe_id, round_no)
    opened = False
    by: dict[str, Any] | None = None
    result_record: int | None = None
    for entry in entries:
        recall.records.append(entry.id)
        payload = entry.payload
        if entry.kind == record_kinds.ROUND_OPENED:
            opened, recall.demo = True, bool(payload["demo"])
        elif entry.kind in CARD_KINDS:
            recall.cards.append(_card(entry))
        elif entry.kind == record_kinds.ROUND_RESULT:
            result_record = entry.id
            recall.player, recall.banker = list(payload["player"]), list(payload["banker"])
            recall.settlement = payload["settlement"]
            recall.result = {
                name: payload[name]
                for name in ("winner", *OUTCOME_FIELDS, "tie_bets")
                if name in payload
            }
        elif entry.kind == record_kinds.ROUND_VOID:
            # Voided after its result (within the correction window), it settles nothing.
            recall.void, recall.settlement = payload["reason"], None
        elif entry.kind in (
            record_kinds.ROUND_BETS_CARRIED,
            record_kinds.ROUND_CARRIED_BETS_RETURNED,
        ):
            _take_carried(recall, entry, round_no)
        elif entry.kind == record_kinds.IRREGULARITY:
            recall.irregularities.append({"record": entry.id, **payload})
        elif entry.kind == record_kinds.CARD_CORRECTED:
            recall.corrections.append({"record": entry.id, **payload})
        elif entry.kind == record_kinds.SESSION_REREAD_BY and recall.corrections:
            recall.corrections[-1]["dealer"] = payload["dealer"]
        elif entry.kind == record_kinds.ALARM:
            recall.alarms.append({"record": entry.id, **payload})
        elif entry.kind == record_kinds.SESSION_OPERATOR:
            by = {name: payload[name] for name in ("user", "uid", "role")}
        elif entry.kind.startswith(record_kinds.COMMAND_PREFIX):
            recall.commands.append(
                {
                    "record": entry.id,
                    "time": entry.time_utc,
                    "kind": entry.kind,
                    "payload": dict(payload),
                    "by": by,
                }
            )
            by = None
    if not opened:
        return None
    _follow_carried_in(recall, result_record)
    if recall.result is None:
        recall.player = [c["card"] for c in recall.cards if c["to"] == "player"]
        recall.banker = [c["card"] for c in recall.cards if c["to"] == "banker"]
    return recall


def _card(entry: JournalEntry) -> dict[str, Any]:
    """A card fact as the recall lists it: the card, where it went and why."""
    payload = entry.payload
    went = CARD_KINDS[entry.kind] or payload["to"]
    return {
        "record": entry.id,
        "card": payload["card"],
        "physical_id": payload["physical_id"],
        "to": went,
        "reason": payload.get("reason"),
    }


def _take_carried(recall: RoundRecall, entry: JournalEntry, round_no: int) -> None:
    """A tie's carried bets: carried into this round, out of it, or returned by a void."""
    payload = entry.payload
    if entry.kind == record_kinds.ROUND_BETS_CARRIED and payload["into_round"] == round_no:
        recall.carried_in = {
            "record": entry.id,
            "from_round": payload["round_no"],
            "option": payload["option"],
            "went": None,
            "went_record": None,
        }
    elif entry.kind == record_kinds.ROUND_BETS_CARRIED:
        recall.carried_out = {
            "record": entry.id,
            "into_round": payload["into_round"],
            "option": payload["option"],
            "returned": None,
        }
    elif (
        entry.kind == record_kinds.ROUND_CARRIED_BETS_RETURNED
        and payload.get("voided_round") == round_no
    ):
        if recall.carried_in is not None:
            recall.carried_in |= {"went": "returned", "went_record": entry.id}
    elif entry.kind == record_kinds.ROUND_CARRIED_BETS_RETURNED:
        recall.carried_out = {
            "record": entry.id,
            "into_round": None,
            "option": None,
            "returned": payload["reason"],
        }


def _follow_carried_in(recall: RoundRecall, result_record: int | None) -> None:
    """Where the bets carried in went, unless a void returned them: this round's own tie
    carries them on (or returns them when no round follows); otherwise its result decided
    them."""
    carried = recall.carried_in
    if carried is None or carried["went"] is not None or recall.void is not None:
        return
    if recall.carried_out is not None:
        went = "returned" if recall.carried_out["returned"] else "carried"
        carried |= {"went": went, "went_record": recall.carried_out["record"]}
    elif result_record is not None:
        carried |= {"went": "decided", "went_record": result_record}


CARRIED_WENT = {
    "decided": "decided by this round's result",
    "returned": "returned to the players undecided",
    "carried": "carried on by this round's tie",
    None: "on the layout, the round not finished",
}
"""Where bets carried into a round went, in words."""


def _carried_lines(recall: RoundRecall) -> list[str]:
    """The bets a tie carried into and out of the round, one line each, records in brackets."""
    lines = []
    carried_in = recall.carried_in
    if carried_in is not None:
        went_record = carried_in["went_record"]
        lines.append(
            f"bets carried in [{carried_in['record']}] from round {carried_in['from_round']} "
            f"({carried_in['option']}): {CARRIED_WENT[carried_in['went']]}"
            + ("" if went_record is None else f" [{went_record}]")
        )
    carried_out = recall.carried_out
    if carried_out is not None and carried_out["returned"] is None:
        lines.append(
            f"bets carried out [{carried_out['record']}] into round "
            f"{carried_out['into_round']} ({carried_out['option']})"
        )
    elif carried_out is not None:
        lines.append(f"tie bets returned [{carried_out['record']}]: {carried_out['returned']}")
    return lines


def recall_text(recall: RoundRecall) -> str:
    """The recall for a person: one line per fact, records in brackets."""
    title = f"shoe {recall.shoe_id}, round {recall.round_no}" + (
        " (demonstration)" if recall.demo else ""
    )
    lines = [title, "cards in shoe order:"]
    for card in recall.cards:
        why = f" ({card['reason']})" if card["reason"] else ""
        lines.append(
            f"  [{card['record']}] {card['card'] or '??'} "
            f"({card['physical_id'] or 'unread'}) -> {card['to']}{why}"
        )
    lines.append(f"player: {' '.join(recall.player) or '-'}")
    lines.append(f"banker: {' '.join(recall.banker) or '-'}")
    if recall.void is not None:
        lines.append(f"void: {recall.void} (every stake returned; earlier results stand)")
    elif recall.result is not None:
        result = recall.result
        lines.append(
            f"result: {result['winner']}, player {result['player_total']} "
            f"banker {result['banker_total']}"
            + (f", tie bets {result['tie_bets']}" if result.get("tie_bets") else "")
        )
        if recall.settlement is not None:
            per_unit = ", ".join(f"{bet} {value}" for bet, value in recall.settlement.items())
            lines.append(f"settlement per unit: {per_unit}")
    lines.extend(_carried_lines(recall))
    for found in recall.irregularities:
        lines.append(
            f"irregularity [{found['record']}] {found['code']}: {found['consequence']} "
            f"({found['detail']})"
        )
    for fixed in recall.corrections:
        lines.append(f"correction [{fixed['record']}] {correction_text(fixed)}")
    for alarm in recall.alarms:
        lines.append(f"alarm [{alarm['record']}] {alarm['kind']}: {alarm['detail']}")
    for command in recall.commands:
        who = command["by"]
        giver = "-" if who is None else f"{who['user']} (uid {who['uid']}, {who['role']})"
        lines.append(
            f"command [{command['record']}] {command['time']} {command['kind']} by {giver}"
        )
    lines.append(f"records: {recall.records[0]}-{recall.records[-1]} ({len(recall.records)})")
    # An alarm's detail or a person's name came from outside: no control reaches the terminal.
    return "\n".join(escape_line_breaks(line) for line in lines)


def correction_text(payload: Mapping[str, Any]) -> str:
    """One card.corrected for a person: what was wrong, how it was put right, by whom."""
    who, dealer = payload.get("by"), payload.get("dealer")
    if who is not None:
        by = f"{who['user']} (uid {who['uid']}, {who['role']})"
    else:
        by = "the dealer at the reader" + (f" ({dealer})" if dealer else "")
    return (
        f"{payload['irregularity']} corrected ({payload['correction']}): {payload['card']} "
        f"to {payload['to']}, by {by}"
    )
