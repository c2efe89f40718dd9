"""cardshoe-console.service: the table console on tty1 reaches the control socket and its
terminal, and nothing else.

`make verify-deploy` runs systemd-analyze verify and security on it (exposure at most
2.0); these tests pin what those tools cannot judge: its user, terminal, paths and network.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.systemd_units import parse_unit

REPO = Path(__file__).resolve().parents[2]
SYSTEMD = REPO / "udev" / "systemd"
Unit = dict[str, dict[str, list[str]]]


@pytest.fixture(scope="module")
def console_unit() -> Unit:
    return parse_unit((SYSTEMD / "cardshoe-console.service").read_text())


def test_it_runs_shoectl_console_on_tty1_in_place_of_its_login_prompt(console_unit: Unit) -> None:
    service, unit = console_unit["Service"], console_unit["Unit"]
    assert service["ExecStart"] == [
        "/opt/cardshoe/venv/bin/shoectl console --config /etc/cardshoe/table.toml"
    ]
    assert service["TTYPath"] == ["/dev/tty1"]
    assert service["StandardInput"] == ["tty-force"] and service["StandardOutput"] == ["tty"]
    assert unit["Conflicts"] == ["getty@tty1.service"]
    assert service["Restart"] == ["always"]
    assert "Requires" not in unit and "BindsTo" not in unit  # it rides out a service restart
    assert console_unit["Install"]["WantedBy"] == ["multi-user.target"]


def test_its_own_user_reaches_the_socket_and_never_the_journal_keys_or_pins(
    console_unit: Unit,
) -> None:
    service = console_unit["Service"]
    assert (service["User"], service["Group"]) == (["cardshoe-console"], ["cardshoe-console"])
    assert service["SupplementaryGroups"] == ["cardshoe"]
    assert service["ReadWritePaths"] == ["/run/cardshoe"]
    hidden = " ".join(service["InaccessiblePaths"]).split()
    assert {"-/var/lib/cardshoe", "-/etc/cardshoe/keys", "-/etc/cardshoe/pins.json"} <= set(hidden)
    assert service["DeviceAllow"] == ["/dev/tty1 rw"] and service["DevicePolicy"] == ["closed"]
    assert service["PrivateNetwork"] == ["yes"]
    assert service["RestrictAddressFamilies"] == ["AF_UNIX"]
    sysusers = (SYSTEMD / "cardshoe-console.sysusers").read_text().splitlines()
    accounts = [line.split()[:2] for line in sysusers if line and not line.startswith("#")]
    assert accounts == [["u", "cardshoe-console"]]
