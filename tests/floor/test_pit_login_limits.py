"""The pit's count of failed logins (controller/pit/login_limits.py) on a clock the test moves.

The HTTP side (429, Retry-After, the audit rows) is test_pit_api's; here the
windows and lockouts run out without waiting for them.
"""

from __future__ import annotations

import pytest

from cardshoe.controller.pit.login_limits import (
    IN_FLIGHT_WAIT_S,
    Admitted,
    Counted,
    LoginLimits,
    LoginThrottle,
    PastLogin,
    Refused,
)

LIMITS = LoginLimits(failures=3, client_failures=5, window_s=60.0, lockout_s=120.0)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def throttle(clock: Clock) -> LoginThrottle:
    return LoginThrottle(LIMITS, clock)


def fail(throttle: LoginThrottle, user: str, client: str = "10.0.0.1") -> list[Counted]:
    admitted = throttle.admit(user, client)
    assert isinstance(admitted, Admitted), admitted
    return [lockout.counted for lockout in throttle.settle(admitted, succeeded=False)]


def test_a_user_is_locked_after_its_failures_until_the_lockout_ends(
    throttle: LoginThrottle, clock: Clock
) -> None:
    assert [fail(throttle, "sam") for _ in range(3)] == [[], [], [Counted.USER]]
    refused = throttle.admit("sam", "10.0.0.2")
    assert refused == Refused(Counted.USER, "sam", 120.0)
    assert isinstance(throttle.admit("kim", "10.0.0.1"), Admitted), "other users log in"
    clock.now += 119.0
    assert throttle.admit("sam", "10.0.0.2") == Refused(Counted.USER, "sam", 1.0)
    clock.now += 1.0
    assert isinstance(throttle.admit("sam", "10.0.0.2"), Admitted)


def test_failures_older_than_the_window_no_longer_count(
    throttle: LoginThrottle, clock: Clock
) -> None:
    fail(throttle, "sam")
    fail(throttle, "sam")
    clock.now += 60.0
    assert fail(throttle, "sam") == [] and fail(throttle, "sam") == []
    assert fail(throttle, "sam") == [Counted.USER]


def test_a_success_clears_the_user_s_failures(throttle: LoginThrottle) -> None:
    fail(throttle, "sam")
    fail(throttle, "sam")
    admitted = throttle.admit("sam", "10.0.0.1")
    assert isinstance(admitted, Admitted)
    assert throttle.settle(admitted, succeeded=True) == []
    assert fail(throttle, "sam") == [] and fail(throttle, "sam") == []


def test_a_client_is_locked_after_failures_for_any_users(throttle: LoginThrottle) -> None:
    found = [fail(throttle, f"guess{n}") for n in range(5)]
    assert found == [[], [], [], [], [Counted.CLIENT]]
    refused = throttle.admit("sam", "10.0.0.1")
    assert isinstance(refused, Refused) and refused.counted is Counted.CLIENT
    assert "client '10.0.0.1': try again in 120 s" in refused.message()
    assert isinstance(throttle.admit("sam", "10.0.0.9"), Admitted), "other clients log in"


def test_logins_still_being_checked_count_against_the_limit(throttle: LoginThrottle) -> None:
    """A burst of parallel guesses: the fourth waits for the first three's answers."""
    burst = [throttle.admit("sam", f"10.0.1.{n}") for n in range(3)]
    assert all(isinstance(admitted, Admitted) for admitted in burst)
    assert throttle.admit("sam", "10.0.1.9") == Refused(Counted.USER, "sam", IN_FLIGHT_WAIT_S)
    first = burst[0]
    assert isinstance(first, Admitted)
    throttle.settle(first, succeeded=True)
    assert isinstance(throttle.admit("sam", "10.0.1.9"), Admitted)


def test_logins_recalled_from_before_a_restart_hold_their_lockout_and_window(
    throttle: LoginThrottle,
) -> None:
    """A starting pit counts again the logins its audit kept (ages in seconds, oldest first):
    sam locked 30 s ago stays locked for the rest of the 120 s; kim's failure before her
    success is cleared, her failure after it still counts; lee's aged out of the window."""
    throttle.recall(
        [
            PastLogin(age_s=70.0, user="lee", client="10.0.0.3", succeeded=False),
            PastLogin(age_s=50.0, user="sam", client="10.0.0.1", succeeded=False),
            PastLogin(age_s=40.0, user="kim", client="10.0.0.2", succeeded=False),
            PastLogin(age_s=40.0, user="sam", client="10.0.0.1", succeeded=False),
            PastLogin(age_s=35.0, user="kim", client="10.0.0.2", succeeded=True),
            PastLogin(age_s=30.0, user="sam", client="10.0.0.1", succeeded=False),
            PastLogin(age_s=20.0, user="kim", client="10.0.0.2", succeeded=False),
        ]
    )
    assert throttle.admit("sam", "10.0.0.9") == Refused(Counted.USER, "sam", 90.0)
    assert fail(throttle, "kim", "10.0.0.2") == [] and fail(throttle, "kim", "10.0.0.2") == [
        Counted.USER
    ]
    assert [fail(throttle, "lee", "10.0.0.3") for _ in range(3)] == [[], [], [Counted.USER]]
