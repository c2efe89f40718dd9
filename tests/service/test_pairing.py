"""Pairing keys on the host (service/pairing.py), and `shoectl pair` as a technician runs it."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.other_users import shoectl_unprivileged, unprivileged_uid
from support.shoectl import ShoectlRunner

from cardshoe.controller.service.pairing import (
    KeyFileError,
    KeyStore,
    read_key_file,
    staged_key_file,
)
from cardshoe.drivers.protocol.auth import LinkKey, key_id, new_pairing_key
from cardshoe.drivers.protocol.link_constants import AUTHENTICATED_FROM_1_1, PROTOCOL_MINOR
from cardshoe.firmware_sim.attach_pty import PtyAttachment, serve_pty
from cardshoe.firmware_sim.devices import create_device

SERIAL = "PAIR-SHOE-1"


def write_key(path: Path, key: bytes, mode: int = 0o600) -> Path:
    path.write_text(key.hex() + "\n", encoding="ascii")
    path.chmod(mode)
    return path


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o400, 0o440])
def test_a_key_file_readable_by_owner_and_group_only_is_used(tmp_path: Path, mode: int) -> None:
    key = new_pairing_key()
    write_key(tmp_path / f"{SERIAL}.key", key, mode)
    assert KeyStore(tmp_path).lookup(SERIAL) == LinkKey(key)


def test_no_key_file_means_no_key(tmp_path: Path) -> None:
    assert KeyStore(tmp_path).lookup(SERIAL) is None


@pytest.mark.parametrize("mode", [0o644, 0o660, 0o604, 0o602, 0o666])
def test_a_key_file_others_can_read_or_the_group_can_change_is_refused(
    tmp_path: Path, mode: int
) -> None:
    path = write_key(tmp_path / f"{SERIAL}.key", new_pairing_key(), mode)
    with pytest.raises(KeyFileError) as refused:
        KeyStore(tmp_path).lookup(SERIAL)
    message = str(refused.value)
    assert f"mode {mode:04o}" in message and f"chmod 600 {path}" in message
    assert refused.value.exit_code == 2


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
def test_a_key_file_another_user_owns_is_refused(tmp_path: Path) -> None:
    path = write_key(tmp_path / f"{SERIAL}.key", new_pairing_key())
    os.chown(path, 12345, -1)
    with pytest.raises(KeyFileError, match=f"belongs to user id 12345.*chown root {path}"):
        KeyStore(tmp_path).lookup(SERIAL)


@pytest.mark.parametrize("content", ["", "zz" * 32, "ab" * 31, "ab" * 33, "\xff"])
def test_a_key_file_without_a_key_is_refused(tmp_path: Path, content: str) -> None:
    path = tmp_path / "bad.key"
    path.write_text(content, encoding="latin-1")
    path.chmod(0o600)
    with pytest.raises(KeyFileError, match="does not hold a pairing key"):
        read_key_file(path)


def test_a_key_file_keeps_the_protocol_version_pinned_at_pairing(tmp_path: Path) -> None:
    key = LinkKey(new_pairing_key(), PROTOCOL_MINOR)
    path = tmp_path / "k.key"
    with staged_key_file(path, key) as commit:
        commit()
    floor = path.read_text(encoding="ascii").splitlines()[1]
    assert floor == f"minimum protocol 1.{PROTOCOL_MINOR}"
    assert read_key_file(path) == key


def test_a_key_file_written_before_versions_were_pinned_gets_the_first_paired_version(
    tmp_path: Path,
) -> None:
    key = new_pairing_key()
    path = write_key(tmp_path / "k.key", key)
    assert read_key_file(path) == LinkKey(key, AUTHENTICATED_FROM_1_1)


@pytest.mark.parametrize(
    "floor", ["minimum protocol 2.2", "minimum protocol 1.x", "max protocol 1.2", "1.2\n1.2"]
)
def test_a_key_file_with_a_garbled_version_line_is_refused(tmp_path: Path, floor: str) -> None:
    path = tmp_path / "k.key"
    path.write_text(f"{new_pairing_key().hex()}\n{floor}\n", encoding="ascii")
    path.chmod(0o600)
    with pytest.raises(KeyFileError, match=r"only one line 'minimum protocol 1\.N'"):
        read_key_file(path)


def test_a_folder_in_place_of_a_key_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / f"{SERIAL}.key").mkdir()
    with pytest.raises(KeyFileError, match="folder"):
        KeyStore(tmp_path).lookup(SERIAL)


@pytest.mark.parametrize("serial", ["../etc/passwd", "", ".hidden", "a/b", "x" * 40])
def test_a_serial_number_unfit_for_a_file_name_is_refused(tmp_path: Path, serial: str) -> None:
    with pytest.raises(KeyFileError, match="cannot name a key file"):
        KeyStore(tmp_path).path_for(serial)


def test_a_staged_key_replaces_the_file_only_on_commit(tmp_path: Path) -> None:
    old = LinkKey(new_pairing_key())
    path = write_key(tmp_path / "k.key", old.secret)
    new = LinkKey(new_pairing_key(), PROTOCOL_MINOR)
    with staged_key_file(path, new):
        pass
    assert read_key_file(path) == old
    with pytest.raises(RuntimeError), staged_key_file(path, new) as commit:
        raise RuntimeError("the device refused")
    assert read_key_file(path) == old
    with staged_key_file(path, new) as commit:
        commit()
    assert read_key_file(path) == new
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert [item.name for item in tmp_path.iterdir()] == ["k.key"]


def test_a_new_key_takes_its_folders_group_and_a_new_folder_its_parents(tmp_path: Path) -> None:
    group = 4321 if os.geteuid() == 0 else os.getegid()
    os.chown(tmp_path, -1, group)
    path = tmp_path / "made" / "k.key"
    with staged_key_file(path, LinkKey(new_pairing_key())) as commit:
        commit()
    assert stat.S_IMODE(path.parent.stat().st_mode) & 0o007 == 0
    assert path.parent.stat().st_gid == path.stat().st_gid == group
    assert read_key_file(path)


# --- shoectl pair, through the real CLI, against a simulated shoe on a real pty -------------


@pytest.fixture
def shoe_in_pairing_mode() -> Iterator[PtyAttachment]:
    with serve_pty(create_device("cs-1", serial_number=SERIAL, pairing_mode=True)) as pty:
        yield pty


def one_line(result: object) -> str:
    (line,) = result.stderr.splitlines()  # type: ignore[attr-defined]
    assert line.startswith("shoectl: error: ")
    return line


def test_pair_keys_the_device_and_the_store_and_the_link_then_authenticates(
    tmp_path: Path, shoectl: ShoectlRunner, shoe_in_pairing_mode: PtyAttachment
) -> None:
    key_file = tmp_path / "keys" / "shoe.key"
    url = str(shoe_in_pairing_mode.link)
    result = shoectl("pair", url, "--key-file", str(key_file), "--json")
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    device_key = shoe_in_pairing_mode.core.link.pairing_key
    assert device_key is not None
    assert read_key_file(key_file) == LinkKey(device_key, PROTOCOL_MINOR)
    assert record == {
        "serial_number": SERIAL,
        "key_file": str(key_file),
        "key_id": key_id(device_key),
        "authenticated": True,
        "min_protocol": f"1.{PROTOCOL_MINOR}",
    }
    assert device_key.hex() not in result.stdout + result.stderr
    assert stat.S_IMODE(key_file.stat().st_mode) & 0o027 == 0
    assert not shoe_in_pairing_mode.core.link.pairing_mode


def test_pair_puts_the_key_in_the_configured_key_dir_where_info_finds_it(
    tmp_path: Path, shoectl: ShoectlRunner, shoe_in_pairing_mode: PtyAttachment
) -> None:
    config = tmp_path / "table.toml"
    config.write_text('[service]\nkey_dir = "keys"\n', encoding="utf-8")
    url = str(shoe_in_pairing_mode.link)
    paired = shoectl("pair", url, "--config", str(config))
    assert paired.returncode == 0, paired.stderr
    assert paired.stdout.startswith(f"paired {SERIAL}: key ")
    assert (tmp_path / "keys" / f"{SERIAL}.key").is_file()
    info = shoectl("info", url, "--config", str(config), "--json")
    assert info.returncode == 0, info.stderr
    assert json.loads(info.stdout)["authenticated"] is True
    unauthenticated = shoectl("info", url)
    assert unauthenticated.returncode == 3
    assert "is paired, so it serves only an authenticated host" in one_line(unauthenticated)


def test_pair_without_the_switch_is_exit_3_and_leaves_no_key_file(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    key_file = tmp_path / "shoe.key"
    with serve_pty(create_device("cs-1", serial_number=SERIAL)) as pty:
        result = shoectl("pair", str(pty.link), "--key-file", str(key_file))
        assert pty.core.link.pairing_key is None
    assert result.returncode == 3
    assert "not in pairing mode" in one_line(result) and "--pairing-mode" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_info_with_a_key_the_device_does_not_hold_is_exit_3(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    (tmp_path / "keys").mkdir()
    write_key(tmp_path / "keys" / f"{SERIAL}.key", new_pairing_key())
    config = tmp_path / "table.toml"
    config.write_text('[service]\nkey_dir = "keys"\n', encoding="utf-8")
    core = create_device("cs-1", serial_number=SERIAL, pairing_key=new_pairing_key())
    with serve_pty(core) as pty:
        result = shoectl("info", str(pty.link), "--config", str(config))
    assert result.returncode == 3
    assert "did not prove it holds" in one_line(result)


def test_info_with_a_world_readable_key_file_is_one_line_naming_the_fix(
    tmp_path: Path, shoectl: ShoectlRunner
) -> None:
    (tmp_path / "keys").mkdir()
    key_file = write_key(tmp_path / "keys" / f"{SERIAL}.key", new_pairing_key(), 0o644)
    config = tmp_path / "table.toml"
    config.write_text('[service]\nkey_dir = "keys"\n', encoding="utf-8")
    core = create_device("cs-1", serial_number=SERIAL, pairing_key=new_pairing_key())
    with serve_pty(core) as pty:
        result = shoectl("info", str(pty.link), "--config", str(config))
    assert result.returncode == 2
    assert f"chmod 600 {key_file}" in one_line(result)


def test_pair_help_says_how_to_turn_pairing_mode_on(shoectl: ShoectlRunner) -> None:
    result = shoectl("pair", "--help")
    assert result.returncode == 0
    assert "--pairing-mode" in result.stdout and "--key-file" in result.stdout


def test_pair_into_a_folder_this_user_may_not_write_is_exit_3(
    shared_folder: Path, shoe_in_pairing_mode: PtyAttachment
) -> None:
    """Run by a user the kernel holds to the folder's mode: nobody, when the suite runs as root
    (the shoe's pty opened to it as udev's group opens a real port to the service user)."""
    shoe_in_pairing_mode.link.parent.chmod(0o755)
    os.chmod(shoe_in_pairing_mode.path, 0o666)
    locked = shared_folder / "locked"
    locked.mkdir(mode=0o500)
    os.chown(locked, unprivileged_uid(), -1)
    done = shoectl_unprivileged(
        "pair", str(shoe_in_pairing_mode.link), "--key-file", str(locked / "k.key")
    )
    assert done.returncode == 3, done.stderr
    assert one_line(done) == (
        f"shoectl: error: not permitted to write a key file in {locked}: run as root, "
        "or give --key-file in a folder you own"
    )
    assert list(locked.iterdir()) == []
    assert shoe_in_pairing_mode.core.link.pairing_mode  # the device keeps no key either
