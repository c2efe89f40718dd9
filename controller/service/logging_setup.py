"""Logging for the controller: one structlog processor chain for every logger.

The same chain renders structlog's own loggers and the standard-library ones
(transitions, the drivers, pyserial) through ProcessorFormatter, so every
line looks alike: readable console lines on a terminal, one JSON object per
line otherwise (journald, files, log shippers). The session binds table,
shoe and round into structlog's context variables, so every line written
while it handles an event says where at the table it happened.

The CLI imports this module inside its commands only: structlog is slow to
import, and `shoectl --help` must stay fast.
"""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING, TextIO

import structlog

if TYPE_CHECKING:
    # For the annotation only: the procedure's facts (~20 ms) are no part of the start-up of
    # the commands that only log (floor ingest, uplink).
    from cardshoe.controller.procedure.facts import TableEvent

_SHARED_PROCESSORS: list[structlog.typing.Processor] = [
    structlog.contextvars.merge_contextvars,
    structlog.stdlib.add_logger_name,
    structlog.stdlib.add_log_level,
    structlog.stdlib.PositionalArgumentsFormatter(),
    structlog.processors.TimeStamper(fmt="iso", utc=True),
    structlog.processors.StackInfoRenderer(),
]

SESSION_LOGGER = "cardshoe.controller.service.session"
"""The table session's logger, whichever of its modules (session.py, input_path.py,
session_start.py, storage_care.py) writes the line: one name, so a filter on it keeps
every line of the session."""

QUIET_LOGGERS = {"transitions": logging.WARNING}
"""transitions logs every state change at INFO; the journal already holds them."""


def configure_logging(
    *, json_lines: bool | None = None, level: int = logging.INFO, stream: TextIO | None = None
) -> None:
    """Route all logging through structlog; JSON lines unless stream is a terminal.

    Console lines asked for on a pipe or a file come without colour codes.
    """
    stream = stream or sys.stderr
    if json_lines is None:
        json_lines = not stream.isatty()
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer()
        if json_lines
        else structlog.dev.ConsoleRenderer(colors=stream.isatty())
    )
    structlog.configure(
        processors=[*_SHARED_PROCESSORS, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(stream)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=_SHARED_PROCESSORS,
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info if json_lines else _keep,
                renderer,
            ],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for name, quiet_level in QUIET_LOGGERS.items():
        logging.getLogger(name).setLevel(quiet_level)


def _keep(
    logger: object, method: str, event_dict: structlog.typing.EventDict
) -> structlog.typing.EventDict:
    """The console renderer formats exceptions itself."""
    return event_dict


class LogObserver:
    """Writes every table event to the log: the fact's kind and its journal payload."""

    def __init__(self) -> None:
        self._log = structlog.get_logger("cardshoe.table")

    def notify(self, event: TableEvent) -> None:
        self._log.info(event.KIND, **event.payload())
