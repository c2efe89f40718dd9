"""Signed firmware updates, end to end: shoectl pair gives a simulated shoe on a real pty the
house's public key, and shoectl firmware update (a subprocess) sends it signed images.

A good image switches the device, and its next HELLO (shoectl info) shows the new hash and
version. A tampered image, one signed with another key, a downgrade and a transfer cut by a
power failure are each refused, the device still runs its old firmware, and every attempt is
in the journal with the image's hash and version and the uid that ran it.
"""

from __future__ import annotations

import hashlib
import json
import os
import pwd
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import load_pem_public_key
from support.service_support import Table, open_manual_shoe, running_service, simulated_table
from support.shoectl import ShoectlRunner

from cardshoe.controller.journal.store import Journal
from cardshoe.controller.record_kinds import SOFTWARE_FIRMWARE_UPDATE
from cardshoe.drivers.protocol.firmware_image import SignedImage, public_key_id
from cardshoe.firmware_sim.profiles import get_profile

NEW_IMAGE = b"cardshoe simulated firmware CS-1, release 2\n" * 20
"""Several chunks long, so the transfer is chunked and a cut can fall half-way."""


@dataclass(frozen=True)
class Images:
    """Signed files in a folder, and the SHA-256 of each image."""

    folder: Path

    def path(self, name: str) -> Path:
        return self.folder / f"{name}.signed"

    def sha256(self, name: str) -> str:
        return SignedImage.decode(self.path(name).read_bytes()).sha256.hex()


@pytest.fixture
def images(tmp_path: Path, shoectl: ShoectlRunner) -> Images:
    """The house's key pair, another key pair, and the signed images the tests send."""
    folder = tmp_path / "images"
    folder.mkdir()
    for stem in ("house", "stranger"):
        made = shoectl("firmware", "keygen", "--out", str(folder / stem))
        assert made.returncode == 0, made.stderr
    plans = {
        "good": (NEW_IMAGE, "house", 2),
        "older": (NEW_IMAGE + b"old", "house", 0),
        "stranger": (NEW_IMAGE + b"other", "stranger", 3),
    }
    for name, (image, key, version) in plans.items():
        (folder / name).write_bytes(image)
        signed = shoectl(
            "firmware",
            "sign",
            str(folder / name),
            "--key",
            str(folder / f"{key}.key"),
            "--version",
            str(version),
            "--output",
            str(folder / f"{name}.signed"),
        )
        assert signed.returncode == 0, signed.stderr
    return Images(folder)


@contextmanager
def paired_table(
    folder: Path, images: Images, shoectl: ShoectlRunner, *inject: str
) -> Iterator[Table]:
    """A simulated shoe whose table allows every signed image's hash, paired with the house
    key; `inject`: simulator faults (docs/simulator.md)."""
    factory = hashlib.sha256(get_profile("cs-1").firmware_image).hexdigest()
    signed = [images.sha256(name) for name in ("good", "older", "stranger")]
    allowed = ", ".join(f'"{digest}"' for digest in (factory, *signed))
    device_lines = (
        f'house_public_key = "{images.folder / "house.pub"}"\n'
        f"allowed_firmware_hashes = [{allowed}]\n"
    )
    with simulated_table(
        folder, pairing_mode=True, device_lines=device_lines, inject=inject
    ) as table:
        done = shoectl("pair", str(table.pty.link), "--config", str(table.config_path), "--json")
        assert done.returncode == 0, done.stderr
        paired = json.loads(done.stdout)
        house = load_pem_public_key((images.folder / "house.pub").read_bytes())
        assert isinstance(house, Ed25519PublicKey)
        assert (paired["min_protocol"], paired["house_key_id"]) == ("1.3", public_key_id(house))
        yield table


@pytest.fixture
def table(tmp_path: Path, images: Images, shoectl: ShoectlRunner) -> Iterator[Table]:
    with paired_table(tmp_path, images, shoectl) as paired:
        yield paired


def update(shoectl: ShoectlRunner, table: Table, signed: Path) -> subprocess.CompletedProcess[str]:
    return shoectl(
        "firmware", "update", str(table.pty.link), str(signed), "--config", str(table.config_path)
    )


def running(shoectl: ShoectlRunner, table: Table) -> dict[str, object]:
    """What the device's HELLO says now, through shoectl info."""
    shown = shoectl("info", str(table.pty.link), "--config", str(table.config_path), "--json")
    assert shown.returncode == 0, shown.stderr
    record: dict[str, object] = json.loads(shown.stdout)
    return record


def attempts(table: Table) -> list[dict[str, object]]:
    with Journal.open_readonly(table.journal_path) as journal:
        return [record.payload for record in journal.records(kinds=[SOFTWARE_FIRMWARE_UPDATE])]


def test_a_good_image_switches_and_the_next_hello_shows_its_hash(
    table: Table, images: Images, shoectl: ShoectlRunner
) -> None:
    factory = running(shoectl, table)
    done = update(shoectl, table, images.path("good"))
    assert done.returncode == 0, done.stderr
    assert images.sha256("good") in done.stdout
    now = running(shoectl, table)
    assert now["firmware_hash"] == hashlib.sha256(NEW_IMAGE).hexdigest() != factory["firmware_hash"]
    assert now["firmware_version"] == "2"
    [journaled] = attempts(table)
    assert journaled["outcome"] == "installed"
    assert journaled["image_sha256"] == images.sha256("good")
    assert journaled["version"] == 2
    assert journaled["operator"]["uid"] == os.getuid()
    assert journaled["before"]["firmware_hash"] == factory["firmware_hash"]
    assert journaled["after"]["firmware_hash"] == now["firmware_hash"]


