"""Who is signed in at the table's console, and whose PIN is locked after wrong tries.

The console's own user may only watch; it commands on behalf of a person, who
signs in with a PIN and is then known to the service by a random token that
the console holds. A PIN is checked here, and each outcome is a ConsoleEvent
for the journal: three wrong PINs in a row lock the name for a minute (a
locked name is refused even with the right PIN), and a person who presses
nothing for the table's console_idle_s is signed out, so a console left
signed in is not left open. Kept free of sockets and of the journal, with the
clock passed in, so every rule is tested with no waiting.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from cardshoe.controller.errors import EXIT_DEVICE_UNAVAILABLE, UserError
from cardshoe.controller.service.pins import PinEntry, PinRole

MAX_WRONG_PINS = 3
LOCK_S = 60.0


class PinOutcome(StrEnum):
    """What became of one PIN given at the console: each is journaled."""

    ACCEPTED = "accepted"
    WRONG = "wrong"
    UNKNOWN_NAME = "unknown_name"
    LOCKED = "locked"
    """Refused without looking at the PIN: the name is locked."""
    NOW_LOCKED = "now_locked"
    """This wrong PIN was the last allowed: the name is locked from now."""


@dataclass(frozen=True)
class PinCheck:
    """One PIN given for a name, for a purpose (sign-in, or a supervisor's approval)."""

    name: str
    outcome: PinOutcome
    purpose: str
    role: PinRole | None = None
    locked_for_s: float | None = None

    def payload(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "name": self.name,
            "outcome": str(self.outcome),
            "purpose": self.purpose,
        }
        if self.role is not None:
            record["role"] = str(self.role)
        if self.locked_for_s is not None:
            record["locked_for_s"] = round(self.locked_for_s, 1)
        return record

    def refusal(self) -> UserError:
        """The words a person at the console reads for a PIN that was not accepted."""
        if self.outcome in (PinOutcome.LOCKED, PinOutcome.NOW_LOCKED):
            seconds = math.ceil(self.locked_for_s or LOCK_S)
            return UserError(
                f"{self.name} is locked after {MAX_WRONG_PINS} wrong PINs: try again in "
                f"{seconds} s, or ask a supervisor",
                EXIT_DEVICE_UNAVAILABLE,
            )
        return UserError(
            f"wrong name or PIN for {self.name}: type them again "
            f"({MAX_WRONG_PINS} wrong PINs lock the name for {LOCK_S:g} s)",
            EXIT_DEVICE_UNAVAILABLE,
        )


@dataclass
class SignedIn:
    """A person signed in at the console."""

    name: str
    role: PinRole
    last_seen: float


@dataclass
class _Tries:
    wrong: int = 0
    locked_until: float | None = None


@dataclass
class ConsoleDesk:
    """The console's sign-ins and PIN lockouts; clock is monotonic seconds."""

    idle_s: float
    clock: Callable[[], float]
    _tries: dict[str, _Tries] = field(default_factory=dict)
    _signed_in: dict[str, SignedIn] = field(default_factory=dict)

    def check_pin(
        self, people: Mapping[str, PinEntry], name: str, pin: str, purpose: str
    ) -> PinCheck:
        """Check pin for name, counting wrong tries and locking the name after the last."""
        now = self.clock()
        tries = self._tries_at(name, now)
        if tries.locked_until is not None:
            return PinCheck(name, PinOutcome.LOCKED, purpose, None, tries.locked_until - now)
        entry = people.get(name)
        if entry is not None and entry.matches(pin):
            self._count(tries, PinOutcome.ACCEPTED, now)
            return PinCheck(name, PinOutcome.ACCEPTED, purpose, entry.role)
        if tries.wrong + 1 >= MAX_WRONG_PINS:
            self._count(tries, PinOutcome.NOW_LOCKED, now)
            return PinCheck(name, PinOutcome.NOW_LOCKED, purpose, None, LOCK_S)
        outcome = PinOutcome.WRONG if entry is not None else PinOutcome.UNKNOWN_NAME
        self._count(tries, outcome, now)
        return PinCheck(name, outcome, purpose)

    def recall(self, name: str, outcome: PinOutcome, at: float) -> None:
        """A PIN check an earlier run of the service journaled, at this clock's time `at`:
        counted as it was then, so that a restart lifts no lockout and clears no wrong PIN."""
        self._count(self._tries_at(name, at), outcome, at)

    def _tries_at(self, name: str, now: float) -> _Tries:
        """The name's tries as they stand at `now`: a lockout that has run out is over, and
        its wrong PINs with it."""
        tries = self._tries.setdefault(name, _Tries())
        if tries.locked_until is not None and now >= tries.locked_until:
            tries.wrong, tries.locked_until = 0, None
        return tries

    @staticmethod
    def _count(tries: _Tries, outcome: PinOutcome, at: float) -> None:
        """What one PIN check's outcome does to the name's tries."""
        if outcome is PinOutcome.ACCEPTED:
            tries.wrong = 0
        elif outcome is not PinOutcome.LOCKED:
            tries.wrong += 1
            if outcome is PinOutcome.NOW_LOCKED:
                tries.locked_until = at + LOCK_S

    def sign_in(self, name: str, role: PinRole) -> str:
        """A token for the person, who signs out any earlier sign-in of theirs."""
        for token, person in list(self._signed_in.items()):
            if person.name == name:
                del self._signed_in[token]
        token = secrets.token_urlsafe(24)
        self._signed_in[token] = SignedIn(name, role, self.clock())
        return token

    def sign_out(self, token: str) -> SignedIn | None:
        return self._signed_in.pop(token, None)

    def expired(self) -> list[SignedIn]:
        """Sign out everyone idle for idle_s; who they were, for the journal."""
        now = self.clock()
        gone = [
            token
            for token, person in self._signed_in.items()
            if now - person.last_seen >= self.idle_s
        ]
        return [self._signed_in.pop(token) for token in gone]

    def who(self, token: str) -> SignedIn:
        """The person behind a token, who has just pressed something; or why nobody is."""
        person = self._signed_in.get(token)
        if person is None:
            raise UserError(
                "nobody is signed in at the console (or the sign-in ended after "
                f"{self.idle_s:g} s idle): sign in with your name and PIN",
                EXIT_DEVICE_UNAVAILABLE,
            )
        person.last_seen = self.clock()
        return person
