"""The udev rules, systemd unit and install script say what docs/deployment.md promises.

`make verify-deploy` runs the real validators (udevadm verify, systemd-analyze verify);
these tests pin the policy those tools cannot judge: modes, groups, hardening keys.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from support.systemd_units import parse_unit

REPO = Path(__file__).resolve().parents[2]
RULES = REPO / "udev" / "70-cardshoe.rules"
INSTALL = REPO / "udev" / "install.sh"
SYSTEMD = REPO / "udev" / "systemd"

# Test data: an FTDI adapter's serial number and a USB port path, as udevadm info shows them.
SHOE_SERIAL = "A10KXYZ1"
SHOE_PORT = "pci-0000:00:14.0-usb-0:2:1.0"


def rule_lines(text: str) -> list[str]:
    """Rules without comments, with backslash continuations joined."""
    joined = re.sub(r"\\\n", " ", text)
    return [
        line.strip() for line in joined.splitlines() if line.strip() and not line.startswith("#")
    ]


def assignments(lines: list[str], key: str) -> list[str]:
    """Every value given to `key` with = or += (not compared with ==)."""
    pattern = re.compile(rf"(?<![A-Za-z{{}}_]){re.escape(key)}\s*\+?=\s*\"([^\"]*)\"")
    return [value for line in lines for value in pattern.findall(line)]


@pytest.fixture(scope="module")
def unit() -> dict[str, dict[str, list[str]]]:
    return parse_unit((SYSTEMD / "cardshoe.service").read_text())


def test_rules_never_open_devices_to_everyone():
    lines = rule_lines(RULES.read_text())

    assert assignments(lines, "MODE") == ["0660"]
    assert assignments(lines, "GROUP") == ["cardshoe"]
    assert not any("uaccess" in line for line in lines)


def test_every_device_past_the_role_gate_gets_the_whole_policy():
    lines = rule_lines(RULES.read_text())
    gate = lines.index('ENV{CARDSHOE_ROLE}!="shoe|dealer", GOTO="cardshoe_end"')

    assert lines[gate + 1] == 'GROUP="cardshoe", MODE="0660", ENV{ID_MM_DEVICE_IGNORE}="1"'


def test_rules_link_devices_under_dev_cardshoe_by_role_and_serial():
    links = assignments(rule_lines(RULES.read_text()), "SYMLINK")

    assert links == [
        "cardshoe/$env{CARDSHOE_ROLE}-$env{ID_SERIAL_SHORT}",
        "cardshoe/$env{CARDSHOE_ROLE}-$env{ID_PATH}",
    ]


def test_rules_find_the_dealer_by_its_usb_id():
    dealer = next(line for line in rule_lines(RULES.read_text()) if "dealer" in line)

    assert 'SUBSYSTEM=="usb"' in dealer
    assert 'ENV{ID_VENDOR_ID}=="1209"' in dealer
    assert 'ENV{ID_MODEL_ID}=="0001"' in dealer


def test_device_group_is_the_service_user_group(unit):
    sysusers = rule_lines((SYSTEMD / "cardshoe.sysusers").read_text())

    assert [line.split()[:2] for line in sysusers] == [["u", "cardshoe"]]
    assert unit["Service"]["User"] == ["cardshoe"]
    assert unit["Service"]["Group"] == ["cardshoe"]


def test_config_folder_is_readable_by_the_group_only():
    tmpfiles = rule_lines((SYSTEMD / "cardshoe.tmpfiles").read_text())

    assert [line.split() for line in tmpfiles] == [
        ["d", "/etc/cardshoe", "0750", "root", "cardshoe", "-"],
        ["d", "/var/lib/cardshoe", "0750", "cardshoe", "cardshoe", "-"],
    ]


def test_unit_is_a_watched_notify_service(unit):
    service = unit["Service"]

    assert service["Type"] == ["notify"]
    assert service["WatchdogSec"] == ["10s"]
    assert service["Restart"] == ["on-failure"]
    assert service["ExecStart"] == [
        "/opt/cardshoe/venv/bin/shoectl run --config /etc/cardshoe/table.toml"
    ]
    assert service["StateDirectory"] == ["cardshoe"]
    assert service["RuntimeDirectory"] == ["cardshoe"]
    assert unit["Install"]["WantedBy"] == ["multi-user.target"]


def test_unit_is_hardened(unit):
    service = unit["Service"]

    for key, value in {
        "ProtectSystem": "strict",
        "NoNewPrivileges": "yes",
        "PrivateTmp": "yes",
        "ProtectHome": "yes",
        "DevicePolicy": "closed",
        "CapabilityBoundingSet": "",
    }.items():
        assert service[key] == [value], key
    assert sorted(service["DeviceAllow"]) == [
        "char-ttyACM rw",
        "char-ttyS rw",
        "char-ttyUSB rw",
        "char-usb_device rw",
    ]
    families = " ".join(service["RestrictAddressFamilies"]).split()
    assert families == ["AF_UNIX", "AF_NETLINK"]


def run_install(root: Path, *args: str, venv: str = sys.prefix) -> subprocess.CompletedProcess[str]:
    """install.sh into a scratch root, with this test run's venv as the installed cardshoe."""
    command = ["bash", str(INSTALL), "--root", str(root), "--venv", venv, *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


needs_systemd_tools = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("systemd-sysusers") is None,
    reason="install.sh needs root (tmpfiles chowns) and systemd-sysusers",
)


