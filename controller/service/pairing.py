"""The host's pairing keys: one file per device, that only the service may read.

A key file holds one device's 32-byte pairing key as 64 hex digits and a
newline, then the protocol version the device was paired at, its floor:
"minimum protocol 1.2" and a newline. The version travels in clear, so the
floor is what stops a relay from talking a paired link down to a minor that
binds less (docs/protocol.md, "Pinning the version"); a key file written
before floors were pinned has no such line and gets the floor 1.1, the
first minor with pairing. It is named after the device's serial number:
<key_dir>/<serial>.key (service.key_dir, /etc/cardshoe/keys by default).

Whoever can read a key file can pose as the device, and whoever can change
it can pair the table with a device of their own, so a key file is refused,
with a one-line error that names the fix, when its group may write it, when
others may read or write it, or when it belongs to anyone but root or the
user reading it. Mode 0600, or 0640 root:cardshoe for a service running in
group cardshoe, passes.

A new key is written beside its final name, synced, and moved into place
only once the device has accepted it (staged_key_file), so a failed pairing
never leaves the host with a key the device does not hold. It gets mode
0640 and the group of its folder, and a new folder the group of the one
above it: under /etc/cardshoe (root:cardshoe, see udev/systemd) the service
can read the keys and nobody else can.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from cardshoe.controller.errors import EXIT_BAD_INPUT, EXIT_DEVICE_UNAVAILABLE, UserError
from cardshoe.drivers.protocol.auth import LinkKey
from cardshoe.drivers.protocol.link_constants import PROTOCOL_MAJOR
from cardshoe.drivers.protocol.messages import PAIRING_KEY_SIZE

KEY_SUFFIX = ".key"
FORBIDDEN_MODE_BITS = stat.S_IWGRP | stat.S_IRWXO
"""Group write, and anything for others: the bits a key file must not have."""
KEY_FILE_MODE = 0o640
KEY_DIR_MODE = 0o750
_SERIAL_FOR_FILE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$")
_MAX_KEY_FILE_BYTES = 256
_FLOOR_LINE = re.compile(rf"^minimum protocol {PROTOCOL_MAJOR}\.(\d{{1,3}})$")


class KeyFileError(UserError):
    """A key file that cannot be used; the message names the file and the fix."""


@dataclass(frozen=True)
class KeyStore:
    """The folder of key files; lookup is what open_device(keys=...) calls."""

    directory: Path

    def path_for(self, serial_number: str) -> Path:
        """The key file of a device; a serial number unfit for a file name is refused."""
        if not _SERIAL_FOR_FILE.match(serial_number):
            raise KeyFileError(
                f"serial number {serial_number!r} cannot name a key file: give --key-file",
                EXIT_BAD_INPUT,
            )
        return self.directory / f"{serial_number}{KEY_SUFFIX}"

    def lookup(self, serial_number: str) -> LinkKey | None:
        """The link key for this serial number, or None when there is no key file."""
        path = self.path_for(serial_number)
        try:
            return read_key_file(path)
        except FileNotFoundError:
            return None


def read_key_file(path: Path) -> LinkKey:
    """The key and floor in a key file; FileNotFoundError if absent, KeyFileError if unusable."""
    try:
        stream = path.open("rb")
    except PermissionError:
        raise KeyFileError(
            f"{path}: not permitted to read it: run as root, or as a member of the group "
            "that owns it",
            EXIT_DEVICE_UNAVAILABLE,
        ) from None
    except IsADirectoryError:
        raise KeyFileError(f"{path} is a folder, not a key file", EXIT_BAD_INPUT) from None
    with stream:
        _check_protection(path, os.fstat(stream.fileno()))
        text = stream.read(_MAX_KEY_FILE_BYTES)
    try:
        key_line, *floor_lines = text.decode("ascii").strip().splitlines()
        key = bytes.fromhex(key_line)
    except (UnicodeDecodeError, ValueError):
        key, floor_lines = b"", []
    if len(key) != PAIRING_KEY_SIZE:
        raise KeyFileError(
            f"{path} does not hold a pairing key ({2 * PAIRING_KEY_SIZE} hex digits): "
            "pair the device again with `shoectl pair`",
            EXIT_BAD_INPUT,
        )
    if not floor_lines:
        return LinkKey(key)
    floor = _FLOOR_LINE.match(floor_lines[0].strip())
    if floor is None or len(floor_lines) > 1:
        raise KeyFileError(
            f"{path}: after the key, only one line 'minimum protocol {PROTOCOL_MAJOR}.N' "
            "may follow: pair the device again with `shoectl pair`",
            EXIT_BAD_INPUT,
        )
    return LinkKey(key, int(floor.group(1)))


def key_file_text(key: LinkKey) -> str:
    """What a key file holds: the key, then the protocol version pinned as its floor."""
    return f"{key.secret.hex()}\nminimum protocol {PROTOCOL_MAJOR}.{key.min_minor}\n"


def _check_protection(path: Path, status: os.stat_result) -> None:
    if not stat.S_ISREG(status.st_mode):
        raise KeyFileError(f"{path} is not a regular file", EXIT_BAD_INPUT)
    mode = stat.S_IMODE(status.st_mode)
    if mode & FORBIDDEN_MODE_BITS:
        raise KeyFileError(
            f"{path} has mode {mode:04o}, so others can read it or the group can change it: "
            f"run chmod 600 {path} (or 640 with group cardshoe)",
            EXIT_BAD_INPUT,
        )
    if status.st_uid not in (0, os.geteuid()):
        raise KeyFileError(
            f"{path} belongs to user id {status.st_uid}, neither root nor this user: "
            f"run chown root {path}",
            EXIT_BAD_INPUT,
        )


@contextlib.contextmanager
def staged_key_file(path: Path, key: LinkKey) -> Iterator[Callable[[], None]]:
    """Write the key and its floor beside path (synced); the yielded commit moves it into place.

    If the block raises, or ends without calling commit, the staged file is
    removed and whatever key file was there before stays as it was.
    """
    folder = path.parent
    staged = path.with_name(f".{path.name}.{os.getpid()}.new")
    try:
        if not folder.is_dir():
            folder.mkdir(mode=KEY_DIR_MODE, parents=True)
            os.chown(folder, -1, folder.parent.stat().st_gid)
        descriptor = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_EXCL, KEY_FILE_MODE)
        os.fchown(descriptor, -1, folder.stat().st_gid)
    except PermissionError:
        raise KeyFileError(
            f"not permitted to write a key file in {path.parent}: run as root, or give "
            "--key-file in a folder you own",
            EXIT_DEVICE_UNAVAILABLE,
        ) from None
    except OSError as exc:
        raise KeyFileError(
            f"cannot write a key file in {path.parent}: {exc.strerror or exc}",
            EXIT_BAD_INPUT,
        ) from None
    committed = False

    def commit() -> None:
        nonlocal committed
        os.replace(staged, path)
        committed = True
        _sync_folder(path.parent)

    try:
        with os.fdopen(descriptor, "w", encoding="ascii") as stream:
            stream.write(key_file_text(key))
            stream.flush()
            os.fsync(stream.fileno())
        yield commit
    finally:
        if not committed:
            staged.unlink(missing_ok=True)


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable, so a power cut cannot lose a key the device holds."""
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
