"""shoectl info, run as a technician would, against the simulator and missing devices."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator

import pytest
from support.shoectl import ShoectlRunner

from cardshoe.controller.errors import EXIT_DEVICE_UNAVAILABLE
from cardshoe.controller.service.device_access import device_user_error
from cardshoe.drivers.device import open_device
from cardshoe.drivers.errors import AccessDenied
from cardshoe.firmware_sim.attach_pty import PtyAttachment, serve_pty
from cardshoe.firmware_sim.devices import create_device

INFO_FIELDS = {
    "model",
    "kind",
    "serial_number",
    "firmware_version",
    "firmware_hash",
    "protocol_version",
    "capabilities",
    "counters",
}


@pytest.fixture
def shoe_on_pty() -> Iterator[PtyAttachment]:
    with serve_pty(create_device("cs-1", serial_number="PTY-SHOE")) as attachment:
        yield attachment


def test_info_json_over_a_real_pty(shoectl: ShoectlRunner, shoe_on_pty: PtyAttachment) -> None:
    result = shoectl("info", str(shoe_on_pty.link), "--json")
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert set(record) >= INFO_FIELDS
    assert (record["model"], record["kind"], record["serial_number"]) == (
        "CS-1",
        "MANUAL_SHOE",
        "PTY-SHOE",
    )
    assert record["firmware_hash"] == shoe_on_pty.core.firmware_hash.hex()
    assert record["protocol_version"] == "1.3"
    assert "GATE" in record["capabilities"]
    assert record["counters"]["frames_ok"] >= 2
    assert record["status"]["gate"] == "LOCKED"


def test_info_text_for_a_simulated_dealer(shoectl: ShoectlRunner) -> None:
    result = shoectl("info", "sim://cs-auto?serial=SIM-DEALER-9")
    assert result.returncode == 0, result.stderr
    rows = dict(re.split(r"\s{2,}", line, maxsplit=1) for line in result.stdout.splitlines())
    assert rows["kind"] == "AUTO_DEALER"
    assert rows["serial number"] == "SIM-DEALER-9"
    assert rows["cards remaining"] == "416"


def test_an_absent_device_is_one_line_and_exit_3(shoectl: ShoectlRunner) -> None:
    result = shoectl("info", "/dev/cardshoe/shoe-NOT-HERE")
    assert result.returncode == 3
    assert result.stderr.count("\n") == 1
    assert "no device at /dev/cardshoe/shoe-NOT-HERE" in result.stderr


def test_a_busy_port_names_the_holder(shoectl: ShoectlRunner, shoe_on_pty: PtyAttachment) -> None:
    with open_device(str(shoe_on_pty.link), timeout=2.0):
        result = shoectl("info", str(shoe_on_pty.link))
    assert result.returncode == 3
    assert f"(pid {os.getpid()})" in result.stderr
    assert result.stderr.count("\n") == 1


def test_a_bad_url_is_bad_input(shoectl: ShoectlRunner) -> None:
    result = shoectl("info", "usb://not-an-id")
    assert result.returncode == 2
    assert "usb://VID:PID" in result.stderr


def test_a_device_that_does_not_answer_is_exit_3(shoectl: ShoectlRunner) -> None:
    result = shoectl("info", "loop://", "--timeout", "0.5")
    assert result.returncode == 3
    assert "did not answer" in result.stderr


def test_access_denied_is_a_device_problem_with_the_group_hint() -> None:
    error = device_user_error(AccessDenied("/dev/cardshoe/shoe-X"))
    assert error.exit_code == EXIT_DEVICE_UNAVAILABLE
    assert "group 'cardshoe'" in str(error)
