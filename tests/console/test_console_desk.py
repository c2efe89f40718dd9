"""The console's PIN rules, with a hand-turned clock: three wrong PINs lock a name for a
minute, a locked name is refused even with its PIN, an idle person is signed out."""

from __future__ import annotations

import pytest

from cardshoe.controller.errors import UserError
from cardshoe.controller.service.console_desk import LOCK_S, ConsoleDesk, PinOutcome
from cardshoe.controller.service.pins import PinRole, ScryptCost, check_pin, make_entry

CHEAP = ScryptCost(n=2**10)
"""A cheaper cost than the table's, only so these rules test quickly."""


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_checks_recalled_from_an_earlier_run_count_as_they_did_then() -> None:
    """A lockout begun 30 s before a restart has 30 s to run; one begun 61 s before is over,
    and so are its wrong PINs; a wrong PIN with no lockout still counts."""
    clock = Clock()
    desk = ConsoleDesk(idle_s=300, clock=clock)
    people = {name: make_entry(PinRole.DEALER, "2468", CHEAP) for name in ("ann", "bob", "cat")}
    desk.recall("ann", PinOutcome.NOW_LOCKED, clock.now - 30)
    desk.recall("bob", PinOutcome.NOW_LOCKED, clock.now - LOCK_S - 1)
    desk.recall("cat", PinOutcome.WRONG, clock.now - 500)
    desk.recall("cat", PinOutcome.WRONG, clock.now - 400)
    ann = desk.check_pin(people, "ann", "2468", "console-sign-in")
    assert ann.outcome is PinOutcome.LOCKED and ann.locked_for_s == 30
    assert desk.check_pin(people, "bob", "1111", "console-sign-in").outcome is PinOutcome.WRONG
    assert desk.check_pin(people, "cat", "1111", "console-sign-in").outcome is (
        PinOutcome.NOW_LOCKED
    )


def test_three_wrong_pins_lock_the_name_for_a_minute_even_against_the_right_pin() -> None:
    clock = Clock()
    desk = ConsoleDesk(idle_s=300, clock=clock)
    people = {"ann": make_entry(PinRole.DEALER, "2468", CHEAP)}
    outcomes = [desk.check_pin(people, "ann", "1111", "console-sign-in").outcome for _ in range(3)]
    assert outcomes == [PinOutcome.WRONG, PinOutcome.WRONG, PinOutcome.NOW_LOCKED]
    clock.now += LOCK_S - 1
    locked = desk.check_pin(people, "ann", "2468", "console-sign-in")
    assert locked.outcome is PinOutcome.LOCKED
    assert str(locked.refusal()) == (
        "ann is locked after 3 wrong PINs: try again in 1 s, or ask a supervisor"
    )
    assert locked.payload() == {
        "name": "ann",
        "outcome": "locked",
        "purpose": "console-sign-in",
        "locked_for_s": 1.0,
    }
    clock.now += 1
    accepted = desk.check_pin(people, "ann", "2468", "console-sign-in")
    assert (accepted.outcome, accepted.role) == (PinOutcome.ACCEPTED, PinRole.DEALER)


def test_an_unknown_name_reads_like_a_wrong_pin_and_locks_like_one() -> None:
    desk = ConsoleDesk(idle_s=300, clock=Clock())
    people = {"ann": make_entry(PinRole.DEALER, "2468", CHEAP)}
    first = desk.check_pin(people, "zed", "2468", "console-sign-in")
    assert first.outcome is PinOutcome.UNKNOWN_NAME
    assert str(first.refusal()) == str(
        desk.check_pin(people, "ann", "0000", "console-sign-in").refusal()
    ).replace("ann", "zed")
    desk.check_pin(people, "zed", "2468", "console-sign-in")
    assert desk.check_pin(people, "zed", "2468", "x").outcome is PinOutcome.NOW_LOCKED


def test_a_person_idle_for_the_tables_time_is_signed_out_and_a_press_keeps_them_in() -> None:
    clock = Clock()
    desk = ConsoleDesk(idle_s=120, clock=clock)
    token = desk.sign_in("ann", PinRole.DEALER)
    clock.now += 100
    assert desk.who(token).name == "ann"  # a press
    clock.now += 100
    assert desk.expired() == []
    clock.now += 20
    assert [person.name for person in desk.expired()] == ["ann"]
    with pytest.raises(UserError, match="nobody is signed in at the console"):
        desk.who(token)


def test_signing_in_again_ends_the_earlier_sign_in_of_the_same_person() -> None:
    desk = ConsoleDesk(idle_s=120, clock=Clock())
    first = desk.sign_in("ann", PinRole.DEALER)
    second = desk.sign_in("ann", PinRole.DEALER)
    assert desk.who(second).name == "ann"
    with pytest.raises(UserError):
        desk.who(first)


@pytest.mark.parametrize("pin", ["123", "12 34", "1234\n", "x" * 65])
def test_a_pin_too_short_too_long_or_with_spaces_is_refused_in_one_line(pin: str) -> None:
    with pytest.raises(UserError, match="a PIN is 4-64 characters without spaces"):
        check_pin(pin)


def test_the_file_keeps_a_salted_hash_never_the_pin() -> None:
    one, two = make_entry(PinRole.DEALER, "2468", CHEAP), make_entry(PinRole.DEALER, "2468", CHEAP)
    assert one.hash != two.hash, "each PIN has its own salt"
    assert list(vars(one)) == ["role", "hash"] and one.hash.startswith("scrypt$"), "no PIN kept"
    assert one.matches("2468") and not one.matches("2469")
