"""structlog setup: one format for structlog and stdlib loggers, context bound per table."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest
import structlog
from structlog.testing import capture_logs

from cardshoe.controller.procedure.facts import Alarm, AlarmKind
from cardshoe.controller.service.logging_setup import LogObserver, configure_logging


@pytest.fixture
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    structlog.reset_defaults()
    structlog.contextvars.clear_contextvars()


def test_json_lines_carry_the_bound_context_for_structlog_and_stdlib_loggers(
    restore_logging: None,
) -> None:
    stream = io.StringIO()
    configure_logging(json_lines=True, stream=stream)
    with structlog.contextvars.bound_contextvars(table_id="T1", shoe_id="S1", round_no=4):
        structlog.get_logger("cardshoe.session").info("card taken", seq=7)
        logging.getLogger("cardshoe.drivers.link").warning("link lost: %s", "EIO")
        logging.getLogger("transitions.core").info("state changed")
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [line["event"] for line in lines] == ["card taken", "link lost: EIO"]
    for line in lines:
        assert (line["table_id"], line["shoe_id"], line["round_no"]) == ("T1", "S1", 4)
        assert {"timestamp", "level", "logger"} <= set(line)
    assert lines[0]["seq"] == 7


def test_a_terminal_gets_console_lines(restore_logging: None) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    configure_logging(stream=stream)
    structlog.get_logger("cardshoe.session").info("shoe started", shoe_id="S9")
    text = stream.getvalue()
    assert "shoe started" in text and "S9" in text
    with pytest.raises(json.JSONDecodeError):
        json.loads(text.splitlines()[0])


def test_the_log_observer_writes_each_table_event_with_its_payload() -> None:
    with capture_logs() as logs:
        LogObserver().notify(Alarm(AlarmKind.TAMPER, "duplicate_card: AS#00BC614E/3"))
    assert logs == [
        {
            "event": "alarm",
            "kind": "tamper",
            "detail": "duplicate_card: AS#00BC614E/3",
            "log_level": "info",
        }
    ]
