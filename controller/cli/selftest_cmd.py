"""shoectl selftest: run the device's self-test and show each check; exit 1 if one failed."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from cardshoe.controller.cli.completion import complete_device_url
from cardshoe.controller.cli.options import (
    DEVICE_TIMEOUT_OPTION,
    KEY_DIR_OPTION,
    PAIRING_CONFIG_OPTION,
)
from cardshoe.controller.cli.service_access import pairing_keys
from cardshoe.controller.errors import EXIT_CHECK_FAILED, UserError
from cardshoe.controller.service.device_access import device_user_error, opened_device
from cardshoe.drivers.errors import DriverError
from cardshoe.drivers.protocol.messages import Event

if TYPE_CHECKING:
    from cardshoe.drivers.device import DealerDevice, ShoeDevice

SELF_TEST_TIMEOUT_S = 30.0
LISTEN_S = 10.0


@dataclass(frozen=True)
class Check:
    name: str
    passed: bool
    detail: str


@click.command()
@click.argument("url", shell_complete=complete_device_url)
@DEVICE_TIMEOUT_OPTION
@click.option(
    "--test-timeout",
    type=click.FloatRange(min=0.1),
    default=SELF_TEST_TIMEOUT_S,
    show_default=True,
    help="Seconds to wait for the self-test to finish.",
)
@PAIRING_CONFIG_OPTION
@KEY_DIR_OPTION
@click.option(
    "--profile",
    "profile_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="URL is a line reader: a TOML file with its [device.line] or [device.hid] table.",
)
@click.option(
    "--listen",
    type=click.FloatRange(min=0.1),
    default=LISTEN_S,
    show_default=True,
    help="With --profile: seconds to listen while cards are drawn past the reader.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def selftest(
    url: str,
    timeout: float,
    test_timeout: float,
    config_path: Path | None,
    key_dir: Path | None,
    profile_path: Path | None,
    listen: float,
    as_json: bool,
) -> None:
    """Run SELF_TEST on the device at URL and print each check with PASS or FAIL.

    The checks: the device answers, its self-test ran and no check of it
    failed, the firmware hash it reports after the test is the one it gave
    at the handshake, and no fault is active. Events the device had waiting
    are acknowledged (it sends the result only after them), so use it on a
    device that is not in service. Exit 1 if any check failed, 3 if the
    device is absent, busy or not permitted.

    A line reader (--profile FILE) has no self-test to run: the command
    listens for --listen seconds while a few cards are drawn past it, and
    checks that lines came, that each matched the profile and passed its
    checksum.
    """

    if profile_path is not None:
        # Late: heavy (rich, structlog, pyserial, pyusb or sqlite3), which loading this module for
        # --help must not pull in (tests/cli/test_technician_cli.py).
        from cardshoe.controller.cli.line_tools import listen_checks, load_profile, show_checks

        line_checks = listen_checks(url, load_profile(profile_path), listen)
        if not show_checks(line_checks, url, as_json):
            failed = "; ".join(f"{c.name}: {c.detail}" for c in line_checks if not c.passed)
            raise UserError(f"self-test of {url} failed: {failed}", EXIT_CHECK_FAILED)
        return
    keys = pairing_keys(config_path, key_dir)
    with opened_device(url, timeout=timeout, keys=keys) as device:
        try:
            checks, info = _run_checks(device, test_timeout)
        except DriverError as exc:
            raise device_user_error(exc) from exc
    passed = all(check.passed for check in checks)
    if as_json:
        record = {"device": info, "passed": passed, "checks": [asdict(c) for c in checks]}
        click.echo(json.dumps(record))
    else:
        for check in checks:
            click.echo(f"{'PASS' if check.passed else 'FAIL'}  {check.name}: {check.detail}")
    if not passed:
        failed = "; ".join(f"{check.name}: {check.detail}" for check in checks if not check.passed)
        raise UserError(f"self-test of {url} failed: {failed}", EXIT_CHECK_FAILED)


def _run_checks(
    device: ShoeDevice | DealerDevice, test_timeout: float
) -> tuple[list[Check], dict[str, Any]]:

    device.on_event(lambda event: device.ack(event.seq) if isinstance(event, Event) else None)
    info = device.info
    result = device.self_test(timeout=test_timeout)
    status = device.get_status()
    failures = [kind.name for kind in result.failures]
    faults = [kind.name for kind in status.active_faults]
    same_hash = result.firmware_hash == info.firmware_hash
    checks = [
        Check(
            "device answers",
            True,
            f"{info.model} {info.kind.name} serial {info.serial_number}, "
            f"firmware {info.firmware_version}",
        ),
        Check("self-test ran", result.checks_run > 0, f"{result.checks_run} checks run"),
        Check(
            "device checks",
            not failures,
            f"{', '.join(failures)} failed" if failures else "all passed",
        ),
        Check(
            "firmware hash",
            same_hash,
            f"sha256 {result.firmware_hash.hex()}"
            + ("" if same_hash else f", but {info.firmware_hash.hex()} at the handshake"),
        ),
        Check("no active fault", not faults, ", ".join(faults) or "none"),
    ]
    return checks, info.to_json()
