"""The records a testing lab or a regulator asks for first: the table's significant events.

Software and device identity, who signed in and who was refused, holds, voids, corrections
and alarms: the events a lab reads to see whether the table ran the approved software on
an approved device under the people it names (the significant-event logs of gaming
equipment standards). `shoectl journal export --significant` lists exactly these kinds,
each with the reason it is listed; docs/journal.md prints the same table.
"""

from __future__ import annotations

from collections.abc import Mapping

from cardshoe.controller import record_kinds

SIGNIFICANT_KINDS: Mapping[str, str] = {
    record_kinds.SESSION_STARTED: "service start: the software's manifest digest, the device's "
    "identity and firmware",
    record_kinds.SESSION_JOURNAL_REFUSED: "service start refused: the journal failed its check",
    record_kinds.SESSION_DEVICE_REFUSED: "device refused: unapproved firmware, failed "
    "authentication",
    record_kinds.LINK_LOST: "device disconnected",
    record_kinds.LINK_RESTORED: "device reconnected, with its identity and firmware",
    record_kinds.SESSION_DEVICE_RESYNC: "device stream re-synchronised by an operator",
    record_kinds.SOFTWARE_AUTHENTICATED: "software authentication: the seed and the digest given",
    record_kinds.SOFTWARE_FIRMWARE_UPDATE: "device firmware update, installed or refused: the "
    "image's hash and version, and who ran it",
    record_kinds.LINK_AUTH_FAILURE: "link authentication failure",
    record_kinds.SHOE_STARTED: "shoe start: the game options' fingerprint (a change shows here)",
    record_kinds.COMMAND_SIGN_IN: "dealer sign-in",
    record_kinds.SESSION_SUPERVISOR_SIGNED_IN: "supervisor sign-in",
    record_kinds.SESSION_COMMAND_DENIED: "command refused for the giver's role",
    record_kinds.SESSION_CONSOLE_PIN: "a PIN given at the table's console: accepted, wrong or "
    "locked, and what for",
    record_kinds.SESSION_CONSOLE_SIGNED_OUT: "sign-out at the table's console, by a key or after "
    "idle",
    record_kinds.HOLD_STARTED: "hold",
    record_kinds.HOLD_ENDED: "hold cleared",
    record_kinds.ROUND_VOID: "void",
    record_kinds.CARD_CORRECTED: "correction",
    record_kinds.ALARM: "alarm",
    record_kinds.SESSION_STORAGE_ALARM: "storage alarm",
}
"""Record kind -> why a lab reads it."""
