"""`shoectl sim` and `python -m cardshoe.firmware_sim` as a technician runs them."""

from __future__ import annotations

import json
import sys

import serial
from support.shoectl import ShoectlRunner
from support.sim_support import StreamHost, running

from cardshoe.drivers.protocol.messages import GetInfo, Hello
from cardshoe.firmware_sim.faults import LINE_ONLY_KINDS, LINE_READER_KINDS, InjectionKind
from cardshoe.firmware_sim.profiles import get_profile

SHOECTL = [sys.executable, "-m", "cardshoe.controller.cli"]
MODULE = [sys.executable, "-m", "cardshoe.firmware_sim"]


def test_shoectl_sim_pty_prints_a_path_a_serial_tool_can_open() -> None:
    with running([*SHOECTL, "sim", "--pty", "--seed", "1"]) as (process, path):
        assert path.startswith("/dev/pts/")
        with serial.Serial(path, timeout=0.05, exclusive=True) as port:
            host = StreamHost(port.write, lambda: port.read(max(1, port.in_waiting)))
            host.send(GetInfo(1, 0))
            hello = host.wait_for(lambda m: isinstance(m, Hello) and m.request_id == 1)
        assert hello.serial_number == "SIM-CS1-0001"
    assert process.returncode == 0, "Ctrl-C is the normal way to stop it"


def test_shoectl_info_reports_the_simulated_identity(shoectl: ShoectlRunner) -> None:
    command = [*SHOECTL, "sim", "--profile", "cs-auto", "--serial", "SIM-CLI-7"]
    with running(command) as (_, path):
        result = shoectl("info", path, "--json")
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert record["serial_number"] == "SIM-CLI-7"
    assert record["firmware_version"] == "1.0.0"
    assert record["protocol_version"] == "1.3"
    assert record["firmware_hash"] == get_profile("cs-auto").firmware_hash.hex()


def test_python_m_firmware_sim_serves_tcp_and_describes_itself_in_json() -> None:
    with running([*MODULE, "--tcp", "0", "--profile", "cs-auto", "--json"]) as (_, line):
        record = json.loads(line)
        assert record["url"].startswith("socket://127.0.0.1:")
        assert (record["kind"], record["serial_number"]) == ("AUTO_DEALER", "SIM-CSAUTO-0001")
        with serial.serial_for_url(record["url"], timeout=0.05) as port:
            host = StreamHost(port.write, lambda: port.read(max(1, port.in_waiting)))
            host.send(GetInfo(1, 0))
            hello = host.wait_for(lambda m: isinstance(m, Hello) and m.request_id == 1)
        assert hello.firmware_hash.hex() == record["firmware_hash"]


def test_bad_settings_fail_with_one_line_and_exit_2(shoectl: ShoectlRunner) -> None:
    for args, message in [
        (["--inject", "smoke@round=1"], "unknown fault kind 'smoke'"),
        (["--profile", "cs-9"], "no simulator profile 'cs-9'"),
        (["--profile", "cs-auto", "--inject", "reversed-card@card=2"], "cannot happen"),
        (["--pty", "--tcp", "0"], "choose one of --pty and --tcp"),
    ]:
        result = shoectl("sim", *args)
        assert result.returncode == 2, (args, result.stderr)
        assert message in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


def test_the_help_names_every_fault_kind_each_protocol_takes(shoectl: ShoectlRunner) -> None:
    """A technician picks --inject kinds from --help: every kind the simulator has is there,
    under the protocol that can have it."""
    shown = shoectl("sim", "--help")
    assert shown.returncode == 0, shown.stderr
    text = "".join(shown.stdout.split())  # click wraps lines, even inside a kind's hyphens
    cardshoe = text.split("Faultkinds:", 1)[1].split("(docs/simulator.md)", 1)[0]
    line = text.split("Itsfaultkinds:", 1)[1].split(".", 1)[0]
    assert set(cardshoe.split(",")) == set(InjectionKind) - LINE_ONLY_KINDS
    assert set(line.split(",")) == LINE_READER_KINDS