@needs_systemd_tools
def test_install_lays_out_a_working_root(tmp_path):
    result = run_install(tmp_path, "--shoe-serial", SHOE_SERIAL, "--shoe-port", SHOE_PORT)

    assert result.returncode == 0, result.stderr
    rules_dir = tmp_path / "etc" / "udev" / "rules.d"
    assert (rules_dir / "70-cardshoe.rules").read_text() == RULES.read_text()
    local = rule_lines((rules_dir / "69-cardshoe-local.rules").read_text())
    assert [line.endswith('ENV{CARDSHOE_ROLE}="shoe"') for line in local] == [True, True]
    assert f'ENV{{ID_SERIAL_SHORT}}=="{SHOE_SERIAL}"' in local[0]
    assert f'ENV{{ID_PATH}}=="{SHOE_PORT}"' in local[1]
    for installed in [
        rules_dir / "69-cardshoe-local.rules",
        tmp_path / "etc" / "systemd" / "system" / "cardshoe.service",
        tmp_path / "etc" / "sysusers.d" / "cardshoe.conf",
    ]:
        assert stat.S_IMODE(installed.stat().st_mode) == 0o644, installed
    group_line = next(
        line
        for line in (tmp_path / "etc" / "group").read_text().splitlines()
        if line.startswith("cardshoe:")
    )
    config_dir = (tmp_path / "etc" / "cardshoe").stat()
    assert stat.S_IMODE(config_dir.st_mode) == 0o750
    assert config_dir.st_gid == int(group_line.split(":")[2])


@needs_systemd_tools
def test_install_makes_the_journal_once_the_config_exists_and_keeps_it(tmp_path):
    """Issue 11 case 1: the journal comes from `shoectl journal init`, never from the service."""
    first = run_install(tmp_path, "--shoe-serial", SHOE_SERIAL)
    assert first.returncode == 0, first.stderr
    assert "shoectl journal init" in first.stdout
    config = tmp_path / "etc" / "cardshoe" / "table.toml"
    config.write_text('table_id = "T9"\n[service]\njournal_path = "journal.sqlite"\n')
    journal = config.parent / "journal.sqlite"

    second = run_install(tmp_path)
    assert second.returncode == 0, second.stderr
    assert f"{journal}: new journal for table T9" in second.stdout
    made = journal.read_bytes()
    third = run_install(tmp_path)
    assert third.returncode == 0, third.stderr
    assert "kept the journal already there" in third.stdout
    assert journal.read_bytes() == made


@needs_systemd_tools
def test_reinstall_without_shoes_keeps_the_site_list(tmp_path):
    assert run_install(tmp_path, "--shoe-serial", SHOE_SERIAL).returncode == 0
    local = tmp_path / "etc" / "udev" / "rules.d" / "69-cardshoe-local.rules"
    before = local.read_text()

    result = run_install(tmp_path)

    assert result.returncode == 0, result.stderr
    assert local.read_text() == before
    assert "kept the shoes" in result.stdout


