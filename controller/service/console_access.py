"""The control socket's side of the table console: PIN sign-in, acting for a person, approvals.

Only the console's own user ([roles] console) signs people in, and it then
commands only with the token of a signed-in person (request key "console"):
the service, not the console, decides who that person is and what they may do.
A supervisor's command from the console also carries the supervisor's name and
PIN given at that moment (request key "supervisor"), whoever is signed in: the
journal then names both. Every PIN tried, and every sign-out, is journaled.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from cardshoe.controller.config import RolesConfig
from cardshoe.controller.errors import EXIT_DEVICE_UNAVAILABLE, UserError
from cardshoe.controller.journal.store import Journal
from cardshoe.controller.procedure.operator_commands import Role, least_role
from cardshoe.controller.record_kinds import SESSION_CONSOLE_PIN, SESSION_CONSOLE_SIGNED_OUT
from cardshoe.controller.service.console_desk import ConsoleDesk, PinCheck, PinOutcome
from cardshoe.controller.service.control_socket import Peer
from cardshoe.controller.service.pins import PinEntry, PinRole, read_pins
from cardshoe.controller.service.roles import Operator, is_console, user_name
from cardshoe.controller.service.session import TableSession

SIGN_IN = "console-sign-in"
SIGN_OUT = "console-sign-out"
TOKEN_KEY = "console"
"""The request key that carries a signed-in person's token."""
APPROVAL_KEY = "supervisor"
"""The request key that carries a supervisor's {"name", "pin"} for a supervisor's command."""
ROLE_OF: Mapping[PinRole, Role] = {PinRole.DEALER: Role.DEALER, PinRole.SUPERVISOR: Role.SUPERVISOR}
RECALLED_PIN_CHECKS = 200
"""The latest PIN checks a start-up counts again: far more than any lockout takes."""


class ConsoleAccess:
    """The console's sign-ins for one running service; safe from every connection thread."""

    def __init__(self, roles: RolesConfig, clock: Callable[[], float]) -> None:
        self._roles = roles
        self._clock = clock
        self._desk = ConsoleDesk(roles.console_idle_s, clock)
        self._lock = threading.Lock()

    def recall(self, journal: Journal, wall_ns: int) -> None:
        """Count again the PIN checks an earlier run journaled, each as long ago as the wall
        clock (now wall_ns) says it was: a restart of the service lifts no lockout."""
        checks = journal.latest([SESSION_CONSOLE_PIN], RECALLED_PIN_CHECKS)
        now = self._clock()
        with self._lock:
            for check in checks:
                at = now - (wall_ns - check.time_ns) / 1e9
                self._desk.recall(check.payload["name"], PinOutcome(check.payload["outcome"]), at)

    def sign_in(
        self, session: TableSession, peer: Peer | None, request: Mapping[str, Any]
    ) -> dict[str, str]:
        """Check the name and PIN; a dealer also takes the table, a supervisor witnesses it.
        Returns the person's name and role, and the token the console acts for them with."""
        console_user = self._console_user(peer)
        name, pin = _name_and_pin(request, SIGN_IN)
        with self._lock:
            check = self._desk.check_pin(self._people(), name, pin, SIGN_IN)
            session.record_console(SESSION_CONSOLE_PIN, {**check.payload(), "via": console_user})
            _raise_unless_accepted(check)
            assert check.role is not None
            operator = Operator(peer.uid if peer else 0, name, ROLE_OF[check.role], console_user)
            with session.acting_as(operator.as_json()):
                if check.role is PinRole.DEALER and session.dealer != name:
                    session.sign_in()
                elif check.role is PinRole.SUPERVISOR and session.supervisor != name:
                    session.supervisor_sign_in()
            token = self._desk.sign_in(name, check.role)
            return {"token": token, "name": name, "role": str(check.role)}

    def sign_out(self, session: TableSession, request: Mapping[str, Any]) -> None:
        token = request.get(TOKEN_KEY)
        with self._lock:
            person = self._desk.sign_out(token) if isinstance(token, str) else None
        if person is not None:
            session.record_console(
                SESSION_CONSOLE_SIGNED_OUT, {"name": person.name, "why": "sign-out"}
            )

    def expire(self, session: TableSession) -> None:
        """Sign out whoever has been idle too long; journaled."""
        with self._lock:
            self._expire_held(session)

    def acting(
        self, session: TableSession, peer: Peer | None, name: str, request: Mapping[str, Any]
    ) -> tuple[Operator | None, dict[str, Any]]:
        """For a console request: who gives the command (the signed-in person, or the
        supervisor approving it), and the request without the console's keys. A request
        without a token: (None, request), for the peer's own role to decide."""
        if TOKEN_KEY not in request:
            return None, dict(request)
        rest = {
            key: value for key, value in request.items() if key not in (TOKEN_KEY, APPROVAL_KEY)
        }
        console_user = self._console_user(peer)
        token = request[TOKEN_KEY]
        uid = peer.uid if peer else 0
        with self._lock:
            self._expire_held(session)
            person = self._desk.who(token if isinstance(token, str) else "")
            operator = Operator(uid, person.name, ROLE_OF[person.role], console_user)
            if least_role(name) < Role.SUPERVISOR:
                return operator, rest
            approval = request.get(APPROVAL_KEY)
            if approval is None:
                return operator, rest  # check_permitted refuses a dealer, journaled
            approver, pin = (
                _name_and_pin(approval, name) if isinstance(approval, dict) else ("", "")
            )
            if not approver:
                raise UserError(f'{name}: "supervisor" is {{"name": NAME, "pin": PIN}}')
            check = self._desk.check_pin(self._people(), approver, pin, name)
            session.record_console(
                SESSION_CONSOLE_PIN,
                {**check.payload(), "via": console_user, "signed_in": person.name},
            )
            _raise_unless_accepted(check)
            assert check.role is not None
            return Operator(uid, approver, ROLE_OF[check.role], console_user, person.name), rest

    def _expire_held(self, session: TableSession) -> None:
        """expire(), for a caller that holds the lock already."""
        for person in self._desk.expired():
            session.record_console(SESSION_CONSOLE_SIGNED_OUT, {"name": person.name, "why": "idle"})

    def _console_user(self, peer: Peer | None) -> str:
        """The console's own user name; refused for anyone else."""
        if not is_console(peer, self._roles):
            raise UserError(
                "only the table's console signs people in and acts for them: run shoectl "
                "console as the user [roles] console names",
                EXIT_DEVICE_UNAVAILABLE,
            )
        assert peer is not None
        return user_name(peer.uid)

    def _people(self) -> dict[str, PinEntry]:
        if self._roles.pins_file is None:
            raise UserError(
                "this table has no PINs: set [roles] pins_file in its configuration and add "
                "people with shoectl console pin set",
                EXIT_DEVICE_UNAVAILABLE,
            )
        return read_pins(self._roles.pins_file)


def _raise_unless_accepted(check: PinCheck) -> None:
    if check.outcome is not PinOutcome.ACCEPTED:
        raise check.refusal()


def _name_and_pin(request: Mapping[str, Any], command: str) -> tuple[str, str]:
    name, pin = request.get("name"), request.get("pin")
    if not isinstance(name, str) or not isinstance(pin, str) or not name or not pin:
        raise UserError(f"{command} needs a name and a PIN")
    return name.lower(), pin
