"""The records a testing lab or a regulator asks for first: the table's significant events.

Software and device identity, who signed in and who was refused, holds, voids, corrections
and alarms: the events a lab reads to see whether the table ran the approved software on
an approved device under the people it names (the significant-event logs of gaming
equipment standards). `shoectl journal export --significant` lists exactly these kinds,
each with the reason it is listed; docs/journal.md prints the same table.
"""

from __future__ import annotations

from collections.abc import Mapping

from cardshoe.controller.procedure.facts import (
    Alarm,
    CardCorrected,
    HoldEnded,
    HoldStarted,
    RoundVoided,
    ShoeStarted,
)
from cardshoe.controller.procedure.inputs import DRIVER_INPUTS
from cardshoe.controller.service.firmware_update import FIRMWARE_UPDATE
from cardshoe.controller.service.session_records import (
    COMMAND_DENIED,
    CONSOLE_PIN,
    CONSOLE_SIGNED_OUT,
    DEVICE_REFUSED,
    DEVICE_RESYNC,
    SESSION_STARTED,
    SIGNED_IN,
    SOFTWARE_AUTHENTICATED,
    STORAGE_ALARM,
    SUPERVISOR_SIGNED_IN,
)
from cardshoe.controller.service.table_service import JOURNAL_REFUSED
from cardshoe.drivers.api.events import AuthFailure, LinkLost, LinkRestored


def _driver_kind(event_type: type) -> str:
    return next(kind for kind, known in DRIVER_INPUTS.items() if known is event_type)


SIGNIFICANT_KINDS: Mapping[str, str] = {
    SESSION_STARTED: "service start: the software's manifest digest, the device's identity "
    "and firmware",
    JOURNAL_REFUSED: "service start refused: the journal failed its check",
    DEVICE_REFUSED: "device refused: unapproved firmware, failed authentication",
    _driver_kind(LinkLost): "device disconnected",
    _driver_kind(LinkRestored): "device reconnected, with its identity and firmware",
    DEVICE_RESYNC: "device stream re-synchronised by an operator",
    SOFTWARE_AUTHENTICATED: "software authentication: the seed and the digest given",
    FIRMWARE_UPDATE: "device firmware update, installed or refused: the image's hash and "
    "version, and who ran it",
    _driver_kind(AuthFailure): "link authentication failure",
    ShoeStarted.KIND: "shoe start: the game options' fingerprint (a change shows here)",
    SIGNED_IN: "dealer sign-in",
    SUPERVISOR_SIGNED_IN: "supervisor sign-in",
    COMMAND_DENIED: "command refused for the giver's role",
    CONSOLE_PIN: "a PIN given at the table's console: accepted, wrong or locked, and what for",
    CONSOLE_SIGNED_OUT: "sign-out at the table's console, by a key or after idle",
    HoldStarted.KIND: "hold",
    HoldEnded.KIND: "hold cleared",
    RoundVoided.KIND: "void",
    CardCorrected.KIND: "correction",
    Alarm.KIND: "alarm",
    STORAGE_ALARM: "storage alarm",
}
"""Record kind -> why a lab reads it."""
