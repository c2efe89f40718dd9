"""Issue 11 case 15: the crashes and wrong messages a technician hit, through the real CLI.

Each test runs `shoectl` as a subprocess (or the real service process) against
real parts: a pty, the simulator, a Unix socket, files on disk.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from support.other_users import shoectl_unprivileged, unprivileged_uid
from support.service_support import running_service, simulated_table, wait_until
from support.shoectl import ShoectlRunner, one_error_line

from cardshoe.controller.service.control_client import request
from cardshoe.firmware_sim.attach_pty import serve_pty
from cardshoe.firmware_sim.devices import create_device

HOLDER = (
    "import serial, sys, time\n"
    "port = serial.Serial(sys.argv[1], exclusive=True)\n"
    "print('holding', flush=True)\n"
    "time.sleep(30)\n"
)


def test_case_15_control_subscribe_points_to_monitor_instead_of_crashing(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    with simulated_table(tmp_path) as table, running_service(table) as service:
        service.wait_for_notification("READY=1")
        done = shoectl("control", "subscribe", "--socket", str(table.socket_path))
        assert service.stop() == 0
    assert done.returncode == 2, done.stderr
    assert "shoectl monitor --service" in one_error_line(done.stderr)


def test_case_15_a_scenario_that_is_not_utf8_is_one_line(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    scenario = tmp_path / "scenario.toml"
    scenario.write_bytes(b'profile = "cs-1"\ninject = ["jam@card=3"] # \xff\xfe\n')
    done = shoectl("sim", "--scenario", str(scenario))
    assert done.returncode == 2, done.stderr
    assert "not UTF-8" in done.stderr and "Traceback" not in done.stderr


def test_case_15_a_socket_that_cannot_be_bound_is_one_line_not_a_traceback(
    tmp_path: Path,
) -> None:
    """The service's socket path is too long for AF_UNIX: bind fails after the device is
    open. Before, that was exit 1 with a traceback in the JSON log and nothing on stderr."""
    with simulated_table(tmp_path) as table:
        deep = tmp_path / ("d" * 100)
        deep.mkdir()
        text = table.config_path.read_text().replace(
            'control_socket = "control.sock"', f'control_socket = "{deep / "control.sock"}"'
        )
        table.config_path.write_text(text)
        with running_service(table) as service:
            code = service.process.wait(30)
            log = service.log_tail()
    assert code == 3, log
    assert "Traceback" not in log
    assert "cannot serve the control socket" in log and "service.control_socket" in log


def test_case_15_an_unwritable_socket_folder_is_refused_before_anything_starts(
    shared_folder: Path,
) -> None:
    """Run by a user the kernel holds to the folder's mode: nobody, when the suite runs as root."""
    folder = shared_folder / "run"
    folder.mkdir(mode=0o500)
    os.chown(folder, unprivileged_uid(), -1)
    config = shared_folder / "table.toml"
    config.write_text(
        'table_id = "T1"\n[device]\nkind = "shoe"\nurl = "sim://cs-1"\n[service]\n'
        f'journal_path = "{shared_folder / "journal.sqlite"}"\n'
        f'control_socket = "{folder / "control.sock"}"\n'
    )
    done = shoectl_unprivileged("run", "--config", str(config))
    assert done.returncode == 3, done.stderr
    line = one_error_line(done.stderr)
    assert f"the service user may not write {folder}" in line
    assert "make it writable for that user or set service.control_socket" in line
    assert sorted(item.name for item in shared_folder.iterdir()) == ["run", "table.toml"]


def test_case_15_a_socket_url_without_a_port_says_so(shoectl: ShoectlRunner) -> None:
    done = shoectl("info", "socket://nohost")
    assert done.returncode == 2, done.stderr
    line = one_error_line(done.stderr)
    assert "host and a port" in line and "NoneType" not in line


def test_case_15_port_in_use_names_the_process_that_holds_it(shoectl: ShoectlRunner) -> None:
    """The simulator keeps its pty's far end open; the "in use" message named it whoever
    held the port. Here a miniterm-like process holds the lock."""
    core = create_device("cs-1", seed=1)
    with serve_pty(core) as pty:
        holder = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(pty.link)], stdout=subprocess.PIPE, text=True
        )
        try:
            assert holder.stdout is not None and holder.stdout.readline() == "holding\n"
            done = shoectl("info", str(pty.link))
        finally:
            holder.kill()
            holder.wait()
    assert done.returncode == 3, done.stderr
    line = one_error_line(done.stderr)
    assert f"(pid {holder.pid})" in line, line
    assert f"(pid {os.getpid()})" not in line


def test_case_15_console_logs_into_a_pipe_carry_no_colour_codes(tmp_path: Path) -> None:
    with (
        simulated_table(tmp_path) as table,
        running_service(table, "--log-format", "console") as service,
    ):
        service.wait_for_notification("READY=1")
        assert service.stop() == 0
        log = service.log_path.read_text()
    assert "service ready" in log
    assert "\x1b[" not in log


def test_case_15_a_pulled_cable_logs_once_then_backs_off(tmp_path: Path) -> None:
    """A pulled cable logged two warnings a second (about 7,000 an hour) while the draw
    control retried; now the link's loss and the failed reconnect are told once each."""
    with simulated_table(tmp_path) as table, running_service(table) as service:
        service.wait_for_notification("READY=1")
        request(table.socket_path, "new-shoe")
        request(table.socket_path, "shoe-loaded")
        request(table.socket_path, "cut-done")
        wait_until(lambda: table.status()["dealt"] > 2, "dealing")
        before = len(service.log_path.read_text().splitlines())
        table.core.unplug()
        wait_until(lambda: not table.status()["device"]["connected"], "the link lost")
        time.sleep(4)
        lines = service.log_path.read_text().splitlines()[before:]
        table.core.replug()
        wait_until(lambda: table.status()["device"]["connected"], "the link back")
        assert service.stop() == 0
    told = [json.loads(line)["event"] for line in lines if '"level": "warning"' in line]
    assert 1 <= len(told) <= 5, told  # 4 s of outage: two a second were logged before
    assert len(set(told)) == len(told), told  # each reason once, not once per attempt
