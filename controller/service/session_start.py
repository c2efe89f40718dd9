"""What a table session does once, when it starts: the checks and records of a start-up.

TableSession's constructor only wires objects; TableSession.start() runs these: the
device's kind before anything is read, then, once recovery (recovery.py) has rebuilt
the model, the session.started record, the firmware allow-list, taking up the
device's event stream where the journal stands, and a hold when a device that cannot
resend went unheard (cannot_replay_finding, asked again whenever the link comes
back). They are apart from the session because each runs once per start and none is
on the path of a card; the session keeps only the order.
"""

from __future__ import annotations

from collections.abc import Callable

import structlog

from cardshoe.controller.config import DeviceMode, TableConfig
from cardshoe.controller.errors import UserError
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.procedure.facts import Alarm, AlarmKind, ObserverHub
from cardshoe.controller.procedure.holds import HoldReason
from cardshoe.controller.procedure.inputs import HostFinding, JournalBehindDevice
from cardshoe.controller.procedure.machine import SHOE_OPEN, State
from cardshoe.controller.procedure.table import TableModel
from cardshoe.controller.service.logging_setup import SESSION_LOGGER
from cardshoe.controller.service.recovery import Recovered
from cardshoe.controller.service.session_records import (
    SESSION_STARTED,
    journaled_stream_epoch,
    record_device_refusal,
)
from cardshoe.drivers.api.device_link import Capability, DeviceLink
from cardshoe.drivers.api.events import DeviceKind

log = structlog.get_logger(SESSION_LOGGER)

_DEVICE_KINDS = {
    DeviceMode.SHOE: DeviceKind.SHOE,
    DeviceMode.AUTO: DeviceKind.DEALER,
}
_KIND_WORDS = {DeviceKind.SHOE: "manual shoe", DeviceKind.DEALER: "auto dealer"}


class DeviceNotApproved(UserError):
    """The device may not deal at this table (software verification); already journaled."""

    exit_code = 3


def check_device_kind(config: TableConfig, device: DeviceLink) -> None:
    """UserError when the device is of another kind than config.device.kind."""
    expected_kind = _DEVICE_KINDS[config.device.kind]
    if device.identity.kind is not expected_kind:
        raise UserError(
            f"device.kind is {config.device.kind!s} but {device.url} is a "
            f"{_KIND_WORDS[device.identity.kind]}: correct device.kind or the device"
        )


def record_start(
    config: TableConfig,
    journal: Journal,
    device: DeviceLink,
    recovered: Recovered,
    software: dict[str, str],
    hub: ObserverHub,
) -> None:
    """Journal session.started: the device, the software and what recovery replayed.

    A replay that disagrees with the journal is alarmed to the observers."""
    model = recovered.model
    with journal.transaction() as transaction:
        transaction.append(
            SESSION_STARTED,
            {
                "device": device.describe(),
                "software": software,
                "inputs_replayed": recovered.inputs_replayed,
                "replay_mismatches": list(recovered.mismatches),
            },
            shoe_id=model.shoe_id,
            round_no=model.round_no,
            device_serial=device.identity.serial_number,
        )
    log.info(
        "session started",
        table_id=config.table_id,
        state=model.state,
        shoe_id=model.shoe_id,
        inputs_replayed=recovered.inputs_replayed,
    )
    if recovered.mismatches:
        detail = f"{len(recovered.mismatches)} replayed input(s) differ from the journal"
        log.error("journal replay mismatch", mismatches=list(recovered.mismatches))
        hub.publish([Alarm(AlarmKind.JOURNAL, detail)])


def refuse_unapproved_firmware(
    config: TableConfig, journal: Journal, device: DeviceLink, model: TableModel, hub: ObserverHub
) -> None:
    """Deal nothing with a firmware image the table's allow-list does not hold.

    The hash is the one the device reported at the handshake (authenticated
    when the link is). The refusal is journaled and alarmed before
    DeviceNotApproved is raised.
    """
    info = device.identity
    if config.device.firmware_approved(info.firmware_hash):
        return
    if info.firmware_hash:
        detail = (
            f"device {info.serial_number} runs firmware {info.firmware_version} "
            f"(sha256 {info.firmware_hash.hex()}), which device.allowed_firmware_hashes "
            "does not list"
        )
        fix = "install an approved image, or add its hash once it is approved"
    else:
        detail = (
            f"{info.protocol} device {info.serial_number} reports no firmware, so "
            "device.allowed_firmware_hashes cannot apply to it"
        )
        fix = (
            "remove allowed_firmware_hashes from [device] in the table's configuration "
            "(the allow-list checks only a device that reports its firmware)"
        )
    alarm = Alarm(AlarmKind.FIRMWARE, detail)
    record_device_refusal(
        journal,
        alarm,
        device_serial=info.serial_number,
        shoe_id=model.shoe_id,
        round_no=model.round_no,
    )
    log.error("device refused", reason=alarm.detail)
    hub.publish([alarm])
    raise DeviceNotApproved(f"{alarm.detail}: {fix}")


def take_up_device_stream(
    journal: Journal, device: DeviceLink, hold: Callable[[JournalBehindDevice], None]
) -> int:
    """Tell the driver the last event the journal holds for this device, and its epoch;
    returns the seq the session stands at.

    A device whose acknowledged events go further than that, in the same stream epoch
    (or one the journal never saw), has forgotten events the journal never kept (a lost
    or replaced journal): they are gone from both sides, so the table holds with an
    alarm (journal_behind_device, given to hold) instead of trusting the device's word.
    A device in another epoch than the journal's restarted its stream: the driver
    reports that as a regression, which an operator re-synchronises.
    """
    device_serial = device.identity.serial_number
    journaled = journal.last_device_seq(device_serial) or 0
    epoch = journaled_stream_epoch(journal, device_serial)
    device_acked = device.counters().get("last_acked_seq", 0)
    same_stream = epoch is None or device.identity.epoch in (None, epoch)
    if same_stream and device_acked > journaled:
        log.error(
            "the device acknowledged events the journal does not hold",
            journaled_seq=journaled,
            device_acked_seq=device_acked,
        )
        hold(JournalBehindDevice(journaled, device_acked))
        journaled = device_acked
    device.set_journaled_seq(journaled, epoch)
    return journaled


def cannot_replay_finding(
    device: DeviceLink, model: TableModel, meanwhile: str
) -> HostFinding | None:
    """Restarted, or the link back, in the middle of a shoe with a device that does not
    resend what it sent meanwhile (no acknowledged delivery): a card may have left while
    nothing recorded it, so the table holds until a supervisor confirms the layout
    (docs/drivers.md). meanwhile: when the device went unheard, for the journaled reason.
    None when no hold is due."""
    if Capability.ACKNOWLEDGED_DELIVERY in device.capabilities or model.shoe is None:
        return None
    if model.state not in (*SHOE_OPEN, State.HELD) or (
        HoldReason.DEVICE_CANNOT_REPLAY in model.holds
    ):
        return None
    identity = device.identity
    return HostFinding(
        HoldReason.DEVICE_CANNOT_REPLAY,
        f"{identity.protocol} device {identity.serial_number} does not resend what it "
        f"sent {meanwhile}, in the middle of shoe {model.shoe_id}",
    )
