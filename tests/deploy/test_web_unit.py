"""cardshoe-web.service: the scoreboard page's unit can read the journal and nothing more.

`make verify-deploy` runs systemd-analyze verify and security on it (exposure at most
2.0); these tests pin what those tools cannot judge: its user, paths and network.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.systemd_units import parse_unit

REPO = Path(__file__).resolve().parents[2]
SYSTEMD = REPO / "udev" / "systemd"
Unit = dict[str, dict[str, list[str]]]


@pytest.fixture(scope="module")
def web_unit() -> Unit:
    return parse_unit((SYSTEMD / "cardshoe-web.service").read_text())


def test_it_runs_shoectl_web_on_the_loopback_from_the_tables_config(web_unit: Unit) -> None:
    service = web_unit["Service"]
    assert service["ExecStart"] == [
        "/opt/cardshoe/venv/bin/shoectl web --config /etc/cardshoe/table.toml "
        "--listen 127.0.0.1:8080"
    ]
    assert service["Restart"] == ["on-failure"]
    assert web_unit["Unit"]["After"] == ["cardshoe.service"]
    assert "Requires" not in web_unit["Unit"] and "BindsTo" not in web_unit["Unit"]
    assert web_unit["Install"]["WantedBy"] == ["multi-user.target"]


def test_its_own_user_reads_the_journal_and_reaches_nothing_else(web_unit: Unit) -> None:
    service = web_unit["Service"]
    assert (service["User"], service["Group"]) == (["cardshoe-web"], ["cardshoe-web"])
    assert service["SupplementaryGroups"] == ["cardshoe"]
    assert service["ReadOnlyPaths"] == ["/var/lib/cardshoe"]
    assert service["InaccessiblePaths"] == ["-/run/cardshoe -/etc/cardshoe/keys"]
    assert "StateDirectory" not in service and "RuntimeDirectory" not in service
    sysusers = (SYSTEMD / "cardshoe-web.sysusers").read_text().splitlines()
    accounts = [line.split()[:2] for line in sysusers if line and not line.startswith("#")]
    assert accounts == [["u", "cardshoe-web"]]


def test_it_is_hardened_like_the_table_service(web_unit: Unit) -> None:
    service = web_unit["Service"]
    for key, value in {
        "ProtectSystem": "strict",
        "NoNewPrivileges": "yes",
        "PrivateTmp": "yes",
        "PrivateDevices": "yes",
        "ProtectHome": "yes",
        "DevicePolicy": "closed",
        "CapabilityBoundingSet": "",
        "IPAddressDeny": "any",
        "IPAddressAllow": "localhost",
        "MemoryDenyWriteExecute": "yes",
    }.items():
        assert service[key] == [value], key
    assert "DeviceAllow" not in service
    assert " ".join(service["RestrictAddressFamilies"]).split() == ["AF_INET", "AF_INET6"]


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("systemd-sysusers") is None,
    reason="install.sh needs root (tmpfiles chowns) and systemd-sysusers",
)
def test_install_adds_the_unit_its_account_and_its_guide(tmp_path: Path) -> None:
    install = str(REPO / "udev" / "install.sh")
    command = ["bash", install, "--root", str(tmp_path), "--venv", sys.prefix]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    unit = tmp_path / "etc" / "systemd" / "system" / "cardshoe-web.service"
    assert unit.read_text() == (SYSTEMD / "cardshoe-web.service").read_text()
    guide = tmp_path / "usr" / "local" / "share" / "doc" / "cardshoe" / "scoreboard.md"
    assert guide.read_text() == (REPO / "docs" / "scoreboard.md").read_text()
    passwd = (tmp_path / "etc" / "passwd").read_text()
    assert any(line.startswith("cardshoe-web:") for line in passwd.splitlines())


def test_issue21_case_10_the_web_unit_yields_the_cpu_to_the_table_service(web_unit: Unit) -> None:
    """500 screens raised the table's card latency p99 from 4-6 to 10-13 ms on the same PC."""
    table = parse_unit((SYSTEMD / "cardshoe.service").read_text())["Service"]
    web = web_unit["Service"]
    assert int(web["Nice"][0]) > int(table.get("Nice", ["0"])[0])
    assert int(web["CPUWeight"][0]) < int(table.get("CPUWeight", ["100"])[0])
