"""Issue 21, items 1 and 2: a relay on the wire at start-up, and what the operator sees of it.

A real simulator on a real pty, paired by the real `shoectl pair`; a relay
(support/wire_relay.py) between it and the pty the service opens; the real
`shoectl run` as a child process; `shoectl status` and `shoectl control` as
the technician types them; the journal read back from its SQLite file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from support.service_support import Table, running_service, simulated_table, wait_until
from support.session_support import journaled
from support.shoectl import ShoectlRunner
from support.wire_relay import Rewrite, WireRelay, altering_hello, downgrading, passing

from cardshoe.controller.service.session_records import DEVICE_REFUSED, REPEATED
from cardshoe.drivers.protocol.link_constants import PROTOCOL_MINOR

RETRIES = 4
"""GET_INFOs the relay sees before a test looks at the journal: the refusal was retried."""


@contextmanager
def paired_behind_a_relay(
    folder: Path, shoectl: ShoectlRunner, rewrite: Rewrite
) -> Iterator[tuple[Table, WireRelay]]:
    """A shoe paired over the direct cable, then a relay put between it and the table."""
    with simulated_table(folder, pairing_mode=True) as table:
        paired = shoectl("pair", str(table.pty.link), "--config", str(table.config_path))
        assert paired.returncode == 0, paired.stderr
        (folder / "relay").mkdir()
        with WireRelay(table.pty.link, folder / "relay" / "ttyRELAY0", rewrite) as relay:
            text = table.config_path.read_text()
            table.config_path.write_text(text.replace(str(table.pty.link), str(relay.link)))
            yield table, relay


def status_of(table: Table, shoectl: ShoectlRunner) -> dict[str, object]:
    done = shoectl("status", "--config", str(table.config_path), "--json")
    assert done.returncode == 0, done.stderr
    record: dict[str, object] = json.loads(done.stdout)
    return record


def test_case_1_a_relay_downgrading_a_paired_link_to_1_1_is_refused_and_journaled(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    """Issue 21 item 1: a relay rewriting the minor 1.2 -> 1.1 in GET_INFO and HELLO was
    accepted with no alarm, and the HELLO digest and the stream epoch were gone with it."""
    with paired_behind_a_relay(tmp_path, shoectl, downgrading(1)) as (table, relay):
        with running_service(table, "--device-wait", "120") as service:
            wait_until(lambda: relay.seen["GetInfo"] >= RETRIES, "the service retrying")
            wait_until(lambda: journaled(table.journal_path, DEVICE_REFUSED), "a refusal")
            status = status_of(table, shoectl)
            assert service.stop() == 0
        key_file = next((tmp_path / "keys").iterdir())
    assert key_file.read_text().splitlines()[1] == f"minimum protocol 1.{PROTOCOL_MINOR}"
    assert status["state"] == "waiting for device"
    assert f"below the 1.{PROTOCOL_MINOR} it was paired at" in str(status["reason"])
    (refusal,) = journaled(table.journal_path, DEVICE_REFUSED)
    assert refusal.payload["kind"] == "device_fault"
    pinned = f"answers in protocol 1.1, below the 1.{PROTOCOL_MINOR} it was paired at"
    assert pinned in refusal.payload["detail"]
    assert journaled(table.journal_path, "session.started") == []
    (repeated,) = journaled(table.journal_path, REPEATED)
    assert repeated.payload["kind"] == f"{DEVICE_REFUSED}:protocol_downgrade"
    assert repeated.payload["count"] >= 1


def test_case_1_a_downgrade_at_a_reconnect_of_a_running_table_is_journaled_with_an_alarm(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    """The relay lets the table come up, cuts the line, and downgrades the reconnect: the
    table takes nothing from that session and the pit sees the alarm."""
    with (
        paired_behind_a_relay(tmp_path, shoectl, passing) as (table, relay),
        running_service(table, "--device-wait", "120") as service,
    ):
        service.wait_for_notification("READY=1")
        relay.cut = True
        wait_until(lambda: not table.status()["device"]["connected"], "the link lost")
        relay.rewrite = downgrading(1)
        relay.cut = False
        wait_until(lambda: journaled(table.journal_path, "link.auth_failure"), "the alarm")
        status = status_of(table, shoectl)
        assert service.stop() == 0
    (failure,) = journaled(table.journal_path, "link.auth_failure")
    assert f"below the 1.{PROTOCOL_MINOR} it was paired at" in failure.payload["reason"]
    assert status["device"]["connected"] is False  # type: ignore[index]
    pinned = f"below the 1.{PROTOCOL_MINOR} it was paired at"
    assert pinned in status["last_alarm"]["detail"]  # type: ignore[index]


def test_case_2_a_tampered_hello_at_start_up_is_journaled_and_status_tells_why(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    """Issue 21 item 2: a tampered HELLO at start-up was one log line; nothing journaled,
    and `shoectl status` found no service while it waited. Once the wire is honest
    again the table comes up."""
    tampered = altering_hello(next_seq=0xFFFFFF00)
    with paired_behind_a_relay(tmp_path, shoectl, tampered) as (table, relay):
        config = str(table.config_path)
        with running_service(table, "--device-wait", "120") as service:
            wait_until(lambda: relay.seen["GetInfo"] >= RETRIES, "the service retrying")
            wait_until(lambda: journaled(table.journal_path, DEVICE_REFUSED), "a refusal")
            shown = shoectl("status", "--config", config)
            refused = shoectl("control", "no-more-bets", "--config", config)
            assert len(journaled(table.journal_path, DEVICE_REFUSED)) == 1
            relay.rewrite = passing
            service.wait_for_notification("READY=1")
            up = status_of(table, shoectl)
            assert service.stop() == 0
    assert shown.returncode == 0, shown.stderr
    state_line = next(line for line in shown.stdout.splitlines() if line.startswith("state"))
    assert "waiting for device: " in state_line and "vouched for" in state_line
    assert "device_fault: start-up refused the device" in shown.stdout
    assert refused.returncode == 3
    assert refused.stderr.splitlines() == [
        next(line for line in refused.stderr.splitlines() if "the table is waiting" in line)
    ]
    (refusal,) = journaled(table.journal_path, DEVICE_REFUSED)
    assert "not the one the device vouched for" in refusal.payload["detail"]
    assert up["state"] != "waiting for device" and up["reason"] is None
    assert up["device"]["authenticated"]  # type: ignore[index]
    (repeated,) = journaled(table.journal_path, REPEATED)
    assert repeated.payload["kind"] == f"{DEVICE_REFUSED}:authentication_failed"


def test_case_2_status_answers_while_the_device_is_absent(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    """Issue 21 item 2: the control socket answers from the start, before any device; an
    absent device is waited for, not journaled as a refusal."""
    with simulated_table(tmp_path) as table:
        absent = tmp_path / "no-such-port"
        text = table.config_path.read_text()
        table.config_path.write_text(text.replace(str(table.pty.link), str(absent)))
        with running_service(table, "--device-wait", "120") as service:
            wait_until(table.socket_path.exists, "the control socket")
            wait_until(lambda: "waiting" in str(table.status()["state"]), "the wait")
            status = status_of(table, shoectl)
            assert service.stop() == 0
    assert status["state"] == "waiting for device"
    assert str(absent) in str(status["reason"])
    assert status["device"] is None
    assert journaled(table.journal_path, DEVICE_REFUSED) == []
