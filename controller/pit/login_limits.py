"""Failed logins to the pit, counted per user and per client, and the lockouts they earn.

A password guessed online is guessed one login at a time: after `failures`
wrong passwords for one user (or `client_failures` from one client address,
whatever the users tried) within `window_s`, further logins are refused for
`lockout_s` without checking the password, so a guesser gets a handful of
tries per lockout, and the scrypt the pit spends per try is spent at most
that often. An attempt counts as a failure from the moment it is admitted
until it succeeds, so a burst of parallel guesses is held to the same limit.

The counts live in the pit's memory, and a starting pit counts again the
logins its audit table kept from the last window and lockout (recall), so a
restart lifts no lockout and clears no failure. Behind a proxy every client
has the proxy's address, unless uvicorn trusts its X-Forwarded-For
(docs/pit.md).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum

MAX_TRACKED = 10_000
"""Users and clients kept at most; those whose failures have all aged out go first."""
IN_FLIGHT_WAIT_S = 1.0
"""Wait asked of a login refused because earlier attempts are still being checked."""


@dataclass(frozen=True)
class LoginLimits:
    failures: int = 5
    """Wrong passwords for one user within window_s before the user is locked."""
    client_failures: int = 20
    """Failed logins from one client address within window_s before it is locked."""
    window_s: float = 900.0
    lockout_s: float = 300.0


class Counted(StrEnum):
    USER = "user"
    CLIENT = "client"


@dataclass
class _Tally:
    failures: deque[float] = field(default_factory=deque)
    locked_until: float = 0.0


@dataclass(frozen=True)
class Admitted:
    """A login let through to its password check; settle() it with the outcome."""

    user: str
    client: str
    at: float


@dataclass(frozen=True)
class PastLogin:
    """A login the audit kept: how long ago, by whom, from where, and whether it succeeded."""

    age_s: float
    user: str
    client: str
    succeeded: bool


@dataclass(frozen=True)
class Refused:
    counted: Counted
    name: str
    retry_after_s: float

    def message(self) -> str:
        return (
            f"too many failed logins for {self.counted.value} {self.name!r}: "
            f"try again in {self.retry_after_s:.0f} s"
        )


@dataclass(frozen=True)
class Lockout:
    """A lockout that has just begun: the pit audits it."""

    counted: Counted
    name: str
    failures: int
    limits: LoginLimits

    def detail(self, client: str) -> str:
        return (
            f"{self.counted.value} {self.name} locked for {self.limits.lockout_s:.0f} s after "
            f"{self.failures} failed logins in {self.limits.window_s:.0f} s (last from {client})"
        )


class LoginThrottle:
    """The pit's count of failed logins; used from its event loop only, so it takes no lock."""

    def __init__(self, limits: LoginLimits, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self._clock = clock
        self._tallies: dict[tuple[Counted, str], _Tally] = {}

    def admit(self, user: str, client: str) -> Admitted | Refused:
        """Let a login through to its password check, or refuse it with the wait."""
        return self._admit(user, client, self._clock())

    def settle(self, admitted: Admitted, succeeded: bool) -> list[Lockout]:
        """The login's outcome: a success clears the user's failures and takes back the
        client's count of it; a failure stays counted. The lockouts it began, if any."""
        return self._settle(admitted, succeeded, self._clock())

    def recall(self, logins: Iterable[PastLogin]) -> None:
        """Count again logins made before this throttle began (oldest first), each at its own
        time on this throttle's clock: the failures and lockouts they earned hold as if this
        process had seen them. Their lockouts were audited when they began."""
        now = self._clock()
        for login in logins:
            at = now - login.age_s
            admitted = self._admit(login.user, login.client, at)
            if isinstance(admitted, Admitted):
                self._settle(admitted, login.succeeded, at)

    def _admit(self, user: str, client: str, now: float) -> Admitted | Refused:
        for counted, name in ((Counted.USER, user), (Counted.CLIENT, client)):
            tally = self._tallies.get((counted, name))
            if tally is None:
                continue
            if tally.locked_until > now:
                return Refused(counted, name, max(1.0, tally.locked_until - now))
            self._age(tally, now)
            if len(tally.failures) >= self._limit(counted):
                return Refused(counted, name, IN_FLIGHT_WAIT_S)
        self._forget_idle(now)
        for key in ((Counted.USER, user), (Counted.CLIENT, client)):
            self._tallies.setdefault(key, _Tally()).failures.append(now)
        return Admitted(user, client, now)

    def _settle(self, admitted: Admitted, succeeded: bool, now: float) -> list[Lockout]:
        user_key, client_key = (Counted.USER, admitted.user), (Counted.CLIENT, admitted.client)
        if succeeded:
            self._tallies.pop(user_key, None)
            client = self._tallies.get(client_key)
            if client is not None and admitted.at in client.failures:
                client.failures.remove(admitted.at)
            return []
        begun = []
        for counted, name in (user_key, client_key):
            tally = self._tallies.setdefault((counted, name), _Tally())
            self._age(tally, now)
            if len(tally.failures) >= self._limit(counted) and tally.locked_until <= now:
                tally.locked_until = now + self.limits.lockout_s
                begun.append(Lockout(counted, name, len(tally.failures), self.limits))
                tally.failures.clear()
        return begun

    def _limit(self, counted: Counted) -> int:
        return self.limits.failures if counted is Counted.USER else self.limits.client_failures

    def _age(self, tally: _Tally, now: float) -> None:
        while tally.failures and tally.failures[0] <= now - self.limits.window_s:
            tally.failures.popleft()

    def _forget_idle(self, now: float) -> None:
        """Bound the memory a flood of made-up user names can take."""
        if len(self._tallies) < MAX_TRACKED:
            return
        for key, tally in list(self._tallies.items()):
            self._age(tally, now)
            if not tally.failures and tally.locked_until <= now:
                del self._tallies[key]
