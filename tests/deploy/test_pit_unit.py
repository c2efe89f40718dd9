"""cardshoe-pit.service: the pit's unit on the floor server, checked where systemd cannot judge.

`make verify-deploy` runs systemd-analyze verify and security on it (exposure at most
2.0); these tests pin its user, its command and its network.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from support.systemd_units import parse_unit

SYSTEMD = Path(__file__).resolve().parents[2] / "udev" / "systemd"
Unit = dict[str, dict[str, list[str]]]


@pytest.fixture(scope="module")
def pit_unit() -> Unit:
    return parse_unit((SYSTEMD / "cardshoe-pit.service").read_text())


def test_it_runs_shoectl_floor_web_over_tls_with_no_password_in_the_unit(pit_unit: Unit) -> None:
    (command,) = pit_unit["Service"]["ExecStart"]
    words = shlex.split(command)
    assert words[:3] == ["/opt/cardshoe/venv/bin/shoectl", "floor", "web"]
    options = dict(zip(words[3::2], words[4::2], strict=True))
    assert options["--dsn"].startswith("postgresql:///") and "@" not in options["--dsn"]
    assert options["--broker"].startswith("mqtts://")
    assert {"--tls-cert", "--tls-key", "--ca", "--cert", "--key"} <= set(options)
    assert options["--listen"].startswith("127.0.0.1:")


def test_its_own_user_and_the_network_it_needs(pit_unit: Unit) -> None:
    service = pit_unit["Service"]
    assert (service["User"], service["Group"]) == (["cardshoe-pit"], ["cardshoe-pit"])
    assert "SupplementaryGroups" not in service
    sysusers = (SYSTEMD / "cardshoe-pit.sysusers").read_text().splitlines()
    accounts = [line.split()[:2] for line in sysusers if line and not line.startswith("#")]
    assert accounts == [["u", "cardshoe-pit"]]
    families = " ".join(service["RestrictAddressFamilies"]).split()
    assert families == ["AF_UNIX", "AF_INET", "AF_INET6"]
    assert (service["IPAddressDeny"], service["IPAddressAllow"]) == (["any"], ["localhost"])
    for key, value in {
        "ProtectSystem": "strict",
        "NoNewPrivileges": "yes",
        "PrivateDevices": "yes",
        "CapabilityBoundingSet": "",
        "MemoryDenyWriteExecute": "yes",
    }.items():
        assert service[key] == [value], key
