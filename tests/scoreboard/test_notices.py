"""The words the display screen shows for holds, alarms and void rounds: every code the
procedure can record has its own, in English and Chinese, and none shows a code."""

from __future__ import annotations

import re

import pytest

from cardshoe.controller.procedure.corrections import VoidReason
from cardshoe.controller.procedure.facts import WATCHER_ALARMS, AlarmKind
from cardshoe.controller.procedure.holds import HoldReason, fault_hold
from cardshoe.controller.procedure.irregularities import IRREGULARITIES, Consequence, Irregularity
from cardshoe.controller.scoreboard.notices import UNNAMED, Notice, NoticeKind, notice
from cardshoe.drivers.api.events import FaultKind

HAN = re.compile(r"[\u4e00-\u9fff]")
CODE_LIKE = re.compile(r"[a-z]+[._][a-z]+")

CODES = [
    *((NoticeKind.HOLD, str(reason)) for reason in HoldReason),
    *((NoticeKind.HOLD, fault_hold(kind)) for kind in FaultKind),
    *((NoticeKind.ALARM, str(kind)) for kind in AlarmKind if kind not in WATCHER_ALARMS),
    *((NoticeKind.VOID, str(reason)) for reason in VoidReason),
    *(
        (NoticeKind.VOID, str(code))
        for code, rule in IRREGULARITIES.items()
        if rule.consequence is Consequence.VOID_ROUND
    ),
    (NoticeKind.VOID, str(Irregularity.INSUFFICIENT_CARDS)),
    (NoticeKind.VOID, "shoe_closed"),
    (NoticeKind.VOID, str(AlarmKind.SHOE_ABANDONED)),
    (NoticeKind.VOID, str(HoldReason.SEQUENCE_GAP)),
]


def assert_readable(shown: Notice, code: str) -> None:
    for words in (shown.what, shown.todo):
        assert words.en and not HAN.search(words.en), words
        assert HAN.search(words.zh), words
        for text in (words.en, words.zh):
            assert code not in text and not CODE_LIKE.search(text), text


@pytest.mark.parametrize(("kind", "code"), CODES)
def test_every_recorded_code_has_its_own_words(kind: NoticeKind, code: str) -> None:
    shown = notice(kind, code)
    assert shown != UNNAMED[kind], f"{kind} {code} has no words of its own"
    assert_readable(shown, code)


def test_a_void_says_the_bets_are_returned_and_an_unknown_code_is_never_shown() -> None:
    assert "bets" in notice(NoticeKind.VOID, "foreign_card").todo.en
    for kind in NoticeKind:
        shown = notice(kind, "some_new.code")
        assert shown == UNNAMED[kind]
        assert_readable(shown, "some_new.code")
