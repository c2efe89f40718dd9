"""One service per control socket path: the claim a service holds while it serves.

A lock file beside the socket, held with flock for the life of the service,
tells a live service from a stale socket file left by a killed one, which is
then replaced; the kernel drops the lock when the process dies, so a kill
leaves nothing to clean up by hand. Separate from control_socket.py, which
serves and asks the socket, because taking the path is done once at start-up
and has its own failures (a missing or shared folder, another live service).
"""

from __future__ import annotations

import fcntl
import os
import socket
import stat
from dataclasses import dataclass
from pathlib import Path

from cardshoe.controller.errors import EXIT_BAD_INPUT, EXIT_DEVICE_UNAVAILABLE, UserError
from cardshoe.controller.own_files import check_private_folder, open_own_file

EXIT_NO_SERVICE = EXIT_DEVICE_UNAVAILABLE
"""No service, or not permitted to reach it: like an absent device, exit 3."""
PROBE_TIMEOUT_S = 5.0
"""How long the check of a socket file left behind waits for a live service to answer."""


def lock_path_for(socket_path: Path) -> Path:
    return socket_path.with_name(socket_path.name + ".lock")


@dataclass
class SocketClaim:
    """This process's right to serve at a socket path: an flock the kernel drops on death."""

    path: Path
    lock_fd: int

    def release(self) -> None:
        os.close(self.lock_fd)


def claim_socket_path(path: Path) -> SocketClaim:
    """Take the socket path for this process, or refuse (exit 3) when a live service has it.

    The folder must be the service's alone and the lock file is never opened through a
    link (own_files.py), so nobody can make the service write its pid into another file.

    The lock file stays in place when the service ends: removing it would
    let two later services lock two different files under the same name.
    """
    if not path.parent.is_dir():
        raise UserError(
            f"cannot serve the control socket {path}: no folder {path.parent} "
            "(systemd's RuntimeDirectory= makes it): create it or set service.control_socket",
            EXIT_NO_SERVICE,
        )
    if not os.access(path.parent, os.W_OK | os.X_OK):
        raise UserError(
            f"cannot serve the control socket {path}: the service user may not write "
            f"{path.parent}: make it writable for that user or set service.control_socket",
            EXIT_NO_SERVICE,
        )
    check_private_folder(path.parent, "set service.control_socket in a folder of its own")
    lock_path = lock_path_for(path)
    try:
        lock_fd = open_own_file(lock_path)
    except PermissionError:
        raise UserError(
            f"not permitted to create {lock_path}: run as the service user or set "
            "service.control_socket",
            EXIT_NO_SERVICE,
        ) from None
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(lock_fd, 32, 0).decode(errors="replace").strip()
        os.close(lock_fd)
        raise UserError(
            f"another shoectl run (pid {holder or 'unknown'}) serves {path}: "
            "stop it first (systemctl stop cardshoe)",
            EXIT_NO_SERVICE,
        ) from None
    claim = SocketClaim(path, lock_fd)
    try:
        _remove_stale_socket(path)
        os.ftruncate(lock_fd, 0)
        os.pwrite(lock_fd, f"{os.getpid()}\n".encode(), 0)
    except BaseException:
        claim.release()
        raise
    return claim


def _remove_stale_socket(path: Path) -> None:
    """Remove the socket a killed service left; never a live one, never another file.

    A live server without the lock (its lock file deleted under it) still
    answers, so it keeps its socket.
    """
    try:
        if not stat.S_ISSOCK(path.lstat().st_mode):
            raise UserError(
                f"service.control_socket {path} is an existing file, not a socket: "
                "choose another path",
                EXIT_BAD_INPUT,
            )
    except FileNotFoundError:
        return
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(PROBE_TIMEOUT_S)
        try:
            probe.connect(str(path))
        except OSError:
            path.unlink(missing_ok=True)
            return
    raise UserError(
        f"a service already answers on {path} although {lock_path_for(path)} is free: "
        "stop that service first",
        EXIT_NO_SERVICE,
    )