@pytest.mark.parametrize("serial", ['A1"B', "A1 B", "$(reboot)", ""])
def test_install_refuses_a_serial_that_would_break_the_rules(tmp_path, serial):
    result = run_install(tmp_path, "--shoe-serial", serial)

    assert result.returncode == 2
    assert "must be letters, digits" in result.stderr
    assert not (tmp_path / "etc").exists()


def test_uplink_unit_reads_the_journal_and_reaches_only_the_network():
    """The uplink gets TCP and no device; the table service keeps IPAddressDeny=any."""
    uplink = parse_unit((SYSTEMD / "cardshoe-uplink.service").read_text())["Service"]
    assert uplink["ExecStart"] == [
        "/opt/cardshoe/venv/bin/shoectl uplink --config /etc/cardshoe/table.toml"
    ]
    assert uplink["User"] == ["cardshoe"] and uplink["StateDirectory"] == ["cardshoe-uplink"]
    assert uplink["DevicePolicy"] == ["closed"] and "DeviceAllow" not in uplink
    assert uplink["PrivateDevices"] == ["yes"]
    families = " ".join(uplink["RestrictAddressFamilies"]).split()
    assert families == ["AF_UNIX", "AF_INET", "AF_INET6"]
    for key in ("ProtectSystem", "NoNewPrivileges", "PrivateTmp", "CapabilityBoundingSet"):
        assert key in uplink, key
    service = parse_unit((SYSTEMD / "cardshoe.service").read_text())["Service"]
    assert service["IPAddressDeny"] == ["any"]


@needs_systemd_tools
def test_install_lays_out_the_uplink_unit_and_the_floor_guide(tmp_path):
    assert run_install(tmp_path, "--shoe-serial", SHOE_SERIAL).returncode == 0
    unit = tmp_path / "etc" / "systemd" / "system" / "cardshoe-uplink.service"
    assert unit.read_text() == (SYSTEMD / "cardshoe-uplink.service").read_text()
    guide = tmp_path / "usr" / "local" / "share" / "doc" / "cardshoe" / "floor.md"
    assert guide.read_text() == (REPO / "docs" / "floor.md").read_text()


@needs_systemd_tools
def test_install_ships_man_pages_and_shell_completion(tmp_path):
    result = run_install(tmp_path, "--shoe-serial", SHOE_SERIAL)

    assert result.returncode == 0, result.stderr
    man_dir = tmp_path / "usr" / "local" / "share" / "man" / "man1"
    pages = {page.name for page in man_dir.iterdir()}
    assert {"shoectl.1", "shoectl-demo.1", "shoectl-journal-verify.1"} <= pages
    bash = tmp_path / "usr" / "share" / "bash-completion" / "completions" / "shoectl"
    zsh = tmp_path / "usr" / "share" / "zsh" / "vendor-completions" / "_shoectl"
    assert "complete -o nosort -F _shoectl_completion shoectl" in bash.read_text()
    assert zsh.read_text().startswith("#compdef shoectl")
    for installed in [bash, zsh, *man_dir.iterdir()]:
        assert stat.S_IMODE(installed.stat().st_mode) == 0o644, installed


@needs_systemd_tools
def test_reinstall_drops_the_page_of_a_removed_command(tmp_path):
    man_dir = tmp_path / "usr" / "local" / "share" / "man" / "man1"
    man_dir.mkdir(parents=True)
    (man_dir / "shoectl-retired.1").write_text(".TH SHOECTL-RETIRED 1\n")
    (man_dir / "other.1").write_text(".TH OTHER 1\n")

    assert run_install(tmp_path, "--shoe-serial", SHOE_SERIAL).returncode == 0

    assert not (man_dir / "shoectl-retired.1").exists()
    assert (man_dir / "other.1").exists()
    assert (man_dir / "shoectl.1").exists()


def test_install_without_an_installed_cardshoe_changes_nothing(tmp_path):
    result = run_install(tmp_path, "--shoe-serial", SHOE_SERIAL, venv=str(tmp_path / "no-venv"))

    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert f"no working cardshoe in {tmp_path / 'no-venv'}" in result.stderr
    assert "--venv DIR" in result.stderr
    assert [path.name for path in tmp_path.iterdir()] == []
