"""The simulated firmware's answers to the host: each command's result, HELLO and STATUS.

DeviceLink hands every command it admits to execute() and asks hello() for
each HELLO; they read the device's state and start its operations, and hold
no state of their own. They are apart from core.py because answering the
host is a job of its own: FirmwareCore is the device's state and the path a
card takes out of it; the models (ManualShoe, ShufflerDealer) answer their
own commands in _model_command.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from cardshoe.drivers.protocol.error_codes import ErrorCode
from cardshoe.drivers.protocol.link_constants import FIRMWARE_UPDATE_FROM_1_3, PROTOCOL_MINOR
from cardshoe.drivers.protocol.messages import (
    Answer,
    Capability,
    Command,
    DealNext,
    FaultKind,
    FirmwareBegin,
    FirmwareChunk,
    FirmwareCommit,
    GetStatus,
    Hello,
    Reply,
    Reset,
    ReturnCards,
    SelfTest,
    SetGate,
    Shuffle,
    Status,
    StatusFlag,
)
from cardshoe.firmware_sim.fault_effects import duration_of
from cardshoe.firmware_sim.faults import Injection

if TYPE_CHECKING:
    from cardshoe.firmware_sim.core import FirmwareCore

log = logging.getLogger(__name__)

REQUIRED_CAPABILITY: dict[type[Command], Capability] = {
    SetGate: Capability.GATE,
    DealNext: Capability.DEAL_NEXT,
    Shuffle: Capability.SHUFFLE,
    ReturnCards: Capability.RETURN,
}


def execute(core: FirmwareCore, command: Command) -> Answer:
    """The device's answer to one command from the host: STATUS, or a REPLY with its result."""
    if isinstance(command, GetStatus):
        return status(core, command.request_id)
    result = _command_result(core, command)
    log.debug("simulator %s: %s -> %s", core.serial_number, command, result.name)
    return Reply(command.request_id, result)


def _command_result(core: FirmwareCore, command: Command) -> ErrorCode:
    required = REQUIRED_CAPABILITY.get(type(command))
    if required is not None and not core.profile.has(required):
        return ErrorCode.UNSUPPORTED
    if isinstance(command, Reset):
        core._schedule(0.0, core._start_firmware)
        return ErrorCode.OK
    if isinstance(command, SelfTest):
        if core._operation is not None:
            return ErrorCode.BUSY
        core._start_self_test()
        return ErrorCode.OK
    if isinstance(command, FirmwareBegin | FirmwareChunk | FirmwareCommit):
        return _firmware_command(core, command)
    return core._model_command(command)


def _firmware_command(
    core: FirmwareCore, command: FirmwareBegin | FirmwareChunk | FirmwareCommit
) -> ErrorCode:
    """Protocol 1.3's transfer into the inactive slot, and the switch to it."""
    if core.link.host_minor < FIRMWARE_UPDATE_FROM_1_3:
        return ErrorCode.UNKNOWN_MESSAGE
    if core._operation is not None:
        return ErrorCode.BUSY
    house_key = core.link.house_public_key
    if isinstance(command, FirmwareBegin):
        return core.firmware.begin(command, house_key)
    if isinstance(command, FirmwareChunk):
        result = core.firmware.write(command)
        transfer = core.firmware.transfer
        half_way = transfer is not None and 2 * len(transfer.received) >= transfer.begin.size
        if result is ErrorCode.OK and half_way and core._power_cut is not None:
            _cut_power(core, core._power_cut)
        return result
    result = core.firmware.commit(house_key)
    if result is ErrorCode.OK:
        core.firmware_image = core.firmware.active.image
        log.info(
            "simulator %s: switched to firmware version %d",
            core.serial_number,
            core.firmware.active.version,
        )
        core._schedule(0.0, core._start_firmware)
    return result


def _cut_power(core: FirmwareCore, injection: Injection) -> None:
    """The injected power cut: off now, mid-transfer, and back after the duration."""
    log.info("simulator %s: injected fault %s", core.serial_number, injection)
    core._power_cut = None
    core.unplug()
    core._schedule(duration_of(injection), core.replug)


def hello(core: FirmwareCore, request_id: int) -> Hello:
    """Who the device is and where its event stream stands, as HELLO announces it."""
    return Hello(
        request_id=request_id,
        protocol_minor=PROTOCOL_MINOR,
        device_kind=core.profile.kind,
        capabilities=core.profile.capabilities
        | (Capability.AUTH_REQUIRED if core.link.pairing_key is not None else Capability(0))
        | (
            Capability.FIRMWARE_UPDATE
            if core.link.host_minor >= FIRMWARE_UPDATE_FROM_1_3
            else Capability(0)
        ),
        last_acked_seq=core.link.last_acked_seq,
        next_seq=core.link.next_seq,
        firmware_hash=core.firmware_hash,
        model=core.profile.model,
        serial_number=core.profile.serial_number,
        firmware_version=core.firmware.active.label,
        epoch=core.link.announced_epoch(),
    )


def status(core: FirmwareCore, request_id: int) -> Status:
    """What GET_STATUS answers now."""
    conditions = {
        StatusFlag.DOOR_OPEN: core.door_open,
        StatusFlag.CARD_AT_EXIT: bool(core.shoe.remaining)
        and FaultKind.JAM not in core.active_faults,
        StatusFlag.SHOE_LOADED: bool(core.shoe.remaining),
        StatusFlag.BUSY: core._operation is not None,
        StatusFlag.SELF_TEST_PASSED: bool(core.self_test_passed),
        StatusFlag.CUT_CARD_SEEN: core.shoe.cut_card_seen,
    }
    flags = StatusFlag(0)
    for flag, holds in conditions.items():
        if holds:
            flags |= flag
    return Status(
        request_id=request_id,
        flags=flags,
        gate=core.gate,
        cards_dealt=min(len(core.shoe.dealt), 0xFFFF),
        cards_remaining=core._cards_remaining(),
        active_faults=tuple(core.active_faults)[:16],
    )
