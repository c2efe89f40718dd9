"""shoectl firmware keygen, sign and verify: the house's Ed25519 signature over an image's
version and hash, checked here from docs/security.md's format with cryptography alone."""

from __future__ import annotations

import hashlib
import json
import stat
import struct
from collections.abc import Callable
from pathlib import Path

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import load_pem_public_key
from support.shoectl import ShoectlRunner

MAGIC = b"CARDSHOE-FIRMWARE-1\n"
DOMAIN = b"cardshoe-firmware-v1\0"
IMAGE = bytes(range(256)) * 40


@pytest.fixture
def signed(tmp_path: Path, shoectl: ShoectlRunner) -> Path:
    made = shoectl("firmware", "keygen", "--out", str(tmp_path / "house"))
    assert made.returncode == 0, made.stderr
    image = tmp_path / "fw.bin"
    image.write_bytes(IMAGE)
    done = shoectl(
        "firmware", "sign", str(image), "--key", str(tmp_path / "house.key"), "--version", "7"
    )
    assert done.returncode == 0, done.stderr
    return tmp_path / "fw.bin.signed"


def parts(path: Path) -> tuple[dict[str, object], bytes]:
    data = path.read_bytes()
    assert data.startswith(MAGIC)
    line, _, image = data[len(MAGIC) :].partition(b"\n")
    return json.loads(line), image


def test_a_signed_image_is_the_house_keys_signature_over_its_version_and_hash(
    tmp_path: Path, signed: Path, shoectl: ShoectlRunner
) -> None:
    assert stat.S_IMODE((tmp_path / "house.key").stat().st_mode) == 0o600
    header, image = parts(signed)
    digest = hashlib.sha256(IMAGE).digest()
    assert image == IMAGE
    assert header["version"] == 7 and header["size"] == len(IMAGE)
    assert header["sha256"] == digest.hex()
    public = load_pem_public_key((tmp_path / "house.pub").read_bytes())
    assert isinstance(public, Ed25519PublicKey)
    signature = bytes.fromhex(str(header["signature"]))
    public.verify(signature, DOMAIN + struct.pack(">I", 7) + digest)
    with pytest.raises(InvalidSignature):
        public.verify(signature, DOMAIN + struct.pack(">I", 8) + digest)
    checked = shoectl(
        "firmware", "verify", str(signed), "--public-key", str(tmp_path / "house.pub")
    )
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout.strip() == (
        f"{signed}: ok, version 7, sha256 {digest.hex()}, key {header['key_id']}"
    )


def _relabelled(path: Path) -> None:
    header, image = parts(path)
    header["version"] = 99
    path.write_bytes(MAGIC + json.dumps(header).encode() + b"\n" + image)


def _tampered(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x01
    path.write_bytes(bytes(data))


def _cut(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:-100])


def _header_nested_deep(path: Path) -> None:
    """A header json.loads meets with RecursionError, not a JSONDecodeError."""
    _, image = parts(path)
    path.write_bytes(MAGIC + b"[" * 5000 + b"]" * 5000 + b"\n" + image)


def _header_number_too_long(path: Path) -> None:
    """A header json.loads refuses with a bare ValueError (Python's digit limit)."""
    _, image = parts(path)
    path.write_bytes(MAGIC + b'{"version": ' + b"7" * 5000 + b"}\n" + image)


@pytest.mark.parametrize(
    ("change", "complaint"),
    [
        (_tampered, "the image differs from its header"),
        (_cut, "the image differs from its header"),
        (_relabelled, "the signature is not the house key's"),
        (_header_nested_deep, "the signed file's header is not one JSON line"),
        (_header_number_too_long, "the signed file's header is not one JSON line"),
    ],
)
def test_an_altered_image_or_version_fails_the_check(
    tmp_path: Path,
    signed: Path,
    shoectl: ShoectlRunner,
    change: Callable[[Path], None],
    complaint: str,
) -> None:
    change(signed)
    refused = shoectl(
        "firmware", "verify", str(signed), "--public-key", str(tmp_path / "house.pub")
    )
    assert refused.returncode == 1
    assert len(refused.stderr.splitlines()) == 1 and complaint in refused.stderr


def test_another_key_and_an_unlisted_hash_fail_the_check(
    tmp_path: Path, signed: Path, shoectl: ShoectlRunner
) -> None:
    assert shoectl("firmware", "keygen", "--out", str(tmp_path / "thief")).returncode == 0
    other = shoectl("firmware", "verify", str(signed), "--public-key", str(tmp_path / "thief.pub"))
    assert other.returncode == 1 and "is not the house key's" in other.stderr
    digest = hashlib.sha256(IMAGE).hexdigest()
    table = tmp_path / "table.toml"
    for listed, code in (("0" * 64, 1), (digest, 0)):
        table.write_text(
            'table_id = "T1"\n[game]\nname = "punto-banco"\n'
            f'[device]\nallowed_firmware_hashes = ["{listed}"]\n'
        )
        checked = shoectl(
            "firmware",
            "verify",
            str(signed),
            "--public-key",
            str(tmp_path / "house.pub"),
            "--config",
            str(table),
        )
        assert checked.returncode == code, checked.stderr
        if code:
            assert "device.allowed_firmware_hashes" in checked.stderr


@pytest.mark.parametrize(
    ("arguments", "complaint"),
    [
        (("keygen", "--out", "DIR/house"), "exists"),
        (("sign", "DIR/fw.bin", "--key", "DIR/house.pub", "--version", "1"), "not an Ed25519"),
        (("sign", "DIR/none.bin", "--key", "DIR/house.key", "--version", "1"), "cannot read"),
        (("verify", "DIR/fw.bin.signed", "--public-key", "DIR/house.key"), "not an Ed25519"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path,
    signed: Path,
    shoectl: ShoectlRunner,
    arguments: tuple[str, ...],
    complaint: str,
) -> None:
    refused = shoectl("firmware", *(word.replace("DIR", str(tmp_path)) for word in arguments))
    assert refused.returncode == 2
    assert len(refused.stderr.splitlines()) == 1 and complaint in refused.stderr