def tampered(images: Images) -> Path:
    """The good file with one image byte changed and its header's hash made to match: only
    the signature can tell."""
    signed = SignedImage.decode(images.path("good").read_bytes())
    altered = SignedImage(signed.version, b"X" + signed.image[1:], signed.key_id, signed.signature)
    path = images.folder / "tampered.signed"
    path.write_bytes(altered.encode())
    return path


@pytest.mark.parametrize(
    ("name", "refused_by"),
    [("tampered", "by the host"), ("stranger", "by the host"), ("older", "FIRMWARE_ROLLBACK")],
)
def test_a_tampered_image_a_wrong_key_and_a_downgrade_are_refused_and_journaled(
    table: Table, images: Images, shoectl: ShoectlRunner, name: str, refused_by: str
) -> None:
    factory = running(shoectl, table)
    signed = tampered(images) if name == "tampered" else images.path(name)
    done = update(shoectl, table, signed)
    assert done.returncode == 1, done.stderr
    assert len(done.stderr.splitlines()) == 1
    assert refused_by in done.stderr
    assert "still runs" in done.stderr
    now = running(shoectl, table)
    assert (now["firmware_hash"], now["firmware_version"]) == (
        factory["firmware_hash"],
        factory["firmware_version"],
    )
    [journaled] = attempts(table)
    assert journaled["outcome"] == "refused"
    assert journaled["image_sha256"] == SignedImage.decode(signed.read_bytes()).sha256.hex()
    assert journaled["version"] == SignedImage.decode(signed.read_bytes()).version
    assert journaled["operator"]["uid"] == os.getuid()


def test_a_transfer_cut_by_a_power_failure_leaves_the_old_firmware(
    tmp_path: Path, images: Images, shoectl: ShoectlRunner
) -> None:
    with paired_table(tmp_path, images, shoectl, "firmware-power-cut,for=2") as table:
        factory = running(shoectl, table)
        done = update(shoectl, table, images.path("good"))
        assert done.returncode == 3, done.stderr
        assert "did not finish" in done.stderr
        table.core.replug()
        now = running(shoectl, table)
        assert now["firmware_hash"] == factory["firmware_hash"]
        [journaled] = attempts(table)
        assert (journaled["outcome"], journaled["version"]) == ("failed", 2)
        assert journaled["image_sha256"] == images.sha256("good")
        done = update(shoectl, table, images.path("good"))
        assert done.returncode == 0, done.stderr
        assert running(shoectl, table)["firmware_hash"] == images.sha256("good")


def test_the_running_service_installs_an_image_given_by_control_while_no_shoe_is_open(
    table: Table, images: Images, shoectl: ShoectlRunner
) -> None:
    with running_service(table) as service:
        service.wait_for_notification("READY=1")
        held = update(shoectl, table, images.path("good"))
        assert held.returncode == 3, held.stderr
        assert "shoectl control firmware-update" in held.stderr
        assert len(held.stderr.splitlines()) == 1
        control = ("control", "firmware-update", "--config", str(table.config_path))
        refused = shoectl(*control, "--image", str(images.path("older")))
        assert refused.returncode == 1, refused.stderr
        assert "FIRMWARE_ROLLBACK" in refused.stderr
        done = shoectl(*control, "--image", str(images.path("good")), "--json")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["device"]["firmware_hash"] == images.sha256("good")
        open_manual_shoe(table, "S1")
        during = shoectl(*control, "--image", str(images.path("good")))
        assert during.returncode == 1, during.stderr
        assert "shoe S1 is open" in during.stderr
        assert service.stop() == 0
    assert [(a["outcome"], a["version"]) for a in attempts(table)] == [
        ("refused", 0),
        ("installed", 2),
        ("refused", 2),
    ]
    assert running(shoectl, table)["firmware_hash"] == images.sha256("good")


def test_a_file_that_is_not_a_signed_image_is_one_line_and_journaled(
    table: Table, images: Images, shoectl: ShoectlRunner
) -> None:
    garbage = images.folder / "garbage.signed"
    garbage.write_bytes(b"not firmware at all")
    done = update(shoectl, table, garbage)
    assert done.returncode == 1
    assert done.stderr.startswith("shoectl: error: ") and len(done.stderr.splitlines()) == 1
    assert "not a signed cardshoe firmware file" in done.stderr
    [journaled] = attempts(table)
    assert journaled["image_sha256"] == hashlib.sha256(b"not firmware at all").hexdigest()
    assert (journaled["outcome"], journaled["version"]) == ("refused", None)
    missing = update(shoectl, table, images.folder / "absent.signed")
    assert missing.returncode == 2 and len(missing.stderr.splitlines()) == 1


def test_only_a_technician_may_update_and_a_refusal_for_the_role_is_journaled(
    table: Table, images: Images, shoectl: ShoectlRunner
) -> None:
    factory = running(shoectl, table)
    me = pwd.getpwuid(os.getuid()).pw_name
    someone_else = "nobody" if me != "nobody" else "daemon"
    with table.config_path.open("a") as config:
        config.write(f'[roles]\ntechnician = ["{someone_else}"]\n')
    done = update(shoectl, table, images.path("good"))
    assert done.returncode == 3, done.stderr
    assert done.stderr.startswith(f"shoectl: error: firmware-update needs a technician: {me}")
    assert len(done.stderr.splitlines()) == 1
    assert running(shoectl, table)["firmware_hash"] == factory["firmware_hash"]
    [journaled] = attempts(table)
    assert (journaled["outcome"], journaled["version"]) == ("refused", 2)
    assert journaled["operator"] == {"uid": os.getuid(), "user": me, "role": "watcher"}
