"""Who may give which command: the control socket's peer uid, mapped to a role.

The kernel tells the service the uid of every control-socket client
(SO_PEERCRED, control_socket.current_peer); the table's [roles] section maps
user names and @groups to roles. A person's highest role counts. Which role
a command needs is its row's in procedure/operator_commands.py: watching
needs none, dealing a dealer, and what overrides the procedure's own checks
(voids, security holds, re-synchronisation, abandoning a shoe) a supervisor.
"""

from __future__ import annotations

import grp
import os
import pwd
from dataclasses import dataclass

from cardshoe.controller.config import RolesConfig
from cardshoe.controller.errors import EXIT_DEVICE_UNAVAILABLE, UserError
from cardshoe.controller.procedure.operator_commands import Role, least_role
from cardshoe.controller.service.control_socket import Peer


@dataclass(frozen=True)
class Operator:
    """A person at the control socket, as the journal records them."""

    uid: int
    user: str
    role: Role
    via: str | None = None
    """The console's own user, when the person signed in at the console with a PIN."""
    signed_in: str | None = None
    """The person signed in at the console, when another (a supervisor) approved the
    command with their PIN there: dual control, both names journaled."""

    def as_json(self) -> dict[str, object]:
        record: dict[str, object] = {"uid": self.uid, "user": self.user, "role": str(self.role)}
        if self.via is not None:
            record["via"] = self.via
        if self.signed_in is not None:
            record["signed_in"] = self.signed_in
        return record


def operator_of(peer: Peer | None, roles: RolesConfig) -> Operator:
    """The peer's user name and highest role; with no [roles] section, every role."""
    if peer is None:
        return Operator(os.getuid(), user_name(os.getuid()), Role.TECHNICIAN)
    user = user_name(peer.uid)
    if not roles.configured:
        return Operator(peer.uid, user, Role.TECHNICIAN)
    groups = _group_names(user, peer.gid)
    held = [Role.WATCHER]
    for role, names in (
        (Role.DEALER, roles.dealer),
        (Role.SUPERVISOR, roles.supervisor),
        (Role.TECHNICIAN, roles.technician),
    ):
        if _named(names, user, groups):
            held.append(role)
    return Operator(peer.uid, user, max(held))


def is_console(peer: Peer | None, roles: RolesConfig) -> bool:
    """Whether the peer is the table console's own user ([roles] console)."""
    if peer is None:
        return False
    user = user_name(peer.uid)
    return _named(roles.console, user, _group_names(user, peer.gid))


def _named(names: tuple[str, ...], user: str, groups: set[str]) -> bool:
    return any(name == user or (name.startswith("@") and name[1:] in groups) for name in names)


def check_permitted(command: str, operator: Operator) -> None:
    needed = least_role(command)
    if operator.role < needed and operator.via is not None:
        raise UserError(
            f"{command} needs a {needed}: {operator.user} is a {operator.role} at this table; "
            f"ask a {needed} to approve it with their name and PIN",
            EXIT_DEVICE_UNAVAILABLE,
        )
    if operator.role < needed:
        raise UserError(
            f"{command} needs a {needed}: {operator.user} (uid {operator.uid}) is a "
            f"{operator.role} at this table; ask a {needed}, or have [roles] in the table's "
            "configuration name you",
            EXIT_DEVICE_UNAVAILABLE,
        )


def user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid-{uid}"


def _group_names(user: str, gid: int) -> set[str]:
    try:
        ids = os.getgrouplist(user, gid)
    except OSError:
        ids = [gid]
    names = set()
    for group_id in ids:
        try:
            names.add(grp.getgrgid(group_id).gr_name)
        except KeyError:
            continue
    return names
