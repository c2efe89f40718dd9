"""A paired shoe can be serviced: selftest, info, monitor and dump take its pairing key."""

from __future__ import annotations

import json
from pathlib import Path

from support.service_support import simulated_table
from support.shoectl import ShoectlRunner


def test_selftest_info_monitor_and_dump_authenticate_with_the_pairing_key(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    """Issue 12 item 14: selftest failed with AUTH_REQUIRED, monitor URL printed nothing and
    exited 0, and info said AUTH_REQUIRED with no hint."""
    with simulated_table(tmp_path, pairing_mode=True) as table:
        url, config = str(table.pty.link), str(table.config_path)
        paired = shoectl("pair", url, "--config", config)
        assert paired.returncode == 0, paired.stderr
        refused = shoectl("info", url)
        assert refused.returncode != 0
        line = refused.stderr.splitlines()[-1]
        assert (
            line.startswith("shoectl: error: ")
            and "AUTH_REQUIRED" in line
            and "give its table's --config" in line
        )
        assert "--key-dir" in line
        checked = shoectl("selftest", url, "--config", config, "--json")
        assert checked.returncode == 0, checked.stderr
        assert json.loads(checked.stdout)["passed"] is True
        shown = shoectl("info", url, "--key-dir", str(tmp_path / "keys"), "--json")
        assert shown.returncode == 0, shown.stderr
        assert json.loads(shown.stdout)["authenticated"] is True
        table.core.press_button()
        watched = shoectl("monitor", url, "--config", config, "--count", "1", "--json")
        assert watched.returncode == 0, watched.stderr
        assert json.loads(watched.stdout.splitlines()[0])["kind"].startswith("device.")
        dumped = shoectl("dump", url, "--key-dir", str(tmp_path / "keys"), "--count", "4")
        assert dumped.returncode == 0, dumped.stderr
        assert len([line for line in dumped.stdout.splitlines() if "  rx  " in line]) >= 1
