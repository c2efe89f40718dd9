"""The session's own journal records: their kinds, and what a restart reads back from them.

A session record is about the controller process and the people at the table (who
signed in, who was denied what, the device refused, a re-sync), not a procedure
input: replay passes over it (recovery.py). Their kinds live here, apart from the
session that writes them, because the service, the console and the significant-event
list read and compare the same kinds without needing a running session.
"""

from __future__ import annotations

from typing import Any

from cardshoe.controller.config import TableConfig
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.procedure.facts import Alarm
from cardshoe.controller.procedure.inputs import to_record
from cardshoe.controller.procedure.operator_commands import SignIn
from cardshoe.controller.service.recovery import SESSION_KIND_PREFIX, SOFTWARE_KIND_PREFIX
from cardshoe.drivers.api.device_link import DeviceLink

SESSION_STARTED = SESSION_KIND_PREFIX + "started"
"""A record about the controller process itself, which replay skips."""
DEVICE_REFUSED = SESSION_KIND_PREFIX + "device_refused"
"""Why the controller would not deal with the device; its payload is the alarm's."""
REPEATED = SESSION_KIND_PREFIX + "repeated"
"""How many records of a kind were only counted in the last interval (journal/repeats.py)."""
STORAGE_ALARM = SESSION_KIND_PREFIX + "storage_alarm"
"""A storage fault the table goes on through (a failing checkpoint); payload is the alarm's."""
COMMAND_PREFIX = "command."
"""The journal kinds of operator commands (inputs.HOST_INPUTS)."""
OPERATOR = SESSION_KIND_PREFIX + "operator"
"""Who gave the command journaled right after it in the same transaction: uid, user, role."""
COMMAND_DENIED = SESSION_KIND_PREFIX + "command_denied"
"""A command refused because of who gave it (their role), before it reached the procedure."""
SIGNED_IN = to_record(SignIn(None, None)).kind
"""The journal kind of a sign-in: the dealer who took the table and the one relieved."""
REREAD_BY = SESSION_KIND_PREFIX + "reread_by"
"""The dealer signed in when a misread card was re-read (the card.corrected before it)."""
DEVICE_RESYNC = SESSION_KIND_PREFIX + "device_resync"
"""An operator re-synchronised to the device's stream after a regression (a new epoch)."""
SOFTWARE_AUTHENTICATED = SOFTWARE_KIND_PREFIX + "authenticated"
"""A regulator's seed and the software's answer to it (software_identity.py), and who asked."""
SUPERVISOR_SIGNED_IN = SESSION_KIND_PREFIX + "supervisor_signed_in"
"""The supervisor who took the table and the one relieved: who witnesses each pack loaded."""
CONSOLE_PIN = SESSION_KIND_PREFIX + "console_pin"
"""A PIN given at the table's console: the name, what for, accepted, wrong or locked."""
CONSOLE_SIGNED_OUT = SESSION_KIND_PREFIX + "console_signed_out"
"""A person signed out of the table's console: by a key, or after console_idle_s idle."""


def last_dealer(journal: Journal) -> str | None:
    """The dealer the journal last recorded signing in, so a restart keeps who deals."""
    signed = None
    for record in journal.records(kinds=(SIGNED_IN,)):
        signed = record.payload.get("dealer")
    return signed


def last_supervisor(journal: Journal) -> str | None:
    """The supervisor the journal last recorded signing in, so a restart keeps the witness."""
    signed = None
    for record in journal.records(kinds=(SUPERVISOR_SIGNED_IN,)):
        signed = record.payload.get("supervisor")
    return signed


def journaled_stream_epoch(journal: Journal, device_serial: str) -> int | None:
    """The stream epoch the journal's seqs for this device count in; None if none is known.

    The latest of: a re-sync's new epoch, or the epoch a session started with.
    """
    epoch = None
    for record in journal.records(kinds=[SESSION_STARTED, DEVICE_RESYNC]):
        if record.device_serial != device_serial:
            continue
        if record.kind == DEVICE_RESYNC:
            epoch = record.payload.get("to_epoch")
        else:
            epoch = record.payload.get("device", {}).get("stream_epoch")
    return epoch


def record_device_refusal(
    journal: Journal,
    alarm: Alarm,
    *,
    device_serial: str | None,
    shoe_id: str | None = None,
    round_no: int | None = None,
) -> None:
    """Journal why a device was refused, as a session record that recovery passes over."""
    with journal.transaction() as transaction:
        transaction.append(
            DEVICE_REFUSED,
            alarm.payload(),
            shoe_id=shoe_id,
            round_no=round_no,
            device_serial=device_serial,
        )


def pack_custody(
    config: TableConfig,
    device: DeviceLink,
    people: tuple[str | None, str | None, str | None],
    software: dict[str, str],
) -> dict[str, Any]:
    """Who loaded the pack and who witnessed it, on which device under which software:
    the chain of custody a pack receipt (scoreboard/pack_receipt.py) prints.

    people: the dealer signed in, the supervisor signed in, and who opened the shoe."""
    loaded_by, witnessed_by, opened_by = people
    info = device.identity
    return {
        "loaded_by": loaded_by,
        "witnessed_by": witnessed_by,
        "opened_by": opened_by,
        "device": {
            "maker": config.device.maker,
            "model": info.model,
            "serial_number": info.serial_number,
            "firmware_version": info.firmware_version,
            "firmware_hash": info.firmware_hash.hex(),
        },
        "software": software,
    }
