"""Issue 21 case 6: the files the service makes for itself cannot be redirected.

With control.sock.lock a symbolic link to the journal, `shoectl run` truncated
the journal and wrote its pid into it. Each test runs the real service (or
the real CLI) against real files.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.service_support import running_service, simulated_table
from support.shoectl import ShoectlRunner, one_error_line

from cardshoe.controller.journal.store import Journal


def test_issue21_case_6_a_lock_file_linked_to_the_journal_is_refused_and_the_journal_kept(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    with simulated_table(tmp_path) as table:
        journal_bytes = table.journal_path.read_bytes()
        lock = tmp_path / "control.sock.lock"
        lock.symlink_to(table.journal_path)
        done = shoectl("run", "--config", str(table.config_path))
        assert done.returncode == 3, done.stderr
        line = one_error_line(done.stderr)
        assert f"{lock} is a symbolic link: remove it" in line
        assert table.journal_path.read_bytes() == journal_bytes
        lock.unlink()
        with running_service(table) as service:
            service.wait_for_notification("READY=1")
            assert table.status()["state"] == "idle"
            assert service.stop() == 0
    assert not lock.is_symlink() and lock.read_text().strip().isdigit()
    with Journal.open_readonly(table.journal_path) as journal:
        assert journal.verify().ok


def test_issue21_case_6_a_journal_lock_linked_elsewhere_is_refused_and_its_target_kept(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    with simulated_table(tmp_path) as table:
        target = tmp_path / "precious.txt"
        target.write_text("not the service's to write\n")
        lock = table.journal_path.with_name(table.journal_path.name + ".lock")
        lock.unlink(missing_ok=True)
        lock.symlink_to(target)
        done = shoectl("run", "--config", str(table.config_path))
    assert done.returncode == 3, done.stderr
    assert f"{lock} is a symbolic link" in one_error_line(done.stderr)
    assert target.read_text() == "not the service's to write\n"


def test_issue21_case_6_a_socket_folder_others_may_write_is_refused(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    with simulated_table(tmp_path) as table:
        run_folder = tmp_path / "run"
        run_folder.mkdir()
        run_folder.chmod(0o777)
        text = table.config_path.read_text()
        table.config_path.write_text(
            text.replace('control_socket = "control.sock"', 'control_socket = "run/control.sock"')
        )
        done = shoectl("run", "--config", str(table.config_path))
    assert done.returncode == 3, done.stderr
    line = one_error_line(done.stderr)
    assert f"{run_folder} is writable by other users (mode 0777): chmod go-w" in line
    assert list(run_folder.iterdir()) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user needs root")
def test_issue21_case_6_a_socket_folder_of_another_user_is_refused(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    with simulated_table(tmp_path) as table:
        run_folder = tmp_path / "run"
        run_folder.mkdir(mode=0o755)
        other = os.geteuid() + 4242
        os.chown(run_folder, other, -1)
        text = table.config_path.read_text()
        table.config_path.write_text(
            text.replace('control_socket = "control.sock"', 'control_socket = "run/control.sock"')
        )
        done = shoectl("run", "--config", str(table.config_path))
    assert done.returncode == 3, done.stderr
    assert f"{run_folder} belongs to user id {other}" in one_error_line(done.stderr)
