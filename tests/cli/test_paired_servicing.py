"""A paired shoe can be serviced: selftest, info, monitor and dump take its pairing key.

Each servicing command runs as a subprocess against a paired simulator on a
real pty. Without the key, with a key folder that lacks the device's key,
or with the wrong key, each says so in exactly one line on stderr naming
what to give, and exits 3; with the key, dump opens the sealed frames.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from support.service_support import WAIT_S, Table, simulated_table
from support.shoectl import ShoectlRunner

from cardshoe.controller.service.pairing import KeyStore
from cardshoe.drivers.device import open_device
from cardshoe.drivers.protocol.messages import Event

SERVICING = {
    "info": ("info",),
    "selftest": ("selftest",),
    "monitor": ("monitor", "--count", "1"),
    "dump": ("dump", "--count", "20"),
}
"""Each servicing command that opens a device, as a technician types it after the URL."""
HINT = "give its table's --config (service.key_dir) or --key-dir DIR holding its SERIAL.key"


@pytest.fixture
def paired(tmp_path: Path, shoectl: ShoectlRunner) -> Iterator[Table]:
    """A simulated shoe paired with the table's key (in tmp_path/keys), its events taken.

    Taking them leaves the device nothing to resend, sealed, from that session when the
    next command opens the port, so each test sees the same frames.
    """
    with simulated_table(tmp_path, pairing_mode=True) as table:
        done = shoectl("pair", str(table.pty.link), "--config", str(table.config_path))
        assert done.returncode == 0, done.stderr
        keys = KeyStore(tmp_path / "keys").lookup
        with open_device(str(table.pty.link), timeout=3, reconnect=False, keys=keys) as device:
            while (event := device.next_event(0.3)) is not None:
                if isinstance(event, Event):
                    device.ack(event.seq)
        yield table


def test_selftest_info_monitor_and_dump_authenticate_with_the_pairing_key(
    paired: Table, shoectl: ShoectlRunner
) -> None:
    """Issue 12 item 14: selftest failed with AUTH_REQUIRED, monitor URL printed nothing and
    exited 0, and info said AUTH_REQUIRED with no hint."""
    url, config, keys = str(paired.pty.link), str(paired.config_path), str(paired.folder / "keys")
    checked = shoectl("selftest", url, "--config", config, "--json")
    assert checked.returncode == 0, checked.stderr
    assert json.loads(checked.stdout)["passed"] is True
    shown = shoectl("info", url, "--key-dir", keys, "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["authenticated"] is True
    paired.core.press_button()
    watched = shoectl("monitor", url, "--config", config, "--count", "1", "--json")
    assert watched.returncode == 0, watched.stderr
    assert json.loads(watched.stdout.splitlines()[0])["kind"] == "device.button_pressed"
    assert (checked.stderr, shown.stderr, watched.stderr) == ("", "", "")


@pytest.mark.parametrize("command", SERVICING)
def test_without_the_key_each_command_says_once_which_option_gives_it(
    paired: Table, shoectl: ShoectlRunner, command: str
) -> None:
    """monitor URL used to wait for ever, dump to poll AUTH_REQUIRED refusals frame after
    frame: a paired device serves nothing to a host that has not authenticated."""
    url = str(paired.pty.link)
    refused = shoectl(SERVICING[command][0], url, *SERVICING[command][1:], "--timeout", "3")
    assert refused.returncode == 3
    purpose = " and open its sealed frames" if command == "dump" else ""
    assert refused.stderr.splitlines() == [
        f"shoectl: error: device 'SIM-CS1-0001' at {url} is paired, so it serves only an "
        f"authenticated host: {HINT} to authenticate{purpose}"
    ]
    if command == "dump":  # the handshake in clear, and nothing after it
        lines = [line.split("  |  ") for line in refused.stdout.splitlines()]
        decoded = [(where.split()[1], what.split()[0]) for where, what in lines]
        # The pairing's session may still be resending its last event, sealed, when dump
        # opens the port: such a frame is shown as SEALED, never as UNDECODABLE.
        assert [shown for shown in decoded if shown != ("rx", "SEALED")] == [
            ("tx", "DELIMITER"),
            ("tx", "GET_INFO"),
            ("rx", "HELLO"),
        ]
    else:
        assert refused.stdout == ""


@pytest.mark.parametrize("command", SERVICING)
def test_a_wrong_key_or_none_for_this_device_is_one_line(
    paired: Table, shoectl: ShoectlRunner, command: str
) -> None:
    url, serial = str(paired.pty.link), "SIM-CS1-0001"
    wrong, empty = paired.folder / "wrong", paired.folder / "empty"
    wrong.mkdir()
    empty.mkdir()
    (wrong / f"{serial}.key").write_text(secrets.token_hex(32) + "\n")
    (wrong / f"{serial}.key").chmod(0o600)
    expected = {
        wrong: f"shoectl: error: device {serial!r} at {url} did not prove it holds this host's "
        "pairing key (the tag does not match: forged, altered, or another key): paired with "
        "another key, or a spoof; pair it again if it is ours",
        empty: f"shoectl: error: device {serial!r} at {url} is paired but this host holds no "
        "pairing key for it: pair it with `shoectl pair` or install its key file",
    }
    for folder, line in expected.items():
        words = (*SERVICING[command], "--key-dir", str(folder), "--timeout", "3")
        refused = shoectl(words[0], url, *words[1:])
        assert refused.returncode == 3, (folder, refused.stderr)
        assert refused.stderr.splitlines() == [line], folder


@contextmanager
def button_sent_twice_in_the_next_session(table: Table) -> Iterator[None]:
    """Once the command run inside has authenticated, press the dealer button and have the
    device send that event's sealed frame twice: the copy is a replay (same counter).

    Pressed earlier, the event would go out in the previous session, to nobody."""
    link = table.core.link
    before = link.auth

    def press() -> None:
        deadline = time.monotonic() + WAIT_S
        while link.auth in (None, before) and time.monotonic() < deadline:
            time.sleep(0.005)
        link.wire_faults.duplicate.add(link.next_seq)
        table.core.press_button()

    presser = threading.Thread(target=press, name="press-when-authenticated")
    presser.start()
    try:
        yield
    finally:
        presser.join()


def test_dump_opens_each_sealed_frame_with_the_key_and_shows_a_replayed_one_as_such(
    paired: Table, shoectl: ShoectlRunner
) -> None:
    """The sealed frames used to show as UNDECODABLE. A frame sent twice on the wire is a
    replay (same counter): it fails authentication, and dump says so without decoding it."""
    url, keys = str(paired.pty.link), str(paired.folder / "keys")
    with button_sent_twice_in_the_next_session(paired):
        dumped = shoectl("dump", url, "--key-dir", keys, "--count", "10", "--json")
    assert dumped.returncode == 0, dumped.stderr
    assert dumped.stderr == ""
    frames = [json.loads(line) for line in dumped.stdout.splitlines()]
    assert not [frame for frame in frames if frame["frame"] in ("undecodable", "sealed")]
    clear = [f["message"]["type"] for f in frames if f["message"] and f["sealed"] is None]
    assert clear == ["GET_INFO", "HELLO", "AUTH_CHALLENGE"]
    opened = [f for f in frames if f["sealed"] is not None]
    assert opened[0]["message"]["type"] == "AUTH_RESPONSE"
    for direction in ("rx", "tx"):  # each side counts its sealed frames from 1
        counters = [f["sealed"]["counter"] for f in opened if f["direction"] == direction]
        assert counters == list(range(1, len(counters) + 1)), direction
    button = next(f for f in opened if f["message"]["type"] == "BUTTON")
    (replayed,) = [frame for frame in frames if frame["frame"] == "auth_failed"]
    assert (replayed["direction"], replayed["message"]) == ("rx", None)
    counter = button["sealed"]["counter"]
    assert replayed["error"] == f"counter {counter} is not above {counter}: a replayed frame"
    assert replayed["hex"] == button["hex"]


def test_dump_text_marks_the_sealed_frames_and_the_failed_one(
    paired: Table, shoectl: ShoectlRunner
) -> None:
    keys = str(paired.folder / "keys")
    with button_sent_twice_in_the_next_session(paired):
        dumped = shoectl("dump", str(paired.pty.link), "--key-dir", keys, "--count", "8")
    assert dumped.returncode == 0, dumped.stderr
    assert dumped.stderr == ""
    decoded = [line.split("  |  ")[1] for line in dumped.stdout.splitlines()]
    button = next(text for text in decoded if text.startswith("BUTTON"))
    counter = re.fullmatch(r"BUTTON .*  \[sealed #(\d+), tag ok\]", button)
    assert counter is not None, button
    assert (
        "AUTH_FAILED not decoded, not the device's: "
        f"counter {counter[1]} is not above {counter[1]}: a replayed frame"
    ) in decoded
    assert not [text for text in decoded if "UNDECODABLE" in text]


def test_monitor_reports_a_replayed_frame_on_stdout_and_nothing_on_stderr(
    paired: Table, shoectl: ShoectlRunner
) -> None:
    """The link's log line for the dropped frame used to reach stderr beside the event."""
    config = str(paired.config_path)
    with button_sent_twice_in_the_next_session(paired):
        watched = shoectl("monitor", str(paired.pty.link), "--config", config, "--count", "2")
    assert watched.returncode == 0, watched.stderr
    assert watched.stderr == ""
    kinds = [line.split()[1] for line in watched.stdout.splitlines()]
    assert kinds == ["device.button_pressed", "link.auth_failure"]
