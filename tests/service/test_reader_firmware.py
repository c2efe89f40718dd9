"""A line reader reports no firmware: `shoectl status` says so instead of an empty hash, and a
table whose configuration lists approved firmware hashes refuses it with one line saying why
the allow-list cannot apply and how to correct the configuration (the real service and CLI)."""

from __future__ import annotations

import re
from pathlib import Path

from support.reader_service import simulated_reader_table
from support.service_support import running_service
from support.session_support import journaled
from support.shoectl import ShoectlRunner


def test_status_says_a_reader_reports_no_firmware(tmp_path: Path, shoectl: ShoectlRunner) -> None:
    with simulated_reader_table(tmp_path) as table, running_service(table) as service:
        service.wait_for_notification("READY=1")
        shown = shoectl("status", "--config", str(table.config_path))
        assert service.stop() == 0, service.log_tail()
    assert shown.returncode == 0, shown.stderr
    assert re.search(r"^firmware +none: this device reports no firmware$", shown.stdout, re.M)
    assert "sha256" not in shown.stdout


def test_an_allow_list_is_refused_for_a_reader_that_reports_no_firmware(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    allow_list = f'allowed_firmware_hashes = ["{"ab" * 32}"]\n'
    with simulated_reader_table(tmp_path, device_lines=allow_list) as table:
        refused = shoectl("run", "--config", str(table.config_path))
    assert refused.returncode == 3, refused.stderr
    (line,) = refused.stderr.splitlines()
    assert line == (
        f"shoectl: error: line device {table.pty.link} reports no firmware, so "
        "device.allowed_firmware_hashes cannot apply to it: remove allowed_firmware_hashes "
        "from [device] in the table's configuration (the allow-list checks only a device "
        "that reports its firmware)"
    )
    (record,) = journaled(table.journal_path, "session.device_refused")
    assert record.payload["kind"] == "firmware" and "sha256" not in record.payload["detail"]
