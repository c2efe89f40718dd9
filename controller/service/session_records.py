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
from cardshoe.controller.record_kinds import (
    COMMAND_SIGN_IN,
    SESSION_DEVICE_REFUSED,
    SESSION_DEVICE_RESYNC,
    SESSION_STARTED,
    SESSION_SUPERVISOR_SIGNED_IN,
)
from cardshoe.drivers.api.device_link import DeviceLink


def last_dealer(journal: Journal) -> str | None:
    """The dealer the journal last recorded signing in, so a restart keeps who deals."""
    found = journal.latest([COMMAND_SIGN_IN])
    return found[0].payload.get("dealer") if found else None


def last_supervisor(journal: Journal) -> str | None:
    """The supervisor the journal last recorded signing in, so a restart keeps the witness."""
    found = journal.latest([SESSION_SUPERVISOR_SIGNED_IN])
    return found[0].payload.get("supervisor") if found else None


def journaled_stream_epoch(journal: Journal, device_serial: str) -> int | None:
    """The stream epoch the journal's seqs for this device count in; None if none is known.

    The latest of: a re-sync's new epoch, or the epoch a session started with. Only that
    record is read: every session's start (~1 KB each) read at each start-up held ~2 MB of
    the service's resident memory on a 500-shoe journal (bench/bench_service.py).
    """
    found = journal.latest([SESSION_STARTED, SESSION_DEVICE_RESYNC], device_serial=device_serial)
    if not found:
        return None
    (record,) = found
    if record.kind == SESSION_DEVICE_RESYNC:
        epoch: int | None = record.payload.get("to_epoch")
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
            SESSION_DEVICE_REFUSED,
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
