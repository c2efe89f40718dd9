"""Software verification: a device whose firmware hash the table does not allow deals nothing.

The simulator's bad-firmware-hash fault alters its image from power-up, so
it reports a hash the table configuration does not list. The session
refuses it: a journal record, an alarm to the observers, and a typed
one-line error that `shoectl run` turns into exit 3.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support.session_support import journaled, session_on, table_config
from support.shoectl import ShoectlRunner

from cardshoe.controller.config import DeviceConfig, TableConfig
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.procedure.facts import Alarm, AlarmKind, TableEvent
from cardshoe.controller.service.session import TableSession
from cardshoe.controller.service.session_records import DEVICE_REFUSED
from cardshoe.controller.service.session_start import DeviceNotApproved
from cardshoe.drivers.protocol.messages import GateMode
from cardshoe.firmware_sim.attach_pty import serve_pty
from cardshoe.firmware_sim.core import FirmwareCore
from cardshoe.firmware_sim.devices import create_device
from cardshoe.firmware_sim.faults import parse_injection
from cardshoe.firmware_sim.profiles import get_profile

APPROVED = get_profile("cs-1").firmware_hash
OTHER = bytes(range(32))


def allowing(*hashes: bytes) -> TableConfig:
    base = table_config()
    device = DeviceConfig(allowed_firmware_hashes=tuple(digest.hex() for digest in hashes))
    return TableConfig(table_id=base.table_id, game=base.game, shoe=base.shoe, device=device)


def shoe(*, tampered: bool) -> FirmwareCore:
    injections = [parse_injection("bad-firmware-hash")] if tampered else []
    core = create_device("cs-1", seed=3, injections=injections)
    core.dealer.auto = True
    return core


class Heard:
    def __init__(self) -> None:
        self.events: list[TableEvent] = []

    def notify(self, event: TableEvent) -> None:
        self.events.append(event)


def test_an_empty_allow_list_approves_any_image_and_a_listed_one_only_itself() -> None:
    assert DeviceConfig().firmware_approved(OTHER)
    listed = DeviceConfig(allowed_firmware_hashes=(APPROVED.hex(),))
    assert listed.firmware_approved(APPROVED)
    assert not listed.firmware_approved(OTHER)


def test_an_allowed_image_deals_a_round(tmp_path: Path) -> None:
    core = shoe(tampered=False)
    journal_path = tmp_path / "journal.sqlite"
    with session_on(allowing(OTHER, APPROVED), core, journal_path) as (session, _dealer):
        session.run_shoe(rounds=1)
    assert journaled(journal_path, "round.result")
    assert journaled(journal_path, DEVICE_REFUSED) == []


def test_a_tampered_image_is_refused_journaled_and_alarmed_and_deals_nothing(
    tmp_path: Path,
) -> None:
    core = shoe(tampered=True)
    assert core.firmware_hash != APPROVED
    journal_path = tmp_path / "journal.sqlite"
    heard = Heard()
    with (
        session_on(table_config(), core, journal_path) as (probe, _dealer),
        pytest.raises(DeviceNotApproved) as refused,
    ):
        TableSession.open(allowing(APPROVED), probe.journal, probe.device, [heard])
    message = str(refused.value)
    assert refused.value.exit_code == 3 and "\n" not in message
    assert core.firmware_hash.hex() in message and "allowed_firmware_hashes" in message
    (record,) = journaled(journal_path, DEVICE_REFUSED)
    assert record.payload["kind"] == AlarmKind.FIRMWARE
    assert record.device_serial == core.serial_number
    assert [event for event in heard.events if isinstance(event, Alarm)] == [
        Alarm(AlarmKind.FIRMWARE, record.payload["detail"])
    ]
    assert core.shoe.dealt == [] and core.gate is GateMode.LOCKED


def test_building_a_session_journals_nothing_and_refuses_nothing_until_it_starts(
    tmp_path: Path,
) -> None:
    journal_path = tmp_path / "journal.sqlite"
    heard = Heard()
    with session_on(table_config(), shoe(tampered=True), journal_path) as (probe, _dealer):
        before = [record.id for record in probe.journal.records()]
        session = TableSession(allowing(APPROVED), probe.journal, probe.device, [heard])
        assert [record.id for record in probe.journal.records()] == before
        assert heard.events == []
        with pytest.raises(DeviceNotApproved):
            session.start()
    (record,) = journaled(journal_path, DEVICE_REFUSED)
    assert [event for event in heard.events if isinstance(event, Alarm)] == [
        Alarm(AlarmKind.FIRMWARE, record.payload["detail"])
    ]


def test_a_refusal_leaves_a_journal_the_next_session_recovers_cleanly(tmp_path: Path) -> None:
    journal_path = tmp_path / "journal.sqlite"
    with (
        session_on(table_config(), shoe(tampered=True), journal_path) as (probe, _dealer),
        pytest.raises(DeviceNotApproved),
    ):
        TableSession.open(allowing(APPROVED), probe.journal, probe.device)
    with session_on(allowing(APPROVED), shoe(tampered=False), journal_path) as (session, _):
        assert session.recovered.mismatches == ()
        session.run_shoe(rounds=1)
    with Journal.open_readonly(journal_path) as journal:
        assert journal.verify().ok


def write_table(folder: Path, url: str, allowed: bytes) -> Path:
    config = folder / "table.toml"
    config.write_text(
        'table_id = "T1"\n'
        "[device]\n"
        f'url = "{url}"\n'
        f'allowed_firmware_hashes = ["{allowed.hex()}"]\n'
        "[service]\n"
        'journal_path = "journal.sqlite"\n'
        'control_socket = "control.sock"\n'
        'key_dir = "keys"\n',
        encoding="utf-8",
    )
    return config


def test_shoectl_run_refuses_to_deal_with_one_line_and_exit_3(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    with serve_pty(shoe(tampered=True)) as pty:
        config = write_table(tmp_path, str(pty.link), APPROVED)
        assert shoectl("journal", "init", "--config", str(config)).returncode == 0
        result = shoectl("run", "--config", str(config), "--device-wait", "5")
    assert result.returncode == 3, result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith("shoectl: error: device ") and "allowed_firmware_hashes" in line
    assert [
        record.payload["kind"] for record in journaled(tmp_path / "journal.sqlite", DEVICE_REFUSED)
    ] == ["firmware"]


def test_shoectl_info_tells_whether_the_firmware_is_allowed(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    with serve_pty(shoe(tampered=True)) as pty:
        config = write_table(tmp_path, str(pty.link), APPROVED)
        refused = shoectl("info", str(pty.link), "--config", str(config), "--json")
        text = shoectl("info", str(pty.link), "--config", str(config))
        config = write_table(tmp_path, str(pty.link), pty.core.firmware_hash)
        allowed = shoectl("info", str(pty.link), "--config", str(config), "--json")
    assert refused.returncode == 0, refused.stderr
    assert json.loads(refused.stdout)["firmware_allowed"] is False
    rows = dict(re.split(r"\s{2,}", line, maxsplit=1) for line in text.stdout.splitlines())
    assert rows["firmware check"].startswith("NOT ALLOWED")
    assert json.loads(allowed.stdout)["firmware_allowed"] is True
