"""One timestamped line per event, as candump prints frames: what the monitors show.

Device events take their journal form (inputs.to_record), so a line on the
screen reads like the record the service would write, with the card decoded
beside its raw code. Table events arrive from the service already in their
journal form. Both become {"time", "kind", "payload"} for --json, and one
"TIME  KIND  key=value ..." line for a person.
"""

from __future__ import annotations

import json
from typing import Any

from cardshoe.controller.one_line import escape_line_breaks
from cardshoe.controller.procedure.inputs import to_record
from cardshoe.controller.record_kinds import RECORD_VERSION_KEY
from cardshoe.controller.timestamps import utc_timestamp
from cardshoe.drivers.api.events import CardSeen, Event

KIND_WIDTH = 22


def device_event_record(event: Event) -> dict[str, Any]:
    """A device or driver event as {"time", "kind", "payload"}; a card also as its text."""
    record = to_record(event)
    payload = {key: value for key, value in record.payload.items() if key != RECORD_VERSION_KEY}
    if isinstance(event, CardSeen):
        payload = {"seq": payload.pop("seq"), "card": card_text(event), **payload}
    return {"time": utc_timestamp(), "kind": record.kind, "payload": payload}


def card_text(event: CardSeen) -> str:
    """The card as the shoe read it (AS#00BC614E/3), or why it cannot be named."""
    if event.card is not None:
        return str(event.card)
    return "misread" if event.misread else "unreadable"


def event_line(record: dict[str, Any]) -> str:
    fields = " ".join(f"{name}={_value(value)}" for name, value in record["payload"].items())
    return f"{record['time']}  {record['kind']:<{KIND_WIDTH}}  {fields}".rstrip()


def _value(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(_value(item) for item in value) or "-"
    if isinstance(value, dict):
        return json.dumps(value, separators=(",", ":"))
    text = str(value)
    return json.dumps(text) if not text or " " in text else escape_line_breaks(text)
