"""Inbox: paho's thread hands messages to ingest's loop through it, within a byte budget."""

from __future__ import annotations

import threading
import time

from cardshoe.controller.floor.inbox import Inbox


def put_in_thread(inbox: Inbox[str], item: str, size: int) -> tuple[threading.Thread, list[bool]]:
    result: list[bool] = []
    thread = threading.Thread(target=lambda: result.append(inbox.put(item, size)), daemon=True)
    thread.start()
    return thread, result


def test_items_come_out_in_the_order_they_went_in() -> None:
    inbox: Inbox[str] = Inbox(100)
    for item in "abc":
        assert inbox.put(item, 10)
    assert (len(inbox), inbox.held_bytes) == (3, 30)
    assert [inbox.get_nowait(), inbox.get(timeout=0), inbox.get_nowait()] == ["a", "b", "c"]
    assert inbox.get_nowait() is None
    assert inbox.held_bytes == 0


def test_a_put_that_would_pass_the_budget_waits_until_an_item_is_taken() -> None:
    inbox: Inbox[str] = Inbox(100)
    assert inbox.put("first", 60)
    thread, result = put_in_thread(inbox, "second", 60)
    thread.join(0.3)
    assert thread.is_alive() and result == [] and len(inbox) == 1
    assert inbox.get(timeout=1) == "first"
    thread.join(5)
    assert result == [True]
    assert inbox.get_nowait() == "second"


def test_an_item_larger_than_the_budget_goes_in_alone() -> None:
    inbox: Inbox[str] = Inbox(100)
    assert inbox.put("large", 500)
    thread, result = put_in_thread(inbox, "small", 1)
    thread.join(0.3)
    assert thread.is_alive(), "nothing may join an inbox already past its budget"
    assert inbox.get(timeout=1) == "large"
    thread.join(5)
    assert result == [True]


def test_close_lets_a_waiting_put_go_without_its_item_and_refuses_later_ones() -> None:
    inbox: Inbox[str] = Inbox(10)
    assert inbox.put("held", 10)
    thread, result = put_in_thread(inbox, "waiting", 10)
    thread.join(0.2)
    inbox.close()
    thread.join(5)
    assert result == [False]
    assert not inbox.put("late", 1)
    assert inbox.get_nowait() == "held"
    assert inbox.get(timeout=5) is None


def test_get_waits_for_an_item_up_to_its_timeout() -> None:
    inbox: Inbox[str] = Inbox(10)
    started = time.monotonic()
    assert inbox.get(timeout=0.2) is None
    assert time.monotonic() - started >= 0.2
    threading.Timer(0.1, lambda: inbox.put("late", 1)).start()
    assert inbox.get(timeout=5) == "late"
